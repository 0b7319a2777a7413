"""How a stage's cost figures are shown: one formatting for the console, HTML and compare."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:  # annotations only: the report models load when a report does
    from groundkit.judgments import StageReport
    from groundkit.judgments.report import StageCost

__all__ = ["COST_COLUMNS", "cost_basis_sentence", "format_figure", "render_cost_table"]

COST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("index_seconds", "index"),
    ("latency_p50", "p50/query"),
    ("latency_p95", "p95/query"),
    ("latency_p99", "p99/query"),
    ("embedding_calls", "embed calls"),
    ("model_calls", "model calls"),
    ("tokens", "tokens"),
    ("chunks_indexed", "chunks"),
    ("characters_indexed", "chars indexed"),
    ("peak_memory_bytes", "peak mem"),
    ("usd", "USD"),
)
"""Figure and column heading, in the order shown."""

_SECONDS = frozenset(
    {"index_seconds", "search_seconds", "latency_p50", "latency_p95", "latency_p99"}
)


def format_figure(name: str, value: float | None) -> str:
    """A cost figure for people: seconds in s/ms/µs, bytes in MiB, counts with separators.

    ``None`` (not measured, or unpriced) is shown as ``—``.
    """
    if value is None:
        return "—"
    if name in _SECONDS:
        if value >= 1.0:
            return f"{value:.2f} s"
        if value >= 1e-3:
            return f"{value * 1e3:.1f} ms"
        return f"{value * 1e6:.0f} µs"
    if name == "peak_memory_bytes":
        return f"{value / 2**20:.1f} MiB"
    if name == "usd":
        return f"${value:.4g}"
    return f"{int(value):,}"


def cost_basis_sentence(stages: Sequence[StageReport]) -> str:
    """Say how the latencies and memory of these stages were measured (the table's caption)."""
    timed = [s.name for s in stages if s.cost is not None and s.cost.latency_basis == "per_query"]
    parts = [
        "latency per query: "
        + (f"timed query by query for {', '.join(timed)}; " if timed else "")
        + ("the other stages' " if timed else "")
        + "batch seconds attributed evenly to its queries (p50 = p95 = p99)",
    ]
    methods = {s.cost.memory_method for s in stages if s.cost is not None}
    if "rss_peak_reset" in methods:
        parts.append("peak memory: the process's resident-set peak, reset when the stage starts")
    elif "rss_delta" in methods:
        parts.append("peak memory: resident set after the stage minus before (a lower bound)")
    else:
        parts.append("peak memory: not measurable on this platform")
    parts.append("USD only from a price given in the config (— unpriced)")
    return "; ".join(parts)


def _costed(stages: Sequence[StageReport]) -> list[tuple[StageReport, StageCost]]:
    return [(s, s.cost) for s in stages if s.cost is not None]


def render_cost_table(console: Console, stages: Sequence[StageReport]) -> None:
    """Print each stage's cost and latency (nothing when no stage recorded any: older reports)."""
    rows = _costed(stages)
    if not rows:
        return
    shown = [
        (name, title)
        for name, title in COST_COLUMNS
        # USD is always shown: "unpriced" is worth seeing, not hiding.
        if name == "usd" or any(cost.figure(name) is not None for _, cost in rows)
    ]
    table = Table(
        title="cost and latency per stage",
        title_justify="left",
        caption=cost_basis_sentence(stages),
        caption_justify="left",
    )
    table.add_column("stage", no_wrap=True)
    for _, title in shown:
        table.add_column(title, justify="right", no_wrap=True)
    for stage, cost in rows:
        cells: list[Text | str] = [Text(stage.name, style="bold")]
        cells += [format_figure(name, cost.figure(name)) for name, _ in shown]
        table.add_row(*cells)
    console.print(table)
