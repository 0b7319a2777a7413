"""Console rendering for `grk evalset`: assessment, filter results, type distributions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli.console._fit import print_table
from groundkit.evalset import CAUTION, EvalSetQuality, Note
from groundkit.evalset.filters import FilterResult
from groundkit.stats import limit_text

__all__ = ["render_distribution", "render_filter_result", "render_notes", "render_quality"]


def _floor(value: float | None) -> str:
    return "—" if value is None else limit_text(value)


def render_notes(console: Console, notes: Sequence[Note]) -> None:
    """Print a warnings log, one entry a line, CAUTION in bold yellow."""
    for note in notes:
        style = "bold yellow" if note.level == CAUTION else "dim"
        console.print(Text(f"{note.level}: ", style=style) + Text(note.message))


def render_quality(console: Console, quality: EvalSetQuality) -> None:
    """Print the assessment: counts, detection floors, types, then the warnings log."""
    console.print(Text(quality.summary(), style="bold"))
    counts = Table(title="eval set", title_justify="left")
    counts.add_column("measure")
    counts.add_column("value", justify="right")
    counts.add_row("questions", str(quality.size))
    counts.add_row("answerable (have gold)", str(quality.answerable))
    counts.add_row(f"reviewed (meta.{quality.reviewed_key})", str(quality.reviewed))
    counts.add_row(
        "portable (gold resolves)",
        "unchecked against a corpus" if quality.portable is None else str(quality.portable),
    )
    if quality.discriminating_power:
        mean = quality.mean_discriminating_power
        counts.add_row("mean discriminating power", "—" if mean is None else f"{mean:.2f}")
        who = "baseline" if quality.system_count == 1 else f"all {quality.system_count} systems"
        counts.add_row(f"aced by {who}", str(len(quality.aced_by_all)))
    if quality.constant_across_stages:
        counts.add_row("same score in every stage", str(len(quality.constant_across_stages)))
    if quality.closed_book_checked is not None:
        counts.add_row(
            "answered without retrieval",
            f"{len(quality.closed_book_answerable)} of {quality.closed_book_checked} checked",
        )
    console.print(counts)

    floors = Table(
        title=f"smallest detectable difference ({quality.power:.0%} power, "
        f"{quality.alpha:g} two-sided)",
        title_justify="left",
    )
    floors.add_column("assumption")
    floors.add_column("detection limit", justify="right")
    floors.add_row(
        "unpaired: two independent runs, worst-case variance (can_support uses this)",
        _floor(quality.detectable_difference),
    )
    floors.add_row(
        "paired, per-query differences ±1 (worst case; a family of one)",
        _floor(quality.paired_worst_case),
    )
    for stage, value in quality.paired_observed.items():
        floors.add_row(
            f"paired, observed {stage} vs baseline ({quality.metric}; a family of one)",
            _floor(value),
        )
    console.print(floors)
    console.print(
        Text(
            "A gap below the floor cannot be claimed from this set; a gap above it still needs "
            "the paired comparison (grk eval compare) to be called real.",
            style="dim",
        )
    )
    render_distribution(console, quality.question_types)
    render_notes(console, quality.warnings())


def render_distribution(console: Console, distribution: Mapping[str, int]) -> None:
    """Print the count and share of each question type."""
    total = sum(distribution.values())
    table = Table(title="question types", title_justify="left")
    table.add_column("type")
    table.add_column("count", justify="right")
    table.add_column("share", justify="right")
    for name, count in distribution.items():
        table.add_row(name, str(count), f"{count / total:.0%}" if total else "—")
    print_table(console, table)


def render_filter_result(console: Console, result: FilterResult, *, limit: int = 20) -> None:
    """Print the summary, rejections per filter, the first rejections, and the warnings."""
    console.print(Text(result.summary(), style="bold"))
    table = Table(title="rejected per filter (in order)", title_justify="left")
    table.add_column("filter")
    table.add_column("rejected", justify="right")
    for name, count in result.by_filter().items():
        table.add_row(name, str(count))
    print_table(console, table)
    if result.rejected:
        shown = Table(title="rejections", title_justify="left")
        shown.add_column("id", no_wrap=True)
        shown.add_column("filter", no_wrap=True)
        shown.add_column("why")
        for rejection in result.rejected[:limit]:
            shown.add_row(rejection.query_id, rejection.filter, rejection.reason)
        console.print(shown)
        if len(result.rejected) > limit:
            console.print(Text(f"... and {len(result.rejected) - limit} more", style="dim"))
    render_notes(console, result.warnings)
