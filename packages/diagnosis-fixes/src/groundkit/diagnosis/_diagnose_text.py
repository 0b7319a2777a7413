"""What diagnosis prints and the thresholds its buckets use."""

from __future__ import annotations

__all__ = ["POOL_FACTOR", "SPLIT_SHARE", "shorten"]


SPLIT_SHARE = 0.5
"""A quote is split when no chunk holds at least this share of its span."""

POOL_FACTOR = 5
"""``ranked just below the cutoff`` covers ranks ``(k, POOL_FACTOR * k]``."""

_QUOTE_WIDTH = 80
_OVERLAP_NOTE = (
    "gains overlap and are never summed: finding one bucket's misses changes what the others "
    "could add"
)


def shorten(text: str, width: int = _QUOTE_WIDTH) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``width`` characters with ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"
