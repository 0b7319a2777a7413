"""Rendering of the track record, and the hook `grk eval compare --track-record` calls.

The hook is the only place the compare command touches the track record: it reads the two
stage configurations from the items files' headers (for inferring the applied fix), hands the
rows and the comparison already made to :func:`groundkit.diagnosis.record_measurement`, and
prints one line saying what was appended, or why nothing was.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli.console._fit import print_table
from groundkit.cli.console._report import VERDICT_MARKS, format_delta, format_interval
from groundkit.diagnosis import (
    Caution,
    MeasurementOutcome,
    TrackSummary,
    record_measurement,
)
from groundkit.harness import load_items
from groundkit.stats import ItemComparison

__all__ = [
    "ComparedSide",
    "print_cautions",
    "record_compared",
    "render_track_summary",
]


def _delta(value: float | None) -> Text:
    return Text("—", style="dim") if value is None else Text(format_delta(value))


def print_cautions(console: Console, cautions: list[Caution]) -> None:
    """Print one CAUTION line per skipped record line (standard error in the commands)."""
    for caution in cautions:
        console.print(Text(caution.message, style="bold yellow"))


def _config(path: Path, stage: str) -> dict[str, Any] | None:
    try:
        return dict(load_items(path).stage(stage).config)
    except ValueError:
        return None  # the compare already read this file; a config is only a convenience here


@dataclass(frozen=True)
class ComparedSide:
    """One side of an items comparison: its items file, stage and per-query rows."""

    path: Path
    stage: str
    rows: dict[str, dict[str, float]]


def record_compared(
    record_path: Path,
    a: ComparedSide,
    b: ComparedSide,
    *,
    applied: str | None,
    comparison: ItemComparison,
    console: Console,
    err_console: Console,
) -> MeasurementOutcome:
    """Append what B measured for the fix it applied, and say so in one line.

    Args:
        record_path: The track record.
        a: The side the fix was predicted for.
        b: The side with the fix applied.
        applied: The fix named with ``--applied`` (else inferred from the configs).
        comparison: The comparison the command made (its settings are reused).
        console: Where the outcome line goes.
        err_console: Where cautions go.

    Returns:
        The outcome.
    """
    outcome = record_measurement(
        record_path,
        a.rows,
        b.rows,
        comparison,
        applied=applied,
        path_a=a.path,
        path_b=b.path,
        stage_a=a.stage,
        stage_b=b.stage,
        config_a=_config(a.path, a.stage),
        config_b=_config(b.path, b.stage),
    )
    print_cautions(err_console, outcome.cautions)
    style = "green" if outcome.status == "recorded" else "yellow"
    console.print(Text("track record: ", style="bold") + Text(outcome.message, style=style))
    return outcome


def _inside(value: bool | None) -> Text:
    if value is None:
        return Text("—", style="dim")
    return Text("yes", style="green") if value else Text("no", style="red")


def render_track_summary(console: Console, summary: TrackSummary) -> None:
    """Print predicted against measured for every fix tried, then how far to trust them."""
    if not summary.rows:
        console.print(
            f"{summary.path}: {summary.predictions} predictions, no fix measured yet — after "
            "applying one, run: grk eval compare A.items.jsonl B.items.jsonl --track-record "
            f"{summary.path} [--applied FIX]"
        )
        return
    table = Table(
        title=f"{summary.path}: predicted against measured (gain in recall@k, B − A)",
        title_justify="left",
    )
    for header in (
        "measured at",
        "stage → B",
        "fix",
        "how",
        "expected",
        "ceiling",
        "reference",
        "measured",
        "interval",
        "inside",
        "verdict",
    ):
        numeric = header in ("expected", "ceiling", "reference", "measured", "interval")
        table.add_column(header, justify="right" if numeric else "left", no_wrap=header != "fix")
    for row in summary.rows:
        fix = Text(row.fix, style="bold")
        if row.exact:
            fix.append(" (exact)", style="dim")
        mark, style = VERDICT_MARKS.get(row.verdict, (row.verdict, ""))
        table.add_row(
            row.created_at.replace("+00:00", "Z"),
            f"{row.stage or '?'} → {row.stage_b or '?'}",
            fix,
            row.how,
            _delta(row.expected),
            _delta(row.ceiling),
            _delta(row.reference),
            Text(format_delta(row.measured), style="bold"),
            format_interval(row.low, row.high, signed=True),
            _inside(row.inside),
            Text(mark, style=style),
        )
    print_table(console, table)
    level = round(summary.rows[0].confidence_level * 100)
    parts = [f"{summary.tried} {'fix' if summary.tried == 1 else 'fixes'} tried"]
    if summary.with_expected:
        parts.append(
            f"the expected gain lay inside the measured {level}% interval for {summary.inside} "
            f"of {summary.with_expected}"
        )
    if summary.mean_absolute_error is not None and summary.mean_error is not None:
        parts.append(
            f"mean |measured − expected| {summary.mean_absolute_error:.3f}, mean measured − "
            f"expected {format_delta(summary.mean_error)} (positive: predictions too cautious)"
        )
    parts.append(
        f"{summary.untried} of {summary.predicted_fixes} predicted fixes with a positive "
        "expected gain not measured yet"
    )
    console.print(Text("; ".join(parts) + ".", style="dim"))
