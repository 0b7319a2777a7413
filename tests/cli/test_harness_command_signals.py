"""A command stage's wait for its program is interrupted by a signal whichever thread gets it.

The kernel may hand a process-directed Ctrl-C or SIGTERM to any thread; Python runs the handler
on the main thread, and only once that thread runs Python code again. A signal sent here to a
helper thread, while the main thread waits for a program that sleeps, must still stop the wait
within a moment, and the program's process group must be killed.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from groundkit.harness import CommandRetriever, StageFailed
from groundkit.harness.retrievers._external import run_command

MARGIN = 3.0


def _in_communicate() -> bool:
    main = threading.main_thread().ident
    assert main is not None
    frame = sys._current_frames().get(main)
    while frame is not None:
        if frame.f_code.co_name in {"_communicate", "communicate"}:
            return True
        frame = frame.f_back
    return False


def test_a_signal_on_another_thread_interrupts_a_command_stage(tmp_path: Path) -> None:
    started = tmp_path / "started"
    code = (
        f"import os, pathlib, time; pathlib.Path({str(started)!r}).write_text(str(os.getpid()));"
        " time.sleep(60)"
    )
    config = CommandRetriever(argv=[sys.executable, "-c", code], timeout=30)

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    def send() -> None:  # from this thread to this thread: not the main one
        for _ in range(1000):
            if started.exists() and _in_communicate():
                break
            time.sleep(0.01)
        time.sleep(0.1)  # into the selector's wait
        signal.pthread_kill(threading.get_ident(), signal.SIGALRM)

    previous = signal.signal(signal.SIGALRM, handler)
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_command(config, stage="cmd", queries=[("q1", "a query")], known_queries={})
        took = time.monotonic() - start
    finally:
        signal.signal(signal.SIGALRM, previous)
        sender.join(10)
    assert took < MARGIN
    with pytest.raises(ProcessLookupError):  # the program was killed and reaped
        os.kill(int(started.read_text()), 0)


def test_a_command_past_its_timeout_still_fails_the_stage(tmp_path: Path) -> None:
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    config = CommandRetriever(argv=sleeper, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(StageFailed, match=r"timed out after 0\.5 s"):
        run_command(config, stage="cmd", queries=[("q1", "a query")], known_queries={})
    took = time.monotonic() - start
    assert 0.5 <= took < 0.5 + MARGIN
