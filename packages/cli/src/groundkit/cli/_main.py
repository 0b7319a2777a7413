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
        self.lazy_commands: dict[str, tuple[str, str]] = {}
        """Command name to ``("module:attribute", summary)``: imported when asked for."""

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
        except click.ClickException as exc:
            # Errors the commands raise themselves (InputError...) get one too; ctx.meta is
            # shared by nested groups, so each traceback is printed once.
            _show_traceback(ctx)
            _raise_if_signalled(exc)  # bad input only because a signal cut a step short
            raise
        except UnicodeError as exc:
            _show_traceback(ctx)
            raise InputError(" ".join(str(exc).split()) or type(exc).__name__) from exc
        except KeyboardInterrupt as exc:
            _REACHED.set()
            _show_traceback(ctx)
            raise UserInterruptError("interrupted (Ctrl-C); the outputs are as they were") from exc
        except TerminatedSignal as exc:
            _REACHED.set()
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
            _raise_if_signalled(exc)
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands as click does, taking unloaded ones' summaries from the table.

        Listing them imports no command module (``grk eval --help`` stays as fast as
        ``grk --help``); a loaded command's own short help is used as click would.
        """
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name)
            if command is not None:
                if not command.hidden:
                    rows.append((name, command.get_short_help_str(limit)))
                continue
            # As click shows it: whole when it fits, else cut at a word with "...".
            text = self.lazy_commands[name][1]
            fits = len(text) <= limit
            shown = click.Command(name, short_help=text) if fits else click.Command(name, help=text)
            rows.append((name, shown.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command called ``cmd_name``, importing its module the first time it is asked."""
        entry = self.lazy_commands.get(cmd_name)
        if cmd_name not in self.commands and entry is not None:
            module, attribute = entry[0].split(":")
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


_RECEIVED: list[type[BaseException]] = []
"""The signals' exceptions raised so far in this process (their handlers append them)."""


_REACHED = threading.Event()
"""Set when a signal's exception reached the command group's handler (the run is ending)."""
AGAIN_AFTER = 5.0
"""Seconds after a signal when it is delivered again, unless its exception reached the
command group's handler by then."""


def _again_unless_reached(number: int) -> None:
    """Deliver the signal again in :data:`AGAIN_AFTER` seconds unless the run is ending.

    The exception a handler raises can be lost: C code that calls back into Python may clear
    any error the callback raised (seen once in about 130 runs under load: SIGTERM during a
    run's start, the command then ran on into a callable stage that never returns). Delivered
    again, the handler raises once more wherever the main code is then; once the exception
    reaches :meth:`GroundkitGroup.invoke`, nothing more is sent.
    """
    _REACHED.clear()

    def again() -> None:
        if not _REACHED.is_set():
            _to_main_thread(number)

    timer = threading.Timer(AGAIN_AFTER, again)
    timer.daemon = True
    timer.start()


def _to_main_thread(number: int) -> None:
    """Send a signal to the main thread, so that a wait there (a sleep, a lock) is cut short.

    ``signal.raise_signal`` from another thread would reach that thread only: Python would run
    the handler when the main thread next runs code, not while it waits.
    """
    main = threading.main_thread().ident
    if hasattr(signal, "pthread_kill") and main is not None:
        signal.pthread_kill(main, number)
    else:  # Windows: no threads to aim at
        signal.raise_signal(number)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _RECEIVED.append(TerminatedSignal)
    _again_unless_reached(signum)
    raise TerminatedSignal()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _RECEIVED.append(KeyboardInterrupt)
    _again_unless_reached(signum)
    signal.default_int_handler(signum, frame)


