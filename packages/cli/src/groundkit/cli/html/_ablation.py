"""The HTML report's ablation section: each component of a hybrid or rerank stage.

Only reads the report's ablation rows (their means, differences, intervals and verdicts were
decided in the run by the verdict engine); computes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from groundkit.cli.console._report import ablation_title
from groundkit.cli.html._plots import StageStyle
from groundkit.cli.html._template import esc, number_cell, stage_label, verdict_badge
from groundkit.judgments import EvalReport
from groundkit.judgments.report import AblationRow

__all__ = ["ablation_section"]


def _cells(row: AblationRow, metric: str) -> str:
    aggregate = row.aggregates.get(metric)
    comparison = next((c for c in row.comparisons if c.metric == metric), None)
    if aggregate is None or comparison is None:
        return '<td class="num group-start muted">—</td>'
    mean = number_cell(
        aggregate.mean, field="ablation-mean", stage=row.stage, metric=metric, tag="span"
    )
    effect = number_cell(
        comparison.effect,
        field="ablation-effect",
        stage=row.stage,
        metric=metric,
        signed=True,
        tag="span",
    )
    low, high = (
        number_cell(
            value,
            field=f"ablation-{name}",
            stage=row.stage,
            metric=metric,
            signed=True,
            tag="span",
        )
        for name, value in (("low", comparison.low), ("high", comparison.high))
    )
    badge = verdict_badge(comparison.outcome)
    guardrail = (
        ' <span class="small muted">guardrail</span>' if comparison.role == "guardrail" else ""
    )
    # One cell per metric, so that a hybrid's four headline metrics fit a 1,000-pixel page:
    # the component's mean, then whole − component with its interval and verdict.
    return (
        f'<td class="num group-start"><span class="muted small">component</span> {mean}<br>'
        f'<strong>{effect}</strong> <span class="range">[{low}, {high}]</span><br>'
        f"{badge}{guardrail}</td>"
    )


def ablation_section(
    report: EvalReport, metrics: Sequence[str], styles: Mapping[str, StageStyle]
) -> str:
    """Each ablation row: the component's mean and whole − component (empty: no section)."""
    if not report.ablation:
        return ""
    head_top = "".join(f'<th scope="col" class="num group-start">{esc(m)}</th>' for m in metrics)
    rows: list[str] = []
    for row in report.ablation:
        label = stage_label(row.stage, styles.get(row.stage))
        source = " (replayed)" if row.source == "replay" else ""
        removed = ", ".join(row.removed)
        cells = "".join(_cells(row, metric) for metric in metrics)
        rows.append(
            f'<tr data-ablation-stage="{esc(row.stage)}" data-component="{esc(row.component)}">'
            f'<th scope="row">{label}</th><td>{esc(row.component)}{esc(source)}</td>'
            f'<td class="small">{esc(removed)}</td>{cells}</tr>'
        )
    return (
        '<section id="ablation" aria-labelledby="ablation-h"><h2 id="ablation-h">Ablation</h2>'
        '<p class="lead">Each part of a hybrid or rerank stage alone, scored in the same run: '
        "a fused stage by itself, the fusion without the re-ordering, a fusion without one of "
        "its inputs (replayed from the run's ranked lists, nothing searched again). A "
        "positive difference says the removed part helps.</p>"
        '<div class="table-scroll"><table class="headline">'
        f"<caption>{esc(ablation_title(report))}. Each cell: the component's mean, then "
        "whole − component with its interval and verdict.</caption>"
        '<thead><tr><th scope="col">stage</th>'
        '<th scope="col">component</th><th scope="col">removed</th>'
        f"{head_top}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</div></section>"
    )
