"""How long idle BLAS threads spin in a ``grk`` process, and what the programs it starts inherit.

OpenBLAS (numpy's, and the second copy in scipy's wheels, which ``scipy.special`` loads for
the t quantiles of the intervals) starts a thread per core when it is loaded, and each thread
busy-waits for 2**28 processor cycles (about 0.1 s) after start-up and after every call before
it sleeps. A ``grk`` run makes few, large BLAS calls, so that spinning was a sixth of a SciFact
run's processor time on 2 cores (0.23 of 1.95 s), and would be more with more cores: each of
them spins. ``OPENBLAS_THREAD_TIMEOUT`` (read once, when the library is loaded) shortens it to
2**20 cycles, well under a millisecond: back-to-back calls (a blocked search) still find the
threads awake, and the throughput of the matrix products is unchanged.

Only the ``grk`` command sets it (:func:`shorten_blas_spin`, before numpy is imported), and
only where the user has not: a Python process that calls groundkit is left as it is. The
programs a run starts (``--command`` stages) get the user's environment, without it
(:func:`child_environment`); the Ray workers a run starts on this machine inherit it (they
run groundkit's own code).
"""

from __future__ import annotations

import os
import sys

__all__ = ["SPIN_EXPONENT", "SPIN_VARIABLE", "child_environment", "shorten_blas_spin"]

SPIN_VARIABLE = "OPENBLAS_THREAD_TIMEOUT"
SPIN_EXPONENT = "20"
_added: list[str] = []


def shorten_blas_spin() -> bool:
    """Shorten the spinning of idle OpenBLAS threads in this process; whether it did.

    Nothing is changed when the user set the variable, or when numpy is loaded already (its
    library has read the environment then: the setting could only reach the programs this
    process starts).
    """
    if SPIN_VARIABLE in os.environ or "numpy" in sys.modules:
        return False
    os.environ[SPIN_VARIABLE] = SPIN_EXPONENT
    _added.append(SPIN_VARIABLE)
    return True


def child_environment() -> dict[str, str] | None:
    """The environment of a program a run starts: the user's (``None``: inherited unchanged).

    A variable :func:`shorten_blas_spin` added is left out; one the user set is passed on.
    """
    if not _added:
        return None
    environment = dict(os.environ)
    for name in _added:
        if environment.get(name) == SPIN_EXPONENT:
            del environment[name]
    return environment
