"""Deadlines for user code: call_with_deadline, UserCodeThread, callable_judge(timeout=...).

A hanging function here waits on an event that the test sets at teardown (no thread outlives
the test by more than a moment). Times are asserted with generous margins: a deadline of
0.2 s must have passed, and the call must have stopped within 2 s of it.
"""

from __future__ import annotations

import math
import signal
import sqlite3
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from groundkit.evalset import EvalSetError, RelevanceJudge, callable_judge
from groundkit.evalset.judge import (
    CallAbandonedError,
    CallTimeoutError,
    JudgeCallError,
    JudgeRequest,
    JudgingFailedError,
    UserCodeThread,
    call_with_deadline,
)

MARGIN = 2.0


class Hang:
    """A function that blocks until released, counting its calls and their threads."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)
        self.calls = 0
        self.threads: list[int] = []
        self._lock = threading.Lock()

    def __call__(self, *args: object) -> int:
        with self._lock:
            self.calls += 1
            self.threads.append(threading.get_ident())
        self.entered.release()
        self.release.wait(60)
        return 1


@pytest.fixture
def hang() -> Iterator[Hang]:
    function = Hang()
    yield function
    function.release.set()


def _alarm(after: float, error: type[BaseException]) -> Callable[[], None]:
    """Raise ``error`` in the main thread after ``after`` s, as a signal handler would."""

    def handler(signum: int, frame: object) -> None:
        raise error()

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, after)

    def restore() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    return restore


# --- call_with_deadline ------------------------------------------------------------------------


def test_a_call_returns_its_value_from_another_thread() -> None:
    caller = threading.get_ident()
    value, thread = call_with_deadline(
        lambda x: (x * 2, threading.get_ident()), 21, timeout=5.0, what="f"
    )
    assert value == 42
    assert thread != caller


def test_a_call_past_its_deadline_raises_and_is_abandoned(hang: Hang) -> None:
    start = time.monotonic()
    with pytest.raises(
        CallTimeoutError, match=r"the function did not finish within 0\.2 s"
    ) as info:
        call_with_deadline(hang, timeout=0.2, what="the function")
    took = time.monotonic() - start
    assert 0.2 <= took < 0.2 + MARGIN
    assert (info.value.what, info.value.seconds) == ("the function", 0.2)
    assert not isinstance(info.value, OSError)  # the CLI reads an OSError as a refused file
    assert hang.calls == 1  # abandoned, not retried; it still runs until released
    assert hang.entered.acquire(timeout=0)


class _BoomError(Exception):
    pass


def _raises_boom() -> None:
    raise _BoomError("from user code")


@pytest.mark.parametrize(
    ("function", "kind"),
    [
        (_raises_boom, _BoomError),
        (lambda: exec("raise SystemExit(3)"), SystemExit),
        (lambda: exec("raise KeyboardInterrupt"), KeyboardInterrupt),
    ],
    ids=["exception", "sys.exit", "keyboard-interrupt"],
)
def test_what_the_call_raises_is_raised_unchanged(
    function: Callable[[], None], kind: type[BaseException]
) -> None:
    with pytest.raises(kind) as info:
        call_with_deadline(function, timeout=5.0, what="f")
    if kind is SystemExit:
        assert info.value.code == 3  # type: ignore[attr-defined]
    if kind is _BoomError:
        frames = traceback.extract_tb(info.value.__traceback__)
        assert "_raises_boom" in [frame.name for frame in frames]  # the user's frames kept


def test_a_cancel_event_stops_the_wait(hang: Hang) -> None:
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(CallAbandonedError, match="f was abandoned"):
        call_with_deadline(hang, timeout=None, what="f", cancel=cancel)
    assert time.monotonic() - start < 0.2 + MARGIN


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_a_signal_handler_exception_interrupts_the_wait(hang: Hang, timeout: float | None) -> None:
    restore = _alarm(0.2, KeyboardInterrupt)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            call_with_deadline(hang, timeout=timeout, what="f")
    finally:
        restore()
    assert time.monotonic() - start < 0.2 + MARGIN
    assert hang.calls == 1


# --- UserCodeThread -----------------------------------------------------------------------------


def test_consecutive_calls_run_on_the_same_thread(tmp_path: Path) -> None:
    worker = UserCodeThread("groundkit-test-affinity")
    # SQLite refuses a connection used on another thread than its own: the state a factory
    # makes must be usable by every later call.
    connection = worker.call(sqlite3.connect, str(tmp_path / "db"), timeout=5.0, what="connect")
    threads = {worker.call(threading.get_ident, timeout=5.0, what="ident") for _ in range(5)}
    assert len(threads) == 1
    assert threads != {threading.get_ident()}
    (answer,) = worker.call(
        lambda: connection.execute("select 7").fetchone(), timeout=5.0, what="q"
    )
    assert answer == 7
    with pytest.raises(sqlite3.ProgrammingError):  # the same connection here: refused
        connection.execute("select 1")
    worker.call(connection.close, timeout=5.0, what="close")
    worker.close()


def test_after_a_timeout_the_next_call_gets_a_fresh_thread(hang: Hang) -> None:
    worker = UserCodeThread("groundkit-test-fresh")
    first = worker.call(threading.get_ident, timeout=5.0, what="ident")
    with pytest.raises(CallTimeoutError):
        worker.call(hang, timeout=0.2, what="hang")
    assert hang.threads == [first]  # the hanging call ran on the stage's thread
    second = worker.call(threading.get_ident, timeout=5.0, what="ident")
    assert second != first  # the old thread is the abandoned call's
    assert worker.call(threading.get_ident, timeout=5.0, what="ident") == second
    worker.close()


def test_an_interrupted_call_leaves_the_worker_usable(hang: Hang) -> None:
    worker = UserCodeThread("groundkit-test-interrupt")
    restore = _alarm(0.2, KeyboardInterrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            worker.call(hang, timeout=None, what="hang")
    finally:
        restore()
    assert worker.call(lambda: "ok", timeout=5.0, what="ok") == "ok"
    worker.close()


def test_exceptions_pass_through_and_keep_the_thread() -> None:
    worker = UserCodeThread("groundkit-test-raise")
    first = worker.call(threading.get_ident, timeout=5.0, what="ident")
    with pytest.raises(_BoomError):
        worker.call(_raises_boom, timeout=5.0, what="boom")
    with pytest.raises(SystemExit):
        worker.call(lambda: exec("raise SystemExit(1)"), timeout=5.0, what="exit")
    assert worker.call(threading.get_ident, timeout=5.0, what="ident") == first
    worker.close()


def _named(name: str) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == name]


def test_close_ends_the_idle_thread() -> None:
    worker = UserCodeThread("groundkit-test-close")
    worker.call(lambda: None, timeout=5.0, what="nothing")
    (thread,) = _named("groundkit-test-close")
    assert thread.daemon
    worker.close()
    thread.join(MARGIN)
    assert not thread.is_alive()


# --- callable_judge(timeout=...) ----------------------------------------------------------------


def _request(query: str = "q") -> JudgeRequest:
    return JudgeRequest(query, "p", "prompt", 0)


@pytest.mark.parametrize("timeout", [0.0, -1.0, math.nan, math.inf])
def test_the_judge_timeout_must_be_positive_seconds(timeout: float) -> None:
    with pytest.raises(EvalSetError, match="timeout must be positive seconds"):
        callable_judge(lambda q, p: 2, timeout=timeout)


def test_a_judge_call_past_its_timeout_fails_that_call(hang: Hang) -> None:
    client = callable_judge(hang, timeout=0.2)
    start = time.monotonic()
    with pytest.raises(JudgeCallError, match=r"judge function timed out after 0\.2 s"):
        client(_request())
    assert time.monotonic() - start < 0.2 + MARGIN
    quick = callable_judge(lambda q, p: (3, "yes"), timeout=5.0)
    assert '"grade": 3' in str(quick(_request()))


def test_timed_out_calls_are_listed_and_the_run_fails_without_decisions(
    hang: Hang, tmp_path: Path
) -> None:
    judge = RelevanceJudge(
        callable_judge(hang, timeout=0.2), model="f", cache=tmp_path / "c.jsonl", concurrency=4
    )
    start = time.monotonic()
    with pytest.raises(JudgingFailedError, match=r"decided 0 of 2 pairs.*timed out after 0\.2 s"):
        judge.judge([("q1", "p"), ("q2", "p")])
    assert time.monotonic() - start < 0.2 * 2 + MARGIN  # 6 calls, 4 at a time: two rounds
    assert hang.calls == 6  # 2 pairs x 3 repeats, each started once

    tolerant = RelevanceJudge(
        callable_judge(hang, timeout=0.2), model="g", cache=tmp_path / "d.jsonl", min_decided=0
    )
    run = tolerant.judge([("q1", "p")])
    assert run.usage.failed == 3
    assert run.verdicts[0].majority is None
    assert run.verdicts[0].failures == ["judge function timed out after 0.2 s"] * 3


def test_sys_exit_in_a_judge_function_fails_the_call_only(tmp_path: Path) -> None:
    def leaves(query: str, passage: str) -> Any:
        raise SystemExit(4)

    with pytest.raises(JudgeCallError, match=r"called sys\.exit\(4\)"):
        callable_judge(leaves, timeout=5.0)(_request())


def test_an_interrupted_run_stops_waiting_and_abandons_the_client(
    hang: Hang, tmp_path: Path
) -> None:
    client = callable_judge(hang)  # no timeout: only the interruption ends the wait
    judge = RelevanceJudge(client, model="f", cache=tmp_path / "c.jsonl", concurrency=3)
    restore = _alarm(0.3, KeyboardInterrupt)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            judge.judge([(f"q{i}", "p") for i in range(10)])
    finally:
        restore()
    assert time.monotonic() - start < 0.3 + MARGIN
    assert hang.calls == 3  # the calls in flight; none of the 27 queued ones started
    with pytest.raises(CallAbandonedError):  # abandoned for good: a later call is refused
        client(_request())
    assert hang.calls == 3
    assert not (tmp_path / "c.jsonl").exists() or not (tmp_path / "c.jsonl").read_text().strip()


def _until_the_main_thread_waits_for_futures() -> None:
    """Return once the main thread is in ``concurrent.futures.wait`` (at most 10 s)."""
    main = threading.main_thread().ident
    assert main is not None
    for _ in range(1000):
        frame = sys._current_frames().get(main)
        while frame is not None:
            code = frame.f_code
            if code.co_name == "wait" and "concurrent" in Path(code.co_filename).parts:
                time.sleep(0.05)  # from there into the lock's acquire
                return
            frame = frame.f_back
        time.sleep(0.01)


class _SignalFromWorker(Hang):
    """A hanging function whose first call sends SIGALRM to its own thread, not the main one.

    The kernel may hand a Ctrl-C or SIGTERM to any thread of the process; Python's handler then
    runs on the main thread only when that thread next runs Python code.
    """

    def __call__(self, *args: object) -> int:
        with self._lock:
            first = self.calls == 0
        if first:
            _until_the_main_thread_waits_for_futures()
            signal.pthread_kill(threading.get_ident(), signal.SIGALRM)
        return super().__call__(*args)


def test_a_signal_delivered_to_a_worker_thread_still_interrupts_the_run(tmp_path: Path) -> None:
    hang = _SignalFromWorker()

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, handler)
    judge = RelevanceJudge(callable_judge(hang), model="f", cache=tmp_path / "c.jsonl")
    bound = threading.Timer(10, hang.release.set)  # a run that waits for its calls ends
    bound.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            judge.judge([(f"q{i}", "p") for i in range(4)])
        took = time.monotonic() - start
    finally:
        bound.cancel()
        hang.release.set()
        signal.signal(signal.SIGALRM, previous)
    assert took < MARGIN


def test_wait_slices_cover_the_timeout_in_short_waits() -> None:
    from groundkit.evalset.judge import wait_slices
    from groundkit.evalset.judge._deadline import WAIT_SLICE

    start = time.monotonic()
    lengths = []
    for length in wait_slices(0.35):
        assert 0.0 <= length <= WAIT_SLICE
        lengths.append(length)
        time.sleep(length)
    assert time.monotonic() - start >= 0.35  # ends only once the deadline has passed
    assert len(lengths) >= 4
    endless = wait_slices(None)
    assert [next(endless) for _ in range(50)] == [WAIT_SLICE] * 50
