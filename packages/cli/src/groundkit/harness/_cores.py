"""The cores this process may run on, as every parallel part of a run counts them.

``groundkit.stats``'s one count (the affinity capped by the container's CPU quota, see
:mod:`groundkit.stats.kernels`), so that the bootstrap's threads and the run's workers agree.
"""

from __future__ import annotations

from groundkit.stats.kernels import available_cores

__all__ = ["available_cores"]
