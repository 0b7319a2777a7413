"""Run a command as a child process and measure its wall time and peak resident memory."""

from __future__ import annotations

import compileall
import importlib.util
import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Measured", "byte_compile_groundkit", "measure_child"]


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


def byte_compile_groundkit() -> str:
    """Byte-compile groundkit's modules, as ``pip install`` does; a line saying so.

    An editable install under ``PYTHONDONTWRITEBYTECODE`` (this project's machines set it)
    never writes ``.pyc`` files, so every ``grk`` start would compile each module from source
    (about 0.12 s) while the reference's libraries, installed by pip, start compiled. A user's
    install is compiled; measuring that is measuring what a user sees.
    """
    spec = importlib.util.find_spec("groundkit")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    compiled = all(compileall.compile_dir(folder, quiet=1) for folder in folders)
    state = "byte-compiled" if compiled else "NOT fully byte-compiled"
    return f"groundkit's modules {state} as pip install does ({len(folders)} folders)"
