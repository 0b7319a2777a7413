"""Per-thread scratch buffers of the resampling kernels, reused across groups, chunks and calls.

A fresh 512 KiB array per gather costs page faults on first touch (measured 2× on a whole
n = 1,000 bootstrap), so each worker thread borrows buffers that outlive it: pool threads
are new on every call, so finished workers hand theirs to the next ones.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

import numpy as np
from numpy.typing import NDArray

__all__ = ["borrowed_scratch", "index_scratch", "scratch"]

# Smallest buffer allocated (a gather group of the kernels, 2**17 lanes).
_MIN_SIZE = (1 << 17) + 1
# Buffers kept for the next worker: up to 2**20 entries (a gather group holds about 2**17;
# a longer buffer is for a rare long row, and is freed with its worker).
_KEEP_SIZE = (1 << 20) + 1

_SCRATCH = threading.local()
_IDLE_SCRATCH: list[dict[str, NDArray[np.generic]]] = []
_IDLE_LOCK = threading.Lock()


@contextmanager
def borrowed_scratch() -> Iterator[None]:
    """Give this thread idle buffers for the duration, and keep them for the next worker."""
    with _IDLE_LOCK:
        _SCRATCH.buffers = _IDLE_SCRATCH.pop() if _IDLE_SCRATCH else {}
    try:
        yield
    finally:
        buffers = _SCRATCH.buffers
        _SCRATCH.buffers = {}
        if all(buffer.size <= _KEEP_SIZE for buffer in buffers.values()):
            with _IDLE_LOCK:
                _IDLE_SCRATCH.append(buffers)


def _buffer(name: str, count: int, dtype: type[np.generic]) -> NDArray[np.generic]:
    """This thread's buffer `name`, at least `count` long."""
    buffers: dict[str, NDArray[np.generic]] | None = getattr(_SCRATCH, "buffers", None)
    if buffers is None:
        buffers = _SCRATCH.buffers = {}
    buffer = buffers.get(name)
    if buffer is None or buffer.size < count:
        buffer = buffers[name] = np.empty(max(count, _MIN_SIZE), dtype=dtype)
    return buffer[:count]


def scratch(count: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """This thread's 64-bit index and float64 value buffers, `count` long."""
    where = cast(NDArray[np.int64], _buffer("where", count, np.int64))
    return where, cast(NDArray[np.float64], _buffer("picked", count, np.float64))


def index_scratch(count: int) -> NDArray[np.int32]:
    """This thread's 32-bit index buffer, `count` long."""
    return cast(NDArray[np.int32], _buffer("indices", count, np.int32))
