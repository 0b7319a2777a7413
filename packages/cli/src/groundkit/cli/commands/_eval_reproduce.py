"""`grk eval reproduce REPORT`: rerun a report from what it recorded and compare every score.

Exit codes: 0 every recorded per-query score came out the same; 1 some differ (the first ones
are listed); 2 the inputs are not the ones the report was run on (corpus or judgments
fingerprint, package versions), refused before anything runs unless ``--force``, or any
other bad input.

A report is data: its stages that run code it names (commands, Python functions, framework
objects, plugins) and its Ray address are refused (exit 2, before anything is loaded) unless
``--trust-report``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table

from groundkit.cli._errors import EXIT_FAILED, EXIT_OK, InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._option_groups import option_group
from groundkit.cli._outputs import guard
from groundkit.cli._types import FiniteFloatRange
from groundkit.cli.console._report import ProgressDisplay, make_console, progress_option
from groundkit.cli.run._describe import describe_option
from groundkit.judgments.files import shown_path

if TYPE_CHECKING:
    from groundkit.cli.run._run import command_record, run_inputs, write_run_outputs
    from groundkit.harness import Reproduction, RunConfig, reproduce_report
    from groundkit.harness.run import recorded_run_config
    from groundkit.harness.run._reproduce import code_parts
    from groundkit.judgments import EvalReport, load_report
else:  # the harness, numpy and the report models: imported when the command runs
    command_record = lazy("groundkit.cli.run._run", "command_record")
    run_inputs = lazy("groundkit.cli.run._run", "run_inputs")
    write_run_outputs = lazy("groundkit.cli.run._run", "write_run_outputs")
    reproduce_report = lazy("groundkit.harness", "reproduce_report")
    recorded_run_config = lazy("groundkit.harness.run", "recorded_run_config")
    code_parts = lazy("groundkit.harness.run._reproduce", "code_parts")
    load_report = lazy("groundkit.judgments", "load_report")

__all__ = ["reproduce_command"]

_PATH = click.Path(path_type=Path)


@dataclass(frozen=True)
class MovedInputs:
    """``--corpus`` and ``--judgments``: where inputs the report recorded are now."""

    corpus_path: Path | None
    judgments_path: Path | None


@dataclass(frozen=True)
class ReproduceOutput:
    """``--show``, ``--report-out``, ``--json``: what the command shows and writes."""

    show: int
    report_out: Path | None
    as_json: bool


def _summary(outcome: Reproduction) -> dict[str, Any]:
    return {
        "identical": outcome.identical,
        "compared": outcome.compared,
        "stages": [s.name for s in outcome.recorded.stages],
        "mismatches": [
            {**asdict(m), "kind": m.kind.value, "message": str(m)} for m in outcome.mismatches
        ],
        "differences": [{**asdict(d), "message": str(d)} for d in outcome.differences],
        "notes": [] if outcome.span_rule_note is None else [outcome.span_rule_note],
    }


def _render(console: Console, outcome: Reproduction, *, shown: int) -> None:
    for mismatch in outcome.mismatches:
        console.print(f"warning: {mismatch} (--force)", style="yellow", highlight=False)
    stages = len(outcome.recorded.stages)
    queries = outcome.recorded.answerable_count
    if outcome.identical:
        console.print(
            f"reproduced: all {outcome.compared} per-query scores of {stages} stage(s) on "
            f"{queries} queries are identical",
            style="green",
            highlight=False,
        )
        return
    console.print(
        f"not reproduced: {len(outcome.differences)} difference(s) in {outcome.compared} "
        f"per-query scores of {stages} stage(s) on {queries} queries",
        style="bold red",
        highlight=False,
    )
    table = Table(title=f"first {min(shown, len(outcome.differences))}", title_justify="left")
    for header in ("query", "stage", "metric", "recorded", "now"):
        table.add_column(header, justify="right" if header in ("recorded", "now") else "left")
    for difference in outcome.differences[:shown]:
        table.add_row(
            difference.query_id or "—",
            difference.stage,
            difference.metric or "—",
            "—" if difference.recorded is None else repr(difference.recorded),
            difference.detail
            if difference.detail is not None
            else ("—" if difference.now is None else repr(difference.now)),
        )
    console.print(table)
    if outcome.span_rule_note is not None:
        console.print(f"note: {outcome.span_rule_note}", style="yellow", highlight=False)


def _trusted_config(
    recorded: EvalReport, report_path: Path, moved: MovedInputs, trust: bool
) -> RunConfig:
    """The recorded configuration, refused when it names code to run and ``trust`` is off.

    Raises:
        InputError: Code stages without ``--trust-report`` (one line naming them and the flag).
    """
    from groundkit.harness.run._reproduce import UntrustedReportError  # caught: the class

    try:
        config = recorded_run_config(
            recorded,
            corpus=moved.corpus_path,
            judgments=moved.judgments_path,
            source=report_path,
            trust_code=trust,
        )
    except UntrustedReportError as refused:
        raise InputError(
            f"{shown_path(report_path)}: refusing to run code the report names: "
            f"{', '.join(refused.parts)}; pass --trust-report to run it (only for a report "
            "you trust)"
        ) from None
    parts = code_parts(recorded.run.config)
    if parts:
        click.echo(
            f"running code named by the report: {', '.join(parts)} (--trust-report)", err=True
        )
    return config


@click.command("reproduce")
@describe_option("report")
@click.argument("report_path", metavar="REPORT", type=_PATH)
@option_group(
    "moved",
    MovedInputs,
    click.option(
        "--corpus",
        "corpus_path",
        type=_PATH,
        default=None,
        help="Read the corpus from here instead of the path the report recorded (a moved folder).",
    ),
    click.option(
        "--judgments",
        "judgments_path",
        type=_PATH,
        default=None,
        help="Read the judgments from here instead of the path the report recorded.",
    ),
)
@click.option(
    "--force",
    is_flag=True,
    help="Rerun even when the corpus or judgments fingerprint or a package version differs "
    "from the report's record (then expect differences).",
)
@click.option(
    "--trust-report",
    is_flag=True,
    help="Run the report's stages that run code it names (commands, Python functions, "
    "framework objects, plugins) and use its Ray address. Without it they are refused: "
    "pass it only for a report you trust.",
)
@click.option(
    "--tolerance",
    type=FiniteFloatRange(min=0.0, max=1.0),
    default=0.0,
    show_default=True,
    help="Largest absolute difference of a score still counted as the same.",
)
@option_group(
    "view",
    ReproduceOutput,
    click.option(
        "--show",
        type=click.IntRange(min=1),
        default=10,
        show_default=True,
        help="How many differences to list.",
    ),
    click.option(
        "--report-out",
        "report_out",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Also write the rerun's report there (never over an input or a file that is not "
        "a groundkit report). Nothing is written without it.",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON."),
)
@progress_option
@click.pass_context
def reproduce_command(
    ctx: click.Context,
    report_path: Path,
    moved: MovedInputs,
    force: bool,
    trust_report: bool,
    tolerance: float,
    view: ReproduceOutput,
    progress: bool | None,
) -> None:
    """Rerun REPORT from the configuration it recorded and compare every per-query score.

    \b
    grk eval reproduce report.json
    grk eval reproduce report.json --corpus moved/corpus --report-out again.json

    First checks that the corpus and judgments have the fingerprints the report recorded and
    that the groundkit and retriever packages have the recorded versions; when one differs
    it refuses before running anything, naming what differs, unless --force. A stage that runs
    code the report names (a command, a Python function, a framework object, a plugin) is
    refused unless --trust-report.

    Exit codes: 0 every score identical, 1 differences (the first ones listed: query, stage,
    metric, recorded and now), 2 other inputs than recorded, or bad input.
    """  # noqa: D301 (click needs a real \b to keep the example lines as they are)
    from groundkit.harness import ReproductionRefusedError  # caught: the class itself

    recorded = load_report(report_path)
    config = _trusted_config(recorded, report_path, moved, trust_report)
    guard(
        [("--report-out", view.report_out, "report")],
        run_inputs(config, [("REPORT", report_path)]),
    )
    try:
        with ProgressDisplay(enabled=progress) as display:
            outcome = reproduce_report(
                recorded,
                config=config,
                force=force,
                tolerance=tolerance,
                progress=display,
                command=command_record(ctx),
                trust_code=trust_report,
            )
    except ReproductionRefusedError as refused:
        located = ReproductionRefusedError(refused.mismatches, path=report_path)
        raise InputError(f"{located}; pass --force to rerun anyway") from None
    if view.report_out is not None:
        write_run_outputs(
            outcome.report, report_path=view.report_out, items_path=None, html_path=None
        )
    if view.as_json:
        click.echo(json.dumps(_summary(outcome), indent=1))
    else:
        console = make_console()
        _render(console, outcome, shown=view.show)
        if view.report_out is not None:
            console.print(f"[bold]report:[/bold] {view.report_out}", highlight=False, markup=True)
    ctx.exit(EXIT_OK if outcome.identical else EXIT_FAILED)
