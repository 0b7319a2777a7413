"""The root ``grk`` group, its sub-groups, and the error boundary of the whole CLI.

Command modules define plain click commands; they are attached to the groups at the bottom of
this module, so no command module imports this one (no import cycles).
"""

from __future__ import annotations

import signal
import sys
import threading
import traceback
from collections.abc import Sequence
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
from groundkit.judgments import JudgmentError, RunFailure, shown_path

__all__ = ["GroundkitGroup", "beir_group", "cli", "eval_group", "evalset_group", "main"]


_TRACEBACK_SHOWN = "groundkit.traceback_shown"


class GroundkitGroup(click.Group):
    """A click group that turns every error into a one-line message and its exit code.

    Bad input is a groundkit input error (:class:`~groundkit.judgments.JudgmentError` and its
    subclasses, ``StatsError``) or undecodable text: exit 2. A run that failed on good input
    is a :class:`~groundkit.judgments.RunFailure`: exit 1. Anything else is a bug, reported as
    an internal error (exit 70), never as bad input. ``--debug`` prints the traceback.
    """

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
        except (JudgmentError, UnicodeError) as exc:
            _show_traceback(ctx)
            raise InputError(" ".join(str(exc).split()) or type(exc).__name__) from exc
        except RunFailure as exc:
            _show_traceback(ctx)
            raise StageFailedError(" ".join(str(exc).split())) from exc
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
            where = f"{shown_path(exc.filename)}: " if exc.filename else ""
            raise InputError(f"{where}{exc.strerror or exc}") from exc
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own control flow (RuntimeErrors, not failures)
        except Exception as exc:
            _show_traceback(ctx)
            if _is_stats_input_error(exc):
                raise InputError(" ".join(str(exc).split())) from exc
            raise InternalError(_internal_message(exc)) from exc


def _is_stats_input_error(exc: Exception) -> bool:
    # groundkit.stats is imported by the commands that use it; an error can only be one of
    # its own if it is loaded, and ``grk --help`` need not load it.
    stats = sys.modules.get("groundkit.stats")
    return stats is not None and isinstance(exc, stats.StatsError)


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
# Imported at the bottom so that command modules never need this module (no import cycles).
from groundkit.cli._beir_cmd import adapt_command  # noqa: E402
from groundkit.cli._diagnose_cmd import diagnose_command, track_record_command  # noqa: E402
from groundkit.cli._eval_adjudicate_cmd import adjudicate_command  # noqa: E402
from groundkit.cli._eval_cmd import compare_command, demo_command, trec_command  # noqa: E402
from groundkit.cli._eval_export import export_command  # noqa: E402
from groundkit.cli._eval_reproduce_cmd import reproduce_command  # noqa: E402
from groundkit.cli._eval_run_cmd import run_command  # noqa: E402
from groundkit.cli._eval_sweep_cmd import sweep_command  # noqa: E402
from groundkit.cli._evalset_cmd import (  # noqa: E402
    assess_command,
    classify_command,
    filter_command,
    generate_command,
    review_command,
)
from groundkit.cli._report_cmd import report_command  # noqa: E402

beir_group.add_command(adapt_command)

eval_group.add_command(run_command)
eval_group.add_command(demo_command)
eval_group.add_command(sweep_command)
eval_group.add_command(compare_command)
eval_group.add_command(reproduce_command)
eval_group.add_command(diagnose_command)
eval_group.add_command(track_record_command)
eval_group.add_command(report_command)
eval_group.add_command(trec_command)
eval_group.add_command(export_command)
eval_group.add_command(adjudicate_command)

evalset_group.add_command(assess_command)
evalset_group.add_command(filter_command)
evalset_group.add_command(classify_command)
evalset_group.add_command(review_command)
evalset_group.add_command(generate_command)
