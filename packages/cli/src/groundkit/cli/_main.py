"""The root ``grk`` group, its sub-groups, and the error boundary of the whole CLI.

Command modules define plain click commands; the groups name them at the bottom of this module
and import a command's module only when that command is asked for (its help or its run), so
``grk --help`` loads no numpy, scipy or harness, and no command module imports this one (no
import cycles).
"""

from __future__ import annotations

import signal
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from importlib import import_module
from types import FrameType
from typing import Any

import click

from groundkit.cli.__about__ import __version__
from groundkit.cli._errors import (
    EXIT_TERMINATED,
    CliError,
    InputError,
    InternalError,
    StageFailedError,
    TerminatedSignal,
    UserInterruptError,
    debug_requested,
)

__all__ = ["GroundkitGroup", "beir_group", "cli", "eval_group", "evalset_group", "main"]


_TRACEBACK_SHOWN = "groundkit.traceback_shown"


class GroundkitGroup(click.Group):
    """A click group that turns every error into a one-line message and its exit code.

    Bad input is a groundkit input error (:class:`~groundkit.judgments.JudgmentError` and its
    subclasses, ``StatsError``) or undecodable text: exit 2. A run that failed on good input
    is a :class:`~groundkit.judgments.RunFailure`: exit 1. Anything else is a bug, reported as
    an internal error (exit 70), never as bad input. ``--debug`` prints the traceback.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, str] = {}
        """Command name to ``"module:attribute"``: imported when the command is asked for."""

    def invoke(self, ctx: click.Context) -> Any:
        """Invoke the sub-command, translating bad-input errors."""
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            # Click prints usage, a hint and a blank line around a bad option or command: one
            # line naming the problem and where to read the help is the CLI's contract.
            _show_traceback(ctx)
            where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            raise InputError(f"{exc.format_message()} (see '{where} --help')") from exc
        except click.ClickException:
            # Errors the commands raise themselves (InputError...) get one too; ctx.meta is
            # shared by nested groups, so each traceback is printed once.
            _show_traceback(ctx)
            raise
        except UnicodeError as exc:
            _show_traceback(ctx)
            raise InputError(" ".join(str(exc).split()) or type(exc).__name__) from exc
        except KeyboardInterrupt as exc:
            _show_traceback(ctx)
            raise UserInterruptError("interrupted (Ctrl-C); the outputs are as they were") from exc
        except TerminatedSignal as exc:
            _show_traceback(ctx)
            raise _TerminatedError("terminated (SIGTERM); the outputs are as they were") from exc
        except OSError as exc:
            # The system refused a read or a write the checks could not foresee (a full disk,
            # a file removed meanwhile): one line naming the file.
            _show_traceback(ctx)
            from groundkit.judgments.files import shown_path

            where = f"{shown_path(exc.filename)}: " if exc.filename else ""
            raise InputError(f"{where}{exc.strerror or exc}") from exc
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own control flow (RuntimeErrors, not failures)
        except Exception as exc:
            _show_traceback(ctx)
            if _is_loaded_error(exc, "groundkit.judgments", "RunFailure"):
                raise StageFailedError(" ".join(str(exc).split())) from exc
            if _is_loaded_error(exc, "groundkit.judgments", "JudgmentError"):
                raise InputError(" ".join(str(exc).split()) or type(exc).__name__) from exc
            if _is_loaded_error(exc, "groundkit.stats", "StatsError"):
                raise InputError(" ".join(str(exc).split())) from exc
            raise InternalError(_internal_message(exc)) from exc

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The command names, loaded or not, sorted as click sorts them."""
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command called ``cmd_name``, importing its module the first time it is asked."""
        target = self.lazy_commands.get(cmd_name)
        if cmd_name not in self.commands and target is not None:
            module, attribute = target.split(":")
            command = getattr(import_module(module), attribute)
            assert isinstance(command, click.Command)
            assert command.name == cmd_name
            self.add_command(command)
        return self.commands.get(cmd_name)


def _is_loaded_error(exc: Exception, module: str, name: str) -> bool:
    # The groundkit libraries are imported by the commands that use them: an error can only be
    # one of theirs if they are loaded, and ``grk --help`` need not load them (numpy, pydantic).
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(exc, getattr(loaded, name))


def _internal_message(exc: BaseException) -> str:
    detail = " ".join(str(exc).split())
    return (
        f"internal error: {type(exc).__name__}{': ' + detail if detail else ''} (a bug in "
        "groundkit, not in your input; grk --debug shows the traceback to report)"
    )


class _TerminatedError(CliError):
    exit_code = EXIT_TERMINATED


def _show_traceback(ctx: click.Context) -> None:
    if debug_requested(ctx) and not ctx.meta.get(_TRACEBACK_SHOWN):
        ctx.meta[_TRACEBACK_SHOWN] = True
        traceback.print_exc()


@click.group(
    cls=GroundkitGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="grk")
@click.option("--debug", is_flag=True, help="Show a traceback for every error.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """groundkit: evaluate retrieval for RAG with quote-anchored gold and honest statistics."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


