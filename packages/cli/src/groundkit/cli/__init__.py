"""The ``grk`` command line: evaluate retrieval, compare runs, adapt BEIR, check eval sets."""

from __future__ import annotations

import atexit
import gc
import signal
import sys
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

from groundkit.cli.__about__ import __version__
from groundkit.cli._signals import TerminatedSignal
from groundkit.harness._blas import shorten_blas_spin

if TYPE_CHECKING:
    import click

__all__ = ["__version__", "cli", "main"]


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise TerminatedSignal()


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``grk``.

    The signal handling is in place before the commands (and numpy, scipy, matplotlib) are
    imported, so that Ctrl-C or SIGTERM while the command is still loading exits 130 or 143
    with one line, like later on.
    """
    signal.signal(signal.SIGTERM, _terminate)
    # Before numpy is loaded: idle BLAS threads sleep instead of spinning (see the module).
    shorten_blas_spin()
    # The interpreter's last collections at exit walk every object the command made (0.3 s
    # after a SciFact run, an eighth of it); frozen, they are freed by reference counting
    # alone. An exit hook: only a process that is ending is frozen, not a caller's.
    atexit.register(gc.freeze)
    try:
        from groundkit.cli._main import main as run
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted (Ctrl-C) while starting; nothing was written\n")
        sys.exit(130)
    except TerminatedSignal:
        sys.stderr.write("error: terminated (SIGTERM) while starting; nothing was written\n")
        sys.exit(143)
    try:
        run(argv)
    except TerminatedSignal:  # between the commands' own handling (parsing the arguments)
        sys.stderr.write("error: terminated (SIGTERM); the outputs are as they were\n")
        sys.exit(143)


def __getattr__(name: str) -> Any:
    # ``cli`` (the click group) loads every command: only when it is asked for.
    if name == "cli":
        from groundkit.cli._main import cli as group

        return group
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    cli: click.Group
