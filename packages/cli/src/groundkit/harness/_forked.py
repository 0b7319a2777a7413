"""Work cut into contiguous parts, the parts after the first done by forked worker processes.

Python work that holds the interpreter lock (BM25 analysis, chunking) gains nothing from
threads, so a run cuts such work into contiguous parts: the parent does the first part while
forked workers do the others. A forked child inherits the parent's memory (the texts are not
pickled on the way in) and sends its result back pickled with protocol 5, its arrays as
out-of-band buffers (no copy on either side). A worker that cannot start, dies or misses its
deadline is replaced by the parent doing its part, so the results never depend on the
workers: every caller gets exactly what one process doing the parts in order would get.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["GRACE_SECONDS", "SLACK", "Background", "can_fork", "plan_parts", "run_in_parts"]

T = TypeVar("T")

GRACE_SECONDS = 60.0
"""A worker's part is waited for this long, plus :data:`SLACK` times the parent's own time for
its part for each part; then the worker is killed and its part done in the parent. Parts are
about equal, so a healthy worker ends near the parent's own part even on a machine with fewer
cores than parts; a worker forked from a process whose other threads held a lock it needs can
block forever (fork copies only the calling thread), and the run must not wait for it."""
SLACK = 4.0


def can_fork() -> bool:
    """Whether worker processes can be forked (they inherit the texts instead of a copy).

    Not on macOS, where forking a process that loaded the system frameworks is unsafe (Python
    starts its processes with ``spawn`` there), nor where ``fork`` does not exist (Windows).
    """
    return sys.platform != "darwin" and "fork" in multiprocessing.get_all_start_methods()


def plan_parts(
    lengths: npt.NDArray[np.int64], workers: int, *, min_chars: int, part_chars: int
) -> list[tuple[int, int]]:
    """Contiguous ``(first, last)`` ranges of texts with about as many characters each.

    One range (the whole corpus) when ``workers`` is 1, the texts hold fewer than
    ``min_chars`` characters or worker processes cannot be forked; otherwise at most
    ``workers`` ranges of at least ``part_chars`` characters each, empty ones dropped.

    Args:
        lengths: Characters of each text.
        workers: The most ranges wanted.
        min_chars: Characters from which the texts are split.
        part_chars: The least characters a range is given.
    """
    count = int(lengths.size)
    total = int(lengths.sum())
    parts = min(workers, count, total // max(1, part_chars))
    if parts <= 1 or total < min_chars or not can_fork():
        return [(0, count)]
    ends = np.cumsum(lengths)
    targets = (np.arange(1, parts, dtype=np.float64) * total / parts).astype(np.int64)
    cuts = np.searchsorted(ends, targets, side="left") + 1
    edges = [0, *np.unique(np.clip(cuts, 0, count)).tolist(), count]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def _child(work: Callable[[int, int], object], first: int, last: int, out: Connection) -> None:
    """In a forked worker: do ``work(first, last)`` and send the result to the parent.

    A failure (an error, Ctrl-C) ends the worker at once and quietly: the parent then does the
    part itself, and raises there whatever the work raises.
    """
    try:
        buffers: list[pickle.PickleBuffer] = []
        header = pickle.dumps(work(first, last), protocol=5, buffer_callback=buffers.append)
        out.send((header, len(buffers)))
        for buffer in buffers:
            out.send_bytes(buffer.raw())
        out.close()
    except BaseException:  # reported by the parent doing the part again
        os._exit(1)


def _received(source: Connection) -> object:
    """The result a worker sent (raises ``EOFError`` or ``OSError`` when the worker failed)."""
    header, count = source.recv()
    buffers = [source.recv_bytes() for _ in range(count)]
    return pickle.loads(header, buffers=buffers)  # our own forked child's bytes


_Worker = tuple[BaseProcess | None, Connection | None]


def _start(work: Callable[[int, int], object], first: int, last: int) -> _Worker:
    """A forked worker doing ``work(first, last)``, and its pipe (``None``: not started)."""
    context = multiprocessing.get_context("fork")
    source, sink = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(work, first, last, sink), daemon=True)
    try:
        process.start()
    except (OSError, AssertionError):  # no process left, or a daemonic process's child
        source.close()
        return None, None
    finally:
        sink.close()
    return process, source


def _stop(worker: _Worker, wait: float) -> None:
    """Close the worker's end and wait up to ``wait`` seconds for it, then kill it."""
    process, source = worker
    if source is not None:
        source.close()
    if process is not None:
        process.join(timeout=wait)
        if process.is_alive():
            process.kill()
            process.join()


def run_in_parts(work: Callable[[int, int], T], parts: Sequence[tuple[int, int]]) -> list[T]:
    """``work(first, last)`` for each part, in part order: the first here, the others forked.

    A worker that cannot be started, dies before it sent its result or misses its deadline
    (:data:`GRACE_SECONDS` plus :data:`SLACK` times this process's own part for each part)
    is killed and replaced by doing its part here: the results never depend on the workers.
    On an error or Ctrl-C here, every worker is killed at once.
    """
    workers: list[_Worker] = []
    try:
        workers.extend(_start(work, first, last) for first, last in parts[1:])
        began = time.perf_counter()
        results = [work(*parts[0])]
        own = time.perf_counter() - began
        deadline = time.monotonic() + GRACE_SECONDS + SLACK * own * len(parts)
        for (first, last), worker in zip(parts[1:], workers, strict=True):
            results.append(_collect(work, first, last, worker, deadline))
    except BaseException:
        for worker in workers:
            _stop(worker, 0.0)
        raise
    for worker in workers:
        _stop(worker, 5.0)  # each sent its result (it is ending) or was killed
    return results


def _collect(
    work: Callable[[int, int], T], first: int, last: int, worker: _Worker, deadline: float
) -> T:
    """The result the worker sent by ``deadline`` (monotonic), else (killed) the part done here."""
    source = worker[1]
    if source is not None:
        try:
            if source.poll(max(0.0, deadline - time.monotonic())):
                return _received(source)  # type: ignore[return-value]  # work's own result
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
    _stop(worker, 0.0)
    return work(first, last)


class Background(Generic[T]):
    """One piece of work done by a forked worker while this process goes on with others.

    The work must not depend on what this process does meanwhile (the worker has a copy of
    its memory as it was at the start). :meth:`result` is the work's result, or ``None`` when
    the worker could not start, died or missed its deadline (it is then killed): the caller
    does the work itself, so nothing depends on the worker. :meth:`cancel` kills it.

    Args:
        work: The work (called in the worker).
    """

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._started = time.monotonic()
        self._worker: _Worker | None = _start(self._call, 0, 0)

    def _call(self, first: int, last: int) -> T:
        return self._work()

    def result(self) -> T | None:
        """The worker's result, or ``None``.

        It is waited for :data:`GRACE_SECONDS` plus :data:`SLACK` times the time since it
        started (it has been working all that time).
        """
        worker, self._worker = self._worker, None
        if worker is None or worker[1] is None:
            return None
        now = time.monotonic()
        deadline = now + GRACE_SECONDS + SLACK * (now - self._started)
        got = False
        result: T | None = None
        try:
            if worker[1].poll(max(0.0, deadline - time.monotonic())):
                result, got = _received(worker[1]), True  # type: ignore[assignment]
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
        finally:  # Ctrl-C or SIGTERM while waiting: the worker goes too
            _stop(worker, 5.0 if got else 0.0)  # a worker that sent its result is ending
        return result

    def cancel(self) -> None:
        """Kill the worker if it is still there (its result is not wanted)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            _stop(worker, 0.0)
