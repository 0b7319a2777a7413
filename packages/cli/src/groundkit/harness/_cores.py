"""The cores this process may run on: the one count every parallel part of a run starts from."""

from __future__ import annotations

import os

__all__ = ["available_cores"]


def available_cores() -> int:
    """The cores this process may run on (``sched_getaffinity`` where present)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS and Windows
        return max(1, os.cpu_count() or 1)
