"""Console rendering of evaluation reports and comparisons (rich tables, marks and notes).

Everything here only reads data; it never computes a statistic that is not already in the
report or handed in, so what the console shows is exactly what the report file says.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any, Literal

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli.console._cost_view import render_cost_table

# Only annotations here: the report models, the harness and the progress bars are imported
# where they are used, so a command that reads no report (an items comparison) loads none.
if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn, TaskID

    from groundkit.judgments import EvalReport, StageReport
    from groundkit.judgments.report import AblationRow, StageComparison

__all__ = [
    "VERDICT_MARKS",
    "ProgressDisplay",
    "ablation_title",
    "format_delta",
    "format_interval",
    "make_console",
    "progress_option",
    "render_ablation",
    "render_comparisons",
    "render_notes",
    "render_report",
    "render_stage_table",
]

Verdict = Literal["better", "worse", "inconclusive"]

VERDICT_MARKS: dict[str, tuple[str, str]] = {
    "better": ("▲ better", "bold green"),
    "worse": ("▼ worse", "bold red"),
    "inconclusive": ("≈ inconclusive", "yellow"),
    "equivalent": ("= equivalent", "cyan"),
    "too few queries": ("… too few queries", "magenta"),
}
"""Verdict to (mark, rich style): the mark reads on its own when colour is off."""

# Wide enough for six metrics with their ranges; a real terminal uses its own width.
_PIPE_WIDTH = 160


def make_console(*, stderr: bool = False, file: IO[str] | None = None) -> Console:
    """A console for command output: the terminal's width on a TTY, a fixed wide one otherwise.

    Args:
        stderr: Write to standard error (progress and warnings) instead of standard output.
        file: Write to this stream instead (tests).

    Returns:
        The console; colour only when the stream is a terminal and ``NO_COLOR`` is unset.
    """
    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    return Console(
        file=stream,
        width=None if is_tty else _PIPE_WIDTH,
        highlight=False,
        markup=False,  # user data (paths, stage names, notes) must never be read as markup
        no_color=not is_tty or "NO_COLOR" in os.environ,
        soft_wrap=False,
    )


def format_value(value: float) -> str:
    """A metric value with three decimals (``nan`` spelled out)."""
    return "nan" if math.isnan(value) else f"{value:.3f}"


def format_delta(value: float) -> str:
    """A signed difference with three decimals (``+0.041``, ``-0.007``, ``+0.000``)."""
    return "nan" if math.isnan(value) else f"{value + 0.0:+.3f}"


def format_interval(low: float, high: float, *, signed: bool = False) -> str:
    """A 95% range as ``[low, high]``."""
    fmt = format_delta if signed else format_value
    return f"[{fmt(low)}, {fmt(high)}]"


def _stage_label(stage: StageReport) -> Text:
    label = Text(stage.name, style="bold")
    if stage.baseline:
        label.append(" (baseline)", style="dim")
    return label


def _stage_setup(stage: StageReport) -> str:
    parts = [stage.kind]
    if stage.chunker is not None:
        settings = stage.chunker.model_dump(mode="json")
        extras = [f"{key}={value}" for key, value in sorted(settings.items()) if key != "kind"]
        kind = stage.chunker.kind
        parts.append(f"{kind}({', '.join(extras)})" if extras else kind)
    if stage.chunk_count is not None:
        parts.append(f"{stage.chunk_count:,} chunks")
    return " · ".join(parts)


def render_stage_table(console: Console, report: EvalReport, metrics: Sequence[str]) -> None:
    """Print stages × metrics: each cell the mean over answerable queries and its 95% range."""
    level = round(report.run.bootstrap.confidence_level * 100)
    table = Table(
        title=(
            f"{report.answerable_count} answerable queries · level {report.run.level} · "
            f"mean and {level}% range"
        ),
        title_justify="left",
        show_lines=True,
    )
    table.add_column("stage", no_wrap=True)
    table.add_column("setup", style="dim")
    for metric in metrics:
        table.add_column(metric, justify="right", no_wrap=True)
    from groundkit.judgments.report import JUDGED_CAUTION_CUTOFF

    judged = f"judged@{JUDGED_CAUTION_CUTOFF}"
    show_judged = any(judged in stage.judged for stage in report.stages)
    if show_judged:
        table.add_column(judged, justify="right", no_wrap=True)
    for stage in report.stages:
        cells: list[Text | str] = [_stage_label(stage), _stage_setup(stage)]
        if stage.error is not None:
            cells.append(Text("failed", style="bold red"))
            cells.extend("" for _ in metrics[1:])
            cells.extend([""] if show_judged else [])
        else:
            for metric in metrics:
                aggregate = stage.aggregates.get(metric)
                if aggregate is None:
                    cells.append(Text("—", style="dim"))
                    continue
                cell = Text(format_value(aggregate.mean))
                cell.append("\n" + format_interval(aggregate.low, aggregate.high), style="dim")
                cells.append(cell)
            if show_judged:
                share = stage.judged.get(judged)
                cells.append(Text("—", style="dim") if share is None else f"{100 * share:.0f}%")
        table.add_row(*cells)
    console.print(table)


def _comparison_cell(comparison: StageComparison) -> Text:
    mark, style = VERDICT_MARKS[comparison.outcome]
    cell = Text(format_delta(comparison.effect) + " ", style="bold")
    cell.append(mark, style=style if comparison.role == "decision" else "dim")
    adjusted = comparison.p_adjusted if comparison.p_adjusted is not None else comparison.p_holm
    label = "p" if comparison.role == "guardrail" else "p adj"
    cell.append(
        "\n"
        + format_interval(comparison.low, comparison.high, signed=True)
        + f" {label}={adjusted:.3g}"
        + (" (guardrail)" if comparison.role == "guardrail" else ""),
        style="dim",
    )
    return cell


def _comparisons_title(report: EvalReport) -> str:
    settings = report.run.bootstrap
    level = round(settings.confidence_level * 100)
    family = max((c.family_size or 1 for s in report.stages for c in s.comparisons), default=1)
    control = {"holm": "Holm", "bh": "Benjamini–Hochberg"}[settings.multiplicity]
    scope = (
        f"{control} over all {family} comparisons"
        if settings.primary_metric is None
        else f"{control} over the {family} on {settings.primary_metric}; the rest are guardrails"
    )
    return (
        f"difference from {report.baseline.name} ({level}% interval; verdicts from exact paired "
        f"tests, {scope})"
    )


def render_comparisons(console: Console, report: EvalReport, metrics: Sequence[str]) -> None:
    """Print each non-baseline stage's difference from the baseline with interval and verdict."""
    candidates = [s for s in report.stages if not s.baseline and s.error is None]
    if not candidates:
        return
    table = Table(title=_comparisons_title(report), title_justify="left", show_lines=True)
    table.add_column("stage", no_wrap=True)
    shown = [m for m in metrics if any(c.metric == m for s in candidates for c in s.comparisons)]
    for metric in shown:
        table.add_column(metric, justify="right", no_wrap=True)
    for stage in candidates:
        by_metric = {c.metric: c for c in stage.comparisons}
        cells: list[Text | str] = [Text(stage.name, style="bold")]
        for metric in shown:
            comparison = by_metric.get(metric)
            cells.append(
                Text("—", style="dim") if comparison is None else _comparison_cell(comparison)
            )
        table.add_row(*cells)
    console.print(table)


