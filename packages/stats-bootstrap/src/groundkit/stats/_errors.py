"""The single error base class of groundkit.stats."""

from __future__ import annotations

__all__ = ["StatsError"]


class StatsError(ValueError):
    """Bad input to a groundkit.stats function.

    Every validation failure in this distribution raises this class (or a subclass) with a
    one-line message that names what is wrong: the argument, the query id or the side.
    """