@cli.group("eval", cls=GroundkitGroup)
def eval_group() -> None:
    """Run evaluations, compare runs, diagnose misses, score and export TREC files."""


@cli.group("beir", cls=GroundkitGroup)
def beir_group() -> None:
    """Turn BEIR datasets into quote-anchored judgments."""


@cli.group("evalset", cls=GroundkitGroup)
def evalset_group() -> None:
    """Check and improve an evaluation set."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise TerminatedSignal()


_SIGNAL_OF = {TerminatedSignal: signal.SIGTERM, KeyboardInterrupt: signal.SIGINT}


def _unraisable(args: Any, previous: Any = sys.__unraisablehook__) -> None:
    """Deliver again a signal that arrived inside a weakref callback or a ``__del__``.

    Python swallows an exception raised there ("Exception ignored in ..." and a traceback on
    stderr), so a SIGTERM or Ctrl-C landing in one would be lost and the command would run
    on. The signal is raised again from a short-lived thread once this hook has returned
    (raised here, its handler would run inside the hook and be swallowed once more), and
    Python runs the handler at the next instruction of the main code.
    """
    for kind, number in _SIGNAL_OF.items():
        if isinstance(args.exc_value, kind):
            again = threading.Timer(0.01, signal.raise_signal, (number,))
            again.daemon = True
            again.start()
            return
    previous(args)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``grk``."""
    # SIGTERM unwinds like Ctrl-C, so that temporaries are removed and the exit code says so.
    signal.signal(signal.SIGTERM, _on_sigterm)
    sys.unraisablehook = _unraisable
    cli.main(args=list(sys.argv[1:] if argv is None else argv), prog_name="grk")


# --- command registration -------------------------------------------------------------------
# By name: a command's module (and numpy, scipy, the harness behind it) is imported only when
# that command is asked for, which keeps ``grk --help`` and the light commands fast.
_COMMANDS: Mapping[click.Group, Mapping[str, str]] = {
    cli: {"doctor": "groundkit.cli.commands._doctor:doctor_command"},
    beir_group: {"adapt": "groundkit.cli.commands._beir:adapt_command"},
    eval_group: {
        "run": "groundkit.cli.commands._eval_run:run_command",
        "demo": "groundkit.cli.commands._eval:demo_command",
        "compare": "groundkit.cli.commands._eval:compare_command",
        "reproduce": "groundkit.cli.commands._eval_reproduce:reproduce_command",
        "diagnose": "groundkit.cli.commands._diagnose:diagnose_command",
        "track-record": "groundkit.cli.commands._diagnose:track_record_command",
        "report": "groundkit.cli.commands._eval_report:report_command",
        "trec": "groundkit.cli.commands._eval:trec_command",
        "export": "groundkit.cli.commands._eval_export:export_command",
        "adjudicate": "groundkit.cli.commands._eval_adjudicate:adjudicate_command",
        "calibrate": "groundkit.cli.commands._eval_calibrate:calibrate_command",
        "pool": "groundkit.cli.commands._eval_pool:pool_command",
        "sample": "groundkit.cli.commands._eval_sample:sample_command",
        "sheet": "groundkit.cli.commands._eval_sample:sheet_command",
        "sweep": "groundkit.cli.commands._eval_sweep:sweep_command",
    },
    evalset_group: {
        "assess": "groundkit.cli.commands._evalset:assess_command",
        "filter": "groundkit.cli.commands._evalset:filter_command",
        "classify": "groundkit.cli.commands._evalset:classify_command",
        "review": "groundkit.cli.commands._evalset_review:review_command",
        "generate": "groundkit.cli.commands._evalset:generate_command",
    },
}
for _group, _names in _COMMANDS.items():
    assert isinstance(_group, GroundkitGroup)
    _group.lazy_commands.update(_names)
