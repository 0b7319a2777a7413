"""Console rendering of evaluation reports and comparisons (rich tables, marks and notes).

Everything here only reads data; it never computes a statistic that is not already in the
report or handed in, so what the console shows is exactly what the report file says.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any, Literal

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli.console._cost_view import render_cost_table
from groundkit.cli.console._fit import print_table

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
    "bottom_line",
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
        extras = [
            f"{key}={value}"
            for key, value in sorted(settings.items())
            if key != "kind" and value is not None  # an unset limit is not "None" to a reader
        ]
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
    print_table(console, table)


def _p_text(comparison: StageComparison) -> str:
    """The test's p (``±`` its Monte Carlo standard error when it has one), then the adjusted p."""
    se = comparison.p_value_standard_error
    text = f"p {comparison.p_value:.2g}" + (f"±{se:.1g}" if se else "")
    if comparison.role == "guardrail":
        return text + " (guardrail)"
    adjusted = comparison.p_adjusted if comparison.p_adjusted is not None else comparison.p_holm
    return text + f" adj {adjusted:.2g}"


def _gated(comparison: StageComparison) -> bool:
    """An interval clear of zero whose verdict the family-wise gate still holds back."""
    clear = comparison.low > 0 or comparison.high < 0
    return comparison.outcome == "inconclusive" and comparison.role == "decision" and clear


def _comparison_cell(comparison: StageComparison) -> Text:
    mark, style = VERDICT_MARKS[comparison.outcome]
    cell = Text(format_delta(comparison.effect) + " ", style="bold")
    cell.append(
        mark + ("†" if _gated(comparison) else ""),
        style=style if comparison.role == "decision" else "dim",
    )
    cell.append("\n" + format_interval(comparison.low, comparison.high, signed=True), style="dim")
    cell.append("\n" + _p_text(comparison), style="dim")
    return cell


def _comparisons_caption(report: EvalReport) -> str:
    """The legend: which test each p comes from, and why a clear interval can be inconclusive."""
    tests = sorted({c.test for s in report.stages for c in s.comparisons if c.test})
    gated = any(_gated(c) for s in report.stages for c in s.comparisons)
    parts = [
        "p: the test's two-sided p"
        + (f" ({', '.join(tests)})" if tests else "")
        + ", ± its Monte Carlo standard error where it is estimated; adj: adjusted over the family"
    ]
    if gated:
        parts.append(
            "† the interval excludes zero but the adjusted p does not clear the family-wise "
            "gate, so no verdict is claimed"
        )
    return "; ".join(parts)


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
        f"difference from {report.baseline.name} ({level}% interval; verdicts from paired "
        f"tests, {scope})"
    )


def render_comparisons(console: Console, report: EvalReport, metrics: Sequence[str]) -> None:
    """Print each non-baseline stage's difference from the baseline with interval and verdict."""
    candidates = [s for s in report.stages if not s.baseline and s.error is None]
    if not candidates:
        return
    table = Table(
        title=_comparisons_title(report),
        title_justify="left",
        caption=_comparisons_caption(report),
        caption_justify="left",
        show_lines=True,
    )
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
    print_table(console, table)


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
    print_table(console, table, keep=2)


def render_notes(console: Console, notes: Sequence[str], *, title: str = "notes") -> None:
    """Print the notes as a bulleted list (they say what the numbers cannot)."""
    if not notes:
        return
    console.print(Text(title, style="bold"))
    # A grid, so that a note wrapping at the terminal's width keeps its hanging indent.
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=3, justify="right", no_wrap=True)
    grid.add_column(ratio=1)
    for note in notes:
        grid.add_row("•", Text(note))
    console.print(grid)


def _best(report: EvalReport, metric: str) -> StageReport | None:
    scored = [s for s in report.stages if s.error is None and metric in s.aggregates]
    return max(scored, key=lambda s: s.aggregates[metric].mean, default=None)


