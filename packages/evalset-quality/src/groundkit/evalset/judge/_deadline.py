"""Deadlines for user code: a call runs in a daemon thread that the caller can abandon.

The caller waits for the call in short slices, so that on the main thread a signal handler's
exception (Ctrl-C, the CLI's SIGTERM) is raised promptly while the user's code hangs. What the
call raises, ``SystemExit`` and ``KeyboardInterrupt`` included, is raised again in the caller,
with the user's frames kept in its traceback; what it returns is returned.

Python cannot kill a thread: a call that runs past its deadline, or whose caller was
interrupted, is *abandoned*. It may keep running until the process exits (its thread is a
daemon, so it does not keep the process alive), and whatever it returns then is discarded.
"""

from __future__ import annotations

import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

__all__ = [
    "WAIT_SLICE",
    "CallAbandonedError",
    "CallTimeoutError",
    "UserCodeThread",
    "call_with_deadline",
    "wait_slices",
]

T = TypeVar("T")

WAIT_SLICE = 0.1
"""Seconds the caller waits at a time (how late a signal may be handled, at most).

A wait without a timeout is not enough on the main thread: the kernel may deliver a
process-directed signal (Ctrl-C, SIGTERM) to any thread, and then the main thread's blocked
lock acquire is not interrupted, so Python runs the handler only when the wait ends, which for
a hanging call is never. A wait in slices wakes up and runs it within one slice."""


class CallTimeoutError(Exception):
    """A call of user code did not finish within its deadline; it was abandoned.

    Not a ``TimeoutError``: that is an ``OSError``, which the CLI reports as a file the system
    refused, and a ``TimeoutError`` the user's own code raised (a socket's) must stay apart.

    Args:
        what: The call, as a message names it (``"the judge function"``).
        seconds: The deadline it ran past.

    Attributes:
        what: The call.
        seconds: The deadline.
    """

    def __init__(self, what: str, seconds: float) -> None:
        self.what = what
        self.seconds = seconds
        super().__init__(f"{what} did not finish within {seconds:g} s")


class CallAbandonedError(Exception):
    """The caller stopped waiting for a call (its ``cancel`` event was set)."""


class _Job(Generic[T]):
    """One call: run by a worker thread, its outcome read by the caller."""

    __slots__ = ("args", "done", "error", "function", "value")

    def __init__(self, function: Callable[..., T], args: tuple[Any, ...]) -> None:
        self.function = function
        self.args = args
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.function(*self.args)
        except BaseException as error:  # SystemExit and Ctrl-C too: raised in the caller
            self.error = error
        finally:
            self.done.set()

    def outcome(self) -> T:
        error, self.error = self.error, None  # no reference cycle through the traceback
        if error is not None:
            raise error
        return self.value  # type: ignore[return-value]  # None only when T admits it


def wait_slices(timeout: float | None) -> Iterator[float]:
    """The successive waits, :data:`WAIT_SLICE` at most each, of ``timeout`` s (``None``: ever).

    The iteration ends once a slice has ended at or past the deadline: a caller that ran out
    of slices has waited its whole ``timeout``.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = WAIT_SLICE if deadline is None else deadline - time.monotonic()
        yield max(0.0, min(WAIT_SLICE, left))
        if deadline is not None and time.monotonic() >= deadline:
            return


def _wait(
    job: _Job[Any], *, timeout: float | None, what: str, cancel: threading.Event | None
) -> None:
    """Wait for ``job`` in short slices (signals are handled between them).

    Raises:
        CallTimeoutError: ``timeout`` seconds passed first.
        CallAbandonedError: ``cancel`` was set first.
    """
    for length in wait_slices(timeout):
        if job.done.wait(length):
            return
        if cancel is not None and cancel.is_set():
            raise CallAbandonedError(f"{what} was abandoned")
    assert timeout is not None  # only a finite wait runs out of slices
    raise CallTimeoutError(what, timeout)


def call_with_deadline(
    function: Callable[..., T],
    *args: Any,
    timeout: float | None,
    what: str,
    cancel: threading.Event | None = None,
) -> T:
    """``function(*args)`` in a fresh daemon thread, waited for at most ``timeout`` seconds.

    Safe to call from several threads at once (each call has its own thread). A call that
    times out, or whose wait is interrupted (a signal's exception, ``cancel``), is abandoned:
    Python cannot kill a thread, so it may run on until the process exits, and its result is
    discarded.

    Args:
        function: The user's code.
        *args: Its arguments.
        timeout: Seconds to wait (``None``: no limit, but still interruptible).
        what: The call, as the timeout's message names it.
        cancel: When set by another thread, the wait stops.

    Returns:
        What ``function`` returned.

    Raises:
        CallTimeoutError: The call did not finish in time.
        CallAbandonedError: ``cancel`` was set while waiting.
        BaseException: Whatever ``function`` raised (``SystemExit`` included), unchanged.
    """
    job = _Job(function, args)
    threading.Thread(target=job.run, name="groundkit-user-call", daemon=True).start()
    _wait(job, timeout=timeout, what=what, cancel=cancel)
    return job.outcome()


def _serve(jobs: queue.SimpleQueue[_Job[Any] | None]) -> None:
    while (job := jobs.get()) is not None:
        job.run()
        del job  # keep no finished call (or its result) alive while idle


class UserCodeThread:
    """Calls of one user's code, run one after another in one daemon thread, each with a deadline.

    The same thread serves every call (a factory, then each search), so user code that keeps
    thread-bound state (an SQLite connection, a thread-local session) works as when called
    directly. One caller at a time: a call waits for the one before it. After a call is
    abandoned (timed out, or its wait interrupted), its thread is left to it and the next call
    starts a new one; Python cannot kill a thread, so the abandoned call may run on until the
    process exits, and its result is discarded. The idle thread ends when this object is
    garbage or :meth:`close` is called.

    Args:
        name: The worker thread's name (shown by debuggers and ``faulthandler``).
    """

    def __init__(self, name: str = "groundkit-user-code") -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[_Job[Any] | None] | None = None

    def _queue(self) -> queue.SimpleQueue[_Job[Any] | None]:
        if self._jobs is None:
            jobs: queue.SimpleQueue[_Job[Any] | None] = queue.SimpleQueue()
            threading.Thread(target=_serve, args=(jobs,), name=self.name, daemon=True).start()
            weakref.finalize(self, jobs.put, None)
            self._jobs = jobs
        return self._jobs

    def close(self) -> None:
        """Let the worker thread end once its current call (if any) returns."""
        if self._jobs is not None:
            self._jobs.put(None)
            self._jobs = None

    def call(
        self,
        function: Callable[..., T],
        *args: Any,
        timeout: float | None,
        what: str,
        cancel: threading.Event | None = None,
    ) -> T:
        """``function(*args)`` on the worker thread, waited for at most ``timeout`` seconds.

        Args:
            function: The user's code.
            *args: Its arguments.
            timeout: Seconds to wait (``None``: no limit, but still interruptible).
            what: The call, as the timeout's message names it.
            cancel: When set by another thread, the wait stops.

        Returns:
            What ``function`` returned.

        Raises:
            CallTimeoutError: The call did not finish in time (it is abandoned).
            CallAbandonedError: ``cancel`` was set while waiting.
            BaseException: Whatever ``function`` raised (``SystemExit`` included), unchanged.
        """
        job = _Job(function, args)
        self._queue().put(job)
        try:
            _wait(job, timeout=timeout, what=what, cancel=cancel)
        except BaseException:  # timed out or interrupted: the thread is the abandoned call's
            self.close()
            raise
        return job.outcome()
