"""Run a command as a child process and measure its wall time and peak resident memory."""

from __future__ import annotations

import compileall
import importlib.util
import subprocess
import sys
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


# Started by a small launcher rather than by this process: on Linux a child's ``ru_maxrss``
# starts at the resident set of the address space it had before ``exec``, and a child forked
# (or vforked, as ``subprocess`` does) from this process has this process's, which holds
# bm25s, numpy and the reference libraries (135 MiB in the SciFact benchmark: a floor under
# both sides' peaks that hid the difference). The launcher is a bare interpreter (``-S``,
# about 10 MiB); it times the command, waits for it with ``wait4`` and prints its own
# figures on its standard output, which nothing else writes to.
_LAUNCHER = """
import os, subprocess, sys, time
started = time.perf_counter()
process = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(process.pid, 0)
seconds = time.perf_counter() - started
cpu = usage.ru_utime + usage.ru_stime
print(seconds, usage.ru_maxrss, cpu, os.waitstatus_to_exitcode(status))
"""


def measure_child(command: Sequence[str], *, env: dict[str, str] | None = None) -> Measured:
    """Run ``command``; its own rusage (``wait4``), not the sum over every child so far.

    The command runs under a bare launcher (see ``_LAUNCHER``), so that its peak is its own,
    not this process's.
    """
    done = subprocess.run(
        [sys.executable, "-S", "-c", _LAUNCHER, *command], capture_output=True, env=env, check=False
    )
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"the benchmark's launcher failed ({done.returncode}): {stderr}")
    seconds, peak_kib, cpu, returncode = done.stdout.split()
    # Linux reports ru_maxrss in KiB.
    return Measured(float(seconds), int(peak_kib) / 1024, int(returncode), stderr, float(cpu))


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
