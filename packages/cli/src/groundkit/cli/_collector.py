"""The cyclic garbage collector, held mostly idle while a command reads one whole report."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG_OBJECTS", "few_collections"]

YOUNG_OBJECTS = 50_000
"""Allocations between two collections of the youngest generation in :func:`few_collections`."""


@contextmanager
def few_collections() -> Iterator[None]:
    """Run a command that reads one report with the cyclic collector mostly idle.

    A report is hundreds of thousands of objects (its hits, scores and traces), alive until the
    command ends and none of them garbage; at the interpreter's default threshold (a
    collection every 700 allocations) the collector walks them again and again while the
    command validates the report and builds its page: a tenth of ``grk eval report`` and
    ``grk eval export`` on SciFact. Reference counting frees everything as before; only a
    cycle waits longer, for the next of fewer collections. The threshold is restored on the
    way out, so a caller that runs the command in its own process keeps its setting.
    """
    previous = gc.get_threshold()
    gc.set_threshold(max(previous[0], YOUNG_OBJECTS), *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)
