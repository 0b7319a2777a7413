"""How a stage's cost figures are shown: one formatting for the console, HTML and compare."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli.console._fit import print_table

if TYPE_CHECKING:  # annotations only: the report models load when a report does
    from groundkit.judgments import StageReport
    from groundkit.judgments.report import StageCost

__all__ = [
    "COST_COLUMNS",
    "cost_basis_sentence",
    "cost_cell",
    "cost_columns",
    "format_figure",
    "render_cost_table",
]

COST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("setup_seconds", "setup"),
    ("model_load_seconds", "model load"),
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
"""Figure and column heading, in the order shown (those no stage measured are left out)."""

_BATCH_TITLE = "per query (batch)"
_QUANTILES = ("latency_p95", "latency_p99")


def _in_seconds(name: str) -> bool:
    """Whether a cost figure is a duration (``*_seconds``, ``latency_*``)."""
    return name.endswith("_seconds") or name.startswith("latency_")


def format_figure(name: str, value: float | None) -> str:
    """A cost figure for people: seconds in s/ms/µs, bytes in MiB, counts with separators.

    ``None`` (not measured, or unpriced) is shown as ``—``.
    """
    if value is None:
        return "—"
    if _in_seconds(name):
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


def cost_columns(costs: Sequence[StageCost]) -> list[tuple[str, str]]:
    """The columns worth showing for these stages' costs: (figure, heading).

    A figure no stage measured is left out (USD stays: "unpriced" is worth seeing). When no
    stage timed its queries one by one, the three latency quantiles would be one number
    (a batch's seconds shared evenly), so a single "per query (batch)" column stands for them.
    """
    timed = any(cost.latency_basis == "per_query" for cost in costs)
    shown: list[tuple[str, str]] = []
    for name, title in COST_COLUMNS:
        measured = any(cost.figure(name) is not None for cost in costs)
        if name != "usd" and not measured:
            continue
        if not timed and name in _QUANTILES:
            continue
        shown.append((name, _BATCH_TITLE if name == "latency_p50" and not timed else title))
    return shown


def cost_cell(cost: StageCost, name: str) -> str:
    """One figure of a stage's cost, as shown.

    An index time read from a cache says so, and a batch-attributed latency is shown once,
    not as three equal quantiles.
    """
    value = cost.figure(name)
    if cost.latency_basis == "batch" and name in _QUANTILES:
        return "—"
    text = format_figure(name, value)
    cached = cost.cached_passages
    if name == "index_seconds" and value is not None and cached:
        whole = cost.chunks_indexed is not None and cached >= cost.chunks_indexed
        text += " (cached)" if whole else f" ({cached:,} cached)"
    return text


def cost_basis_sentence(stages: Sequence[StageReport]) -> str:
    """Say how the latencies and memory of these stages were measured (the table's caption)."""
    timed = [s.name for s in stages if s.cost is not None and s.cost.latency_basis == "per_query"]
    parts = [
        "latency per query: "
        + (f"timed query by query for {', '.join(timed)}; " if timed else "")
        + ("the other stages' " if timed else "")
        + "batch seconds shared evenly by its queries"
        + (" (one figure, in p50; — in p95 and p99)" if timed else ""),
        "setup: building the retriever (imports, a framework factory); model load apart from "
        "index and search",
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
    shown = cost_columns([cost for _, cost in rows])
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
        cells += [cost_cell(cost, name) for name, _ in shown]
        table.add_row(*cells)
    print_table(console, table)