def _raise_if_signalled(exc: BaseException) -> None:
    """Report as the signal it is an error that a signal's exception turned into.

    Code that calls back into Python from a C or Rust library (pydantic-core building a
    validator while a command module loads) may wrap the exception a signal handler raised in
    one of its own (``SchemaError``): that is the signal, not a bug (exit 143 or 130, not 70).

    Raises:
        _TerminatedError: SIGTERM was received.
        UserInterruptError: Ctrl-C was received.
    """
    if isinstance(exc, _TerminatedError | UserInterruptError):
        return
    chained: set[type[BaseException]] = set(_RECEIVED)
    seen: BaseException | None = exc
    while seen is not None and len(chained) < 8:
        chained.add(type(seen))
        seen = seen.__cause__ or seen.__context__
    if any(issubclass(kind, TerminatedSignal | KeyboardInterrupt) for kind in chained):
        _REACHED.set()
    if any(issubclass(kind, TerminatedSignal) for kind in chained):
        raise _TerminatedError("terminated (SIGTERM); the outputs are as they were") from exc
    if any(issubclass(kind, KeyboardInterrupt) for kind in chained):
        raise UserInterruptError("interrupted (Ctrl-C); the outputs are as they were") from exc


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
            again = threading.Timer(0.01, _to_main_thread, (number,))
            again.daemon = True
            again.start()
            return
    previous(args)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``grk``."""
    # SIGTERM unwinds like Ctrl-C, so that temporaries are removed and the exit code says so.
    signal.signal(signal.SIGTERM, _on_sigterm)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not ignored (nohup)
        signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _unraisable
    cli.main(args=list(sys.argv[1:] if argv is None else argv), prog_name="grk")


# --- command registration -------------------------------------------------------------------
# By name: a command's module (and numpy, scipy, the harness behind it) is imported only when
# that command is asked for, which keeps ``grk --help`` and the light commands fast. Each
# entry carries the command's one-line summary, which a group's --help lists without importing
# anything (a test holds each to the command's own docstring).
_COMMANDS: Mapping[click.Group, Mapping[str, tuple[str, str]]] = {
    cli: {
        "doctor": (
            "groundkit.cli.commands._doctor:doctor_command",
            "What is installed, which device a dense stage would use, and where the caches are.",
        ),
    },
    beir_group: {
        "adapt": (
            "groundkit.cli.commands._beir:adapt_command",
            "Adapt the BEIR dataset in SOURCE into OUTPUT (corpus/, judgments.jsonl, id_map.json).",
        ),
    },
    eval_group: {
        "run": (
            "groundkit.cli.commands._eval_run:run_command",
            "Evaluate retrieval stages against quote-anchored judgments and write a report.",
        ),
        "demo": (
            "groundkit.cli.commands._eval:demo_command",
            "Evaluate the built-in example (a company handbook) offline: no arguments, no network.",
        ),
        "compare": (
            "groundkit.cli.commands._eval:compare_command",
            "Compare two stages of one REPORT, or two items files A and B.",
        ),
        "reproduce": (
            "groundkit.cli.commands._eval_reproduce:reproduce_command",
            "Rerun REPORT from the configuration it recorded and compare every per-query score.",
        ),
        "diagnose": (
            "groundkit.cli.commands._diagnose:diagnose_command",
            "Where a stage of REPORT loses gold evidence at k, and which fix should gain most.",
        ),
        "track-record": (
            "groundkit.cli.commands._diagnose:track_record_command",
            "Predicted against measured gains for every fix tried, from a RECORD file.",
        ),
        "report": (
            "groundkit.cli.commands._eval_report:report_command",
            "Write an evaluation report as one self-contained HTML page.",
        ),
        "trec": (
            "groundkit.cli.commands._eval:trec_command",
            "Score a TREC run file against a qrels file, printing exactly what trec_eval prints.",
        ),
        "export": (
            "groundkit.cli.commands._eval_export:export_command",
            "Write a stage's run and its qrels for trec_eval, ranx or ir_measures.",
        ),
        "adjudicate": (
            "groundkit.cli.commands._eval_adjudicate:adjudicate_command",
            "Judge every unjudged top-k hit of a stage; write scores with the relevant ones as "
            "gold.",
        ),
        "calibrate": (
            "groundkit.cli.commands._eval_calibrate:calibrate_command",
            "Judge a stratified sample of the report's hits; store the judge's calibration card.",
        ),
        "pool": (
            "groundkit.cli.commands._eval_pool:pool_command",
            "Pool every stage's top k, judge a stratified sample, estimate precision and pooled "
            "recall.",
        ),
        "sample": (
            "groundkit.cli.commands._eval_sample:sample_command",
            "Write a sheet of misses (or hits) drawn equally per stratum, for a person to mark.",
        ),
        "sheet": (
            "groundkit.cli.commands._eval_sample:sheet_command",
            "Read a marked sheet back (CSV or JSONL): precision per stratum and overall.",
        ),
        "sweep": (
            "groundkit.cli.commands._eval_sweep:sweep_command",
            "Run every arm of a sweep, compare each with the baseline, print the Pareto front.",
        ),
    },
    evalset_group: {
        "assess": (
            "groundkit.cli.commands._evalset:assess_command",
            "How small a difference the set detects; cautions.",
        ),
        "filter": (
            "groundkit.cli.commands._evalset:filter_command",
            "Drop items that would mislead, with reasons.",
        ),
        "classify": (
            "groundkit.cli.commands._evalset:classify_command",
            "Label question types.",
        ),
        "review": (
            "groundkit.cli.commands._evalset_review:review_command",
            "Review items one key at a time (resumable).",
        ),
        "generate": (
            "groundkit.cli.commands._evalset:generate_command",
            "Draft questions from a corpus with a chat model.",
        ),
    },
}
for _group, _names in _COMMANDS.items():
    assert isinstance(_group, GroundkitGroup)
    _group.lazy_commands.update(_names)
