"""How the CLI turns errors into exit codes and one-line messages.

Exit codes are a contract (the table in docs/pages/reference/exit-codes.md):

=====  ===========================================================================
code   meaning
=====  ===========================================================================
0      success
1      the run was sound but failed its check: a stage failed (the report was
       written), a "worse" verdict, a ``--strict`` caution, a model endpoint failure
2      bad input or an output that cannot be written: nothing was written
70     internal error: a bug in groundkit, not in the input (sysexits' EX_SOFTWARE);
       ``--debug`` shows the traceback
130    interrupted (Ctrl-C, SIGINT): the outputs are as they were
143    terminated (SIGTERM): the outputs are as they were
=====  ===========================================================================

A user mistake never shows a traceback unless ``--debug`` asks for one.
"""

from __future__ import annotations

import click

from groundkit.cli._signals import TerminatedSignal

__all__ = [
    "EXIT_FAILED",
    "EXIT_INPUT",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "CliError",
    "InputError",
    "InternalError",
    "StageFailedError",
    "TerminatedSignal",
    "UserInterruptError",
    "debug_requested",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class CliError(click.ClickException):
    """An error the CLI reports in one line, with its exit code."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()) if "\n" in message else message)

    def show(self, file: object = None) -> None:
        """Print ``error: <message>`` to standard error."""
        click.echo(f"error: {self.format_message()}", err=True)


class InputError(CliError):
    """Unreadable or invalid input: exit code 2."""

    exit_code = EXIT_INPUT


class StageFailedError(CliError):
    """A retrieval stage or a user command failed: exit code 1."""

    exit_code = EXIT_FAILED


def debug_requested(ctx: click.Context | None = None) -> bool:
    """Whether ``grk --debug`` was given (default context: the current one; none: never)."""
    ctx = ctx if ctx is not None else click.get_current_context(silent=True)
    if ctx is None:
        return False
    root = ctx.find_root()
    return bool(root.params.get("debug")) or bool((root.obj or {}).get("debug"))


class InternalError(CliError):
    """An exception no groundkit check raised: a bug, exit code 70, never "bad input"."""

    exit_code = EXIT_INTERNAL


class UserInterruptError(CliError):
    """Ctrl-C (SIGINT): exit code 130, the shells' convention (128 + 2)."""

    exit_code = EXIT_INTERRUPTED
