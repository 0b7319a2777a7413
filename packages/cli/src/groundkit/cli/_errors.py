"""How the CLI turns errors into exit codes and one-line messages.

Exit codes are a contract: 0 success, 1 a stage or a comparison failed (the run itself was
sound), 2 unreadable or invalid input. A user mistake never shows a traceback unless
``--debug`` asks for one.
"""

from __future__ import annotations

import click

__all__ = [
    "EXIT_FAILED",
    "EXIT_INPUT",
    "EXIT_OK",
    "CliError",
    "InputError",
    "StageFailedError",
    "debug_requested",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2


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
