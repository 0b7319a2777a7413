"""The defaults and bounds of the report's statistics settings, as plain constants.

:class:`~groundkit.judgments.report.BootstrapSettings` takes its defaults from here, and so do
the command-line flags that show them (``grk eval run --help``), which must not load the
models to read them: one place for each value, and no pydantic behind it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_MULTIPLICITY", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "MAX_RESAMPLES"]

MAX_RESAMPLES: Final = 1_000_000
"""Most bootstrap resamples a run or a report accepts: more only costs memory and time (2e9
needs 16 GB), so a larger count in a config or an edited report is refused."""

DEFAULT_RESAMPLES: Final = 2_000
"""Random sign patterns (and bootstrap resamples) where a test cannot be enumerated exactly."""

DEFAULT_SEED: Final = 0
"""Seed of every random step."""

DEFAULT_MULTIPLICITY: Final = "holm"
"""Family-wise control over every stage × headline metric (``holm`` or ``bh``)."""