def ablation_title(report: EvalReport) -> str:
    """What the ablation table shows and how its verdicts were decided (console and HTML)."""
    settings = report.run.bootstrap
    level = round(settings.confidence_level * 100)
    family = max((c.family_size or 1 for r in report.ablation for c in r.comparisons), default=1)
    control = {"holm": "Holm", "bh": "Benjamini–Hochberg"}[settings.multiplicity]
    scope = (
        f"{control} over {family} comparisons"
        if settings.primary_metric is None
        else f"{control} over the {family} on {settings.primary_metric}; the rest are guardrails"
    )
    return (
        "ablation: component mean, then whole − component "
        f"({level}% interval; exact paired tests; a family of its own: {scope})"
    )


def _ablation_cell(row: AblationRow, metric: str) -> Text:
    aggregate = row.aggregates.get(metric)
    comparison = next((c for c in row.comparisons if c.metric == metric), None)
    if aggregate is None or comparison is None:
        return Text("—", style="dim")
    mark, style = VERDICT_MARKS[comparison.outcome]
    cell = Text(format_value(aggregate.mean) + "  ")
    cell.append(format_delta(comparison.effect) + " ", style="bold")
    cell.append(mark.split(" ")[0], style=style if comparison.role == "decision" else "dim")
    return cell


