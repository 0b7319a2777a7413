"""Run a command as a child process and measure its wall time and peak resident memory."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Measured", "measure_child"]


@dataclass(frozen=True)
class Measured:
    """A child's wall time (s), its peak resident set (MiB, ``ru_maxrss``) and exit status.

    ``cpu_seconds`` (user + system) tells a slow machine from slow code: on a machine shared
    with other work the wall time grows, the processor time hardly does.
    """

    seconds: float
    peak_mib: float
    returncode: int
    stderr: str
    cpu_seconds: float = 0.0


def measure_child(command: Sequence[str], *, env: dict[str, str] | None = None) -> Measured:
    """Run ``command``; its own rusage (``wait4``), not the sum over every child so far."""
    started = time.perf_counter()
    process = subprocess.Popen(
        list(command),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stderr is not None
    stderr = process.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stderr.close()
    # Linux reports ru_maxrss in KiB.
    cpu = usage.ru_utime + usage.ru_stime
    return Measured(seconds, usage.ru_maxrss / 1024, process.returncode, stderr, cpu)