def bottom_line(report: EvalReport, metrics: Sequence[str]) -> str | None:
    """One sentence saying which stage is best.

    The best stage on the primary metric (with its difference from the baseline), and the
    best at the first character budget shown (``recall@2000c``).
    """
    if not metrics:
        return None
    primary = report.run.bootstrap.primary_metric or metrics[0]
    best = _best(report, primary)
    if best is None:
        return None
    line = f"best on {primary}: {best.name} {format_value(best.aggregates[primary].mean)}"
    comparison = next((c for c in best.comparisons if c.metric == primary), None)
    if comparison is not None:
        line += (
            f", {format_delta(comparison.effect)} "
            f"{format_interval(comparison.low, comparison.high, signed=True)} vs "
            f"{report.baseline.name} ({VERDICT_MARKS[comparison.outcome][0]})"
        )
    elif best.baseline:
        line += " (the baseline)"
    budget = next((m for m in metrics if re.fullmatch(r"[a-z_]+@\d+c", m) and m != primary), None)
    at_budget = _best(report, budget) if budget is not None else None
    if budget is not None and at_budget is not None:
        characters = int(budget.rsplit("@", 1)[1][:-1])
        line += (
            f"; at {characters:,} characters read ({budget}): {at_budget.name} "
            f"{format_value(at_budget.aggregates[budget].mean)}"
        )
    return line


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
    line = bottom_line(report, metrics)
    if line is not None:
        console.print(Text("bottom line: ", style="bold") + Text(line))
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


PROGRESS_VARIABLE = "GROUNDKIT_PROGRESS"
"""Environment variable choosing the progress display when no flag does."""

_PROGRESS_MODES = ("auto", "bars", "lines", "off")


def _progress_from_environment() -> str | None:
    """The progress display ``GROUNDKIT_PROGRESS`` asks for (``None`` when unset).

    ``auto`` (bars on a terminal, lines otherwise), ``bars``, ``lines`` or ``off``.

    Raises:
        InputError: Any other value.
    """
    value = os.environ.get(PROGRESS_VARIABLE)
    if value is None or not value.strip():
        return None
    mode = value.strip().lower()
    if mode not in _PROGRESS_MODES:
        from groundkit.cli._errors import InputError

        raise InputError(
            f"environment variable {PROGRESS_VARIABLE}={value!r}: expected one of "
            + ", ".join(_PROGRESS_MODES)
        )
    return mode


class ProgressDisplay:
    """The engine's ``progress(phase, done, total)`` hook, drawn for a person or a log.

    On a terminal (standard error), transient rich progress bars: every bar shows its elapsed
    time and an estimate of the time left. Loading a model is a step of its own
    (``<stage>: load model``): its bar shows the time spent while the model loads, and a line
    saying how long it took stays once it has. When standard error is not a terminal (a CI
    log, a file), plain lines instead: one when a phase ends, with its time and the time since
    the start, and at most one every 30 s while a long phase runs, so a log always shows where
    a run is. ``enabled=True`` forces the bars, ``enabled=False`` (``--no-progress``) shows
    nothing; with neither, the environment variable ``GROUNDKIT_PROGRESS`` (``auto``, ``bars``,
    ``lines`` or ``off``) chooses. Use as a context manager; call the instance as the hook.

    Another display draws its own bars through :meth:`show` with its own ``columns`` (the
    sweep's arms bar does).
    """

    LINE_EVERY = 30.0
    """Seconds between two plain lines of one long phase."""

    def __init__(
        self,
        *,
        enabled: bool | None = None,
        file: IO[str] | None = None,
        columns: Sequence[str | ProgressColumn] | None = None,
    ) -> None:
        stream = file if file is not None else sys.stderr
        is_tty = bool(getattr(stream, "isatty", lambda: False)())
        chosen = _progress_from_environment() if enabled is None else None
        self.enabled = (
            (is_tty if chosen in {None, "auto"} else chosen == "bars")
            if enabled is None
            else enabled
        )
        self.lines = enabled is None and (
            chosen == "lines" or (chosen in {None, "auto"} and not is_tty)
        )
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self._stream = stream
        self._columns = None if columns is None else tuple(columns)
        self._start = time.monotonic()
        self._phases: dict[str, list[float]] = {}  # phase -> [started, last line]

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
        """Advance the bar of ``phase`` (created on first sight), or write its plain line."""
        if self.lines:
            self._line(phase, done, total)
            return
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

    def _line(self, phase: str, done: int, total: int) -> None:
        """One plain line when ``phase`` ends, or every :attr:`LINE_EVERY` seconds while it runs."""
        now = time.monotonic()
        state = self._phases.get(phase)
        if state is None or (state[0] < 0 and done < total):
            state = self._phases[phase] = [now, now]  # first sight, or the phase began again
        if state[0] < 0:
            return  # its end was written already
        if done >= total:
            text = f"{phase}: done in {now - state[0]:.1f} s"
            state[0] = -1.0
        elif now - state[1] >= self.LINE_EVERY:
            text = f"{phase}: {done:,} of {total:,} after {now - state[0]:.0f} s"
            state[1] = now
        else:
            return
        self._stream.write(f"[{now - self._start:7.1f} s] {text}\n")
        self._stream.flush()

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