def render_ablation(console: Console, report: EvalReport, metrics: Sequence[str]) -> None:
    """Print the ablation rows: one line per component of a hybrid or rerank stage."""
    if not report.ablation:
        return
    table = Table(
        title=ablation_title(report),
        title_justify="left",
        caption="▲ the whole beats the component (what was removed helps), ▼ the component "
        "beats the whole, ≈ inconclusive; intervals and p-values are in the report",
        caption_justify="left",
    )
    table.add_column("stage", no_wrap=True)
    table.add_column("component", no_wrap=True)
    table.add_column("removed", style="dim")
    for metric in metrics:
        table.add_column(metric, justify="right", no_wrap=True)
    for row in report.ablation:
        cells: list[Text | str] = [
            Text(row.stage, style="bold"),
            row.component + (" (replayed)" if row.source == "replay" else ""),
            ", ".join(row.removed),
        ]
        cells += [_ablation_cell(row, metric) for metric in metrics]
        table.add_row(*cells)
    console.print(table)


def render_notes(console: Console, notes: Sequence[str], *, title: str = "notes") -> None:
    """Print the notes as a bulleted list (they say what the numbers cannot)."""
    if not notes:
        return
    console.print(Text(title, style="bold"))
    for note in notes:
        console.print(Text("  • ") + Text(note))


def render_report(
    console: Console,
    report: EvalReport,
    *,
    detection_limit: str | None = None,
    report_path: str | None = None,
    items_path: str | None = None,
) -> None:
    """Print a whole report: stage table, differences from the baseline, detection limit, notes.

    Args:
        console: Where to print.
        report: The report.
        detection_limit: A sentence about the smallest difference this set can detect.
        report_path: Where the report was written (printed last).
        items_path: Where the per-query rows were written.
    """
    metrics = list(report.run.headline_metrics) or sorted(
        {m for s in report.stages for m in s.aggregates}
    )
    render_stage_table(console, report, metrics)
    render_comparisons(console, report, metrics)
    render_ablation(console, report, metrics)
    render_cost_table(console, report.stages)
    if detection_limit:
        console.print(Text("detection limit: ", style="bold") + Text(detection_limit))
    render_notes(console, report.notes)
    if report_path is not None:
        console.print(Text("report: ", style="bold") + Text(report_path))
    if items_path is not None:
        console.print(Text("items:  ", style="bold") + Text(items_path))


def progress_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--progress/--no-progress`` flag of a command that runs an evaluation."""
    return click.option(
        "--progress/--no-progress",
        default=None,
        help="Progress bars on standard error [default: when it is a terminal].",
    )(function)


class ProgressDisplay:
    """The engine's ``progress(phase, done, total)`` hook drawn as transient rich progress bars.

    Bars go to standard error and only when it is a terminal, so piped output and captured
    output (tests, CI logs) stay clean. Every bar shows its elapsed time and an estimate of the
    time left. Loading a model is a step of its own (``<stage>: load model``): its bar shows
    the time spent while the model loads, and a line saying how long it took stays once it
    has. Use as a context manager; call the instance as the hook.

    Another display draws its own bars through :meth:`show` with its own ``columns`` (the
    sweep's arms bar does).
    """

    def __init__(
        self,
        *,
        enabled: bool | None = None,
        file: IO[str] | None = None,
        columns: Sequence[str | ProgressColumn] | None = None,
    ) -> None:
        stream = file if file is not None else sys.stderr
        self.enabled = (
            bool(getattr(stream, "isatty", lambda: False)()) if enabled is None else enabled
        )
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self._stream = stream
        self._columns = None if columns is None else tuple(columns)

    def __enter__(self) -> ProgressDisplay:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            columns = self._columns or (
                TextColumn("{task.description:<28}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
            )
            self._progress = Progress(*columns, console=Console(file=self._stream), transient=True)
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        """Advance the bar of ``phase`` (created on first sight)."""
        if self._progress is None:
            return
        task = self._tasks.get(phase)
        started = task is not None
        if task is None:
            task = self._progress.add_task(phase, total=max(total, 1))
            self._tasks[phase] = task
        finished = done >= total
        self._progress.update(
            task, total=max(total, 1), completed=max(total, 1) if finished else done
        )
        from groundkit.harness.dense import LOAD_MODEL_PHASE

        if finished and started and phase.endswith(f": {LOAD_MODEL_PHASE}"):
            elapsed = self._progress.tasks[task].elapsed or 0.0
            self._progress.console.print(
                f"{phase.removesuffix(LOAD_MODEL_PHASE)}model loaded in {elapsed:.1f} s"
            )

    def show(self, name: str, *, completed: float, total: float | None, **fields: Any) -> None:
        """Set the bar ``name`` to ``completed`` and its ``fields`` (added, of ``total``, first).

        Nothing happens when the display is off.
        """
        if self._progress is None:
            return
        task = self._tasks.get(name)
        if task is None:
            task = self._progress.add_task(name, total=total, **fields)
            self._tasks[name] = task
        self._progress.update(task, completed=completed, **fields)
