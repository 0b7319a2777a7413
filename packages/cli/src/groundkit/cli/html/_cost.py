"""The HTML report's cost section: each stage's time, latency, model use, memory and USD."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from groundkit.cli.console._cost_view import cost_basis_sentence, cost_cell, cost_columns
from groundkit.cli.html._plots import StageStyle
from groundkit.cli.html._template import esc, stage_label
from groundkit.judgments import EvalReport, StageReport

__all__ = ["PHASE_COLUMNS", "cost_section"]

PHASE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("tokenize_seconds", "tokenize"),
    ("encode_seconds", "encode"),
    ("vector_search_seconds", "vector search"),
)
"""Phases a stage timed inside its index and search (dense stages): the page only, the
console's table keeps to 80 columns."""
_PHASES_SENTENCE = (
    "tokenize, encode, vector search: a model stage's own phases, inside its index and search "
    "times (tokenizing on a worker thread may overlap encoding)"
)


def _table(
    stages: Sequence[StageReport],
    columns: Sequence[tuple[str, str]],
    caption: str,
    styles: Mapping[str, StageStyle],
) -> str:
    """One compact table of cost figures, a row per stage."""
    header = "".join(f'<th scope="col">{esc(title)}</th>' for _, title in columns)
    rows: list[str] = []
    for stage in stages:
        assert stage.cost is not None
        cells = "".join(
            f'<td class="num" data-stage="{esc(stage.name)}" data-field="cost.{name}" '
            f'data-value="{esc("" if value is None else repr(value))}">'
            f"{esc(cost_cell(stage.cost, name))}</td>"
            for name, _ in columns
            for value in [stage.cost.figure(name)]
        )
        label = stage_label(stage.name, styles.get(stage.name), baseline=stage.baseline)
        rows.append(f'<tr><th scope="row">{label}</th>{cells}</tr>')
    return (
        '<div class="table-scroll"><table class="compact">'
        f"<caption>{esc(caption)}.</caption>"
        f'<thead><tr><th scope="col">stage</th>{header}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def cost_section(report: EvalReport, styles: Mapping[str, StageStyle]) -> str:
    """Cost and latency per stage (a report older than schema 1.3 says it has none)."""
    costed = [s for s in report.stages if s.cost is not None]
    head = (
        '<section id="cost" aria-labelledby="cost-h"><h2 id="cost-h">Cost and latency</h2>'
        '<p class="lead">What each stage cost to run. A dash is not measured (or, for USD, '
        "unpriced): groundkit never invents a price.</p>"
    )
    if not costed:
        return (
            head
            + '<p class="muted">This report records no cost (written before 1.3).</p>'
            + ("</section>")
        )
    costs = [s.cost for s in costed if s.cost is not None]
    main = _table(costed, cost_columns(costs), cost_basis_sentence(costed), styles)
    # A model stage's own phases: a table of their own, so the main one fits its card.
    phases = [c for c in PHASE_COLUMNS if any(cost.figure(c[0]) is not None for cost in costs)]
    timed = [
        s
        for s in costed
        if s.cost is not None and any(s.cost.figure(n) is not None for n, _ in phases)
    ]
    extra = _table(timed, phases, _PHASES_SENTENCE, styles) if phases and timed else ""
    return head + main + extra + "</section>"
