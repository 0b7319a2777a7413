"""Sections of the HTML report about whole stages.

Summary, settings, curves and breakdown (the differences from the baseline are in
``_forest``). Each function returns an HTML fragment; every string from the report is
escaped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from groundkit.cli.html._data import BreakdownRow, Curve, CurveSet, scored_stages
from groundkit.cli.html._plots import (
    StageStyle,
    budget_curve_svg,
    rank_curve_svg,
)
from groundkit.cli.html._template import (
    esc,
    fmt_count,
    fmt_value,
    number_cell,
    stage_label,
    verdict_badge,
)
from groundkit.harness.analysis import DetectionLimits
from groundkit.judgments import EvalReport, StageReport
from groundkit.judgments.report import StageComparison
from groundkit.stats import family_text, limit_text

__all__ = [
    "breakdown_section",
    "curves_section",
    "level_text",
    "settings_text",
    "stages_section",
    "summary_section",
]

_RANK_ROWS = (1, 3, 5, 10, 20, 50, 100)
_BUDGET_ROWS = (500, 1000, 2000, 4000, 8000, 20000)


def level_text(report: EvalReport) -> str:
    """The report's confidence level as a percentage (``95%``)."""
    return f"{report.run.bootstrap.confidence_level:.0%}"


def settings_text(settings: Mapping[str, Any] | None, *, lead: str | None = None) -> str:
    """Settings as ``lead key=value · key=value`` (nested values as compact JSON), escaped."""
    if not settings:
        return '<span class="muted">—</span>'
    parts: list[str] = []
    head = settings.get(lead) if lead is not None else None
    for key, value in sorted(settings.items()):
        if key == lead:
            continue
        shown = (
            value
            if isinstance(value, str | int | float | bool) or value is None
            else (json.dumps(value, sort_keys=True, ensure_ascii=False))
        )
        parts.append(f'<span class="mono">{esc(key)}={esc(shown)}</span>')
    text = " · ".join(parts)
    if head is not None:
        text = f"<strong>{esc(head)}</strong>" + (f" {text}" if text else "")
    return text


# --- summary --------------------------------------------------------------------------------


def _interval_html(stage: str, metric: str, low: float, high: float, *, signed: bool) -> str:
    low_cell = number_cell(low, field="low", stage=stage, metric=metric, signed=signed, tag="span")
    high_cell = number_cell(
        high, field="high", stage=stage, metric=metric, signed=signed, tag="span"
    )
    return f'<span class="range">[{low_cell}, {high_cell}]</span>'


def _headline_table(
    report: EvalReport, metrics: Sequence[str], styles: Mapping[str, StageStyle]
) -> str:
    baseline = report.baseline.name
    head_top = "".join(
        f'<th scope="colgroup" colspan="2" class="group-start">{esc(m)}</th>' for m in metrics
    )
    head_sub = "".join(
        '<th scope="col" class="num group-start">mean</th>'
        f'<th scope="col" class="num">Δ vs {esc(baseline)}</th>'
        for _ in metrics
    )
    rows: list[str] = []
    for stage in report.stages:
        label = stage_label(stage.name, styles.get(stage.name), baseline=stage.baseline)
        if stage.error is not None:
            rows.append(
                f'<tr><th scope="row">{label}</th><td colspan="{2 * len(metrics)}" '
                f'class="group-start"><span class="verdict verdict-worse">✖ failed</span> '
                f'<span class="small">{esc(stage.error)}</span></td></tr>'
            )
            continue
        by_metric = {c.metric: c for c in stage.comparisons}
        cells: list[str] = []
        for metric in metrics:
            aggregate = stage.aggregates.get(metric)
            if aggregate is None:
                cells.append('<td class="num group-start muted">—</td>')
            else:
                mean = number_cell(
                    aggregate.mean, field="mean", stage=stage.name, metric=metric, tag="span"
                )
                interval = _interval_html(
                    stage.name, metric, aggregate.low, aggregate.high, signed=False
                )
                cells.append(
                    f'<td class="num group-start"><strong>{mean}</strong><br>{interval}</td>'
                )
            cells.append(_delta_cell(stage, by_metric.get(metric)))
        rows.append(f'<tr><th scope="row">{label}</th>{"".join(cells)}</tr>')
    caption = (
        f"Mean over {fmt_count(report.answerable_count)} answerable queries with its "
        f"{level_text(report)} bootstrap interval; Δ is the paired difference from the baseline "
        f"{esc(baseline)} with its verdict (Holm-adjusted across stages)."
    )
    return (
        '<div class="table-scroll"><table class="headline">'
        f"<caption>{caption}</caption>"
        f'<thead><tr><th scope="col" rowspan="2">stage</th>{head_top}</tr>'
        f"<tr>{head_sub}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _delta_cell(stage: StageReport, comparison: StageComparison | None) -> str:
    if stage.baseline:
        return '<td class="num muted">baseline</td>'
    if comparison is None:
        return '<td class="num muted">—</td>'
    effect = number_cell(
        comparison.effect,
        field="effect",
        stage=stage.name,
        metric=comparison.metric,
        signed=True,
        tag="span",
    )
    badge = verdict_badge(comparison.outcome, stage=stage.name, metric=comparison.metric)
    return f'<td class="num"><strong>{effect}</strong><br>{badge}</td>'


def _glance(report: EvalReport, metrics: Sequence[str], styles: Mapping[str, StageStyle]) -> str:
    """One line per candidate stage: on which headline metrics it is better, worse, unclear."""
    lines: list[str] = []
    for stage in scored_stages(report):
        if stage.baseline:
            continue
        by_verdict: dict[str, list[str]] = {}
        for comparison in stage.comparisons:
            if comparison.metric in metrics and comparison.role == "decision":
                by_verdict.setdefault(comparison.outcome, []).append(comparison.metric)
        if not by_verdict:
            continue
        parts = [
            f"{verdict_badge(verdict)} on {esc(', '.join(by_verdict[verdict]))}"
            for verdict in ("better", "worse", "equivalent", "inconclusive", "too few queries")
            if verdict in by_verdict
        ]
        lines.append(
            f"<li>{stage_label(stage.name, styles.get(stage.name))} "
            f'<span class="glance-parts">{" · ".join(parts)}</span></li>'
        )
    if not lines:
        return ""
    return (
        f'<div class="panel glance"><h3>Against the baseline {esc(report.baseline.name)}</h3>'
        f'<ul class="glance-list">{"".join(lines)}</ul></div>'
    )


def _cards(report: EvalReport, limits: DetectionLimits) -> str:
    failed = sum(1 for s in report.stages if s.error is not None)
    stage_sub = f"{failed} failed" if failed else "all ran"
    cards = [
        (
            "answerable queries",
            f'<span class="num" data-field="answerable" data-value="{report.answerable_count}">'
            f"{fmt_count(report.answerable_count)}</span>",
            "scored and ranked",
        ),
        (
            "unanswerable queries",
            f'<span class="num" data-field="unanswerable" '
            f'data-value="{report.unanswerable_count}">'
            f"{fmt_count(report.unanswerable_count)}</span>",
            "listed, not scored",
        ),
        ("stages", fmt_count(len(report.stages)), esc(stage_sub)),
    ]
    cards.append(
        (
            "detection limit",
            number_cell(
                limits.unpaired,
                field="detection-limit",
                tag="span",
                text=limit_text(limits.unpaired),
            ),
            f"unpaired: two independent runs, n = {fmt_count(limits.query_count)}",
        )
    )
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><div class="label">{label}</div><div class="big">{big}</div>'
            f'<div class="sub">{sub}</div></div>'
            for label, big, sub in cards
        )
        + "</div>"
    )


def _detection_panel(
    report: EvalReport,
    limits: DetectionLimits,
    metrics: Sequence[str],
    styles: Mapping[str, StageStyle],
) -> str:
    power = round(100 * limits.power)
    family = esc(family_text(limits.adjustment, limits.family_size))
    text = (
        f"With {fmt_count(limits.query_count)} answerable queries, two unrelated runs must "
        f"differ by <strong>{limit_text(limits.unpaired)}</strong> or more before the "
        f"difference can be told from noise (the unpaired detection limit: {power}% power, "
        f"two-sided α = {limits.alpha:g}, worst-case variance). Stages scored on the same "
        "queries are paired, which usually lowers it: the table gives each comparison's paired "
        f"detection limit — the true difference its verdict catches with {power}% power at the "
        f"level of its family ({family}), for the test the verdict uses (exact McNemar "
        "for right-or-wrong metrics, the paired test otherwise). A difference below its limit "
        "is one this set cannot reliably detect; “none” means no difference is, at this n."
    )
    table = ""
    if limits.paired and metrics:
        head = "".join(f'<th scope="col" class="num">{esc(m)}</th>' for m in metrics)
        body = []
        for name, floors in limits.paired.items():
            cells = "".join(
                number_cell(
                    floor, field="paired-floor", stage=name, metric=metric, text=limit_text(floor)
                )
                if (floor := floors.get(metric)) is not None
                else '<td class="num muted">none</td>'
                if metric in floors
                else '<td class="num muted">n/a</td>'
                for metric in metrics
            )
            label = stage_label(name, styles.get(name))
            body.append(f'<tr><th scope="row">{label}</th>{cells}</tr>')
        table = (
            '<div class="table-scroll narrow"><table>'
            f"<caption>Paired detection limit of each comparison with "
            f"{esc(report.baseline.name)} ({family})</caption>"
            f'<thead><tr><th scope="col">stage</th>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>"
        )
    return (
        '<h3 id="detection-limit">Detection limit</h3>'
        f'<div class="split"><p class="lead">{text}</p>{table}</div>'
    )


def summary_section(
    report: EvalReport,
    metrics: Sequence[str],
    limits: DetectionLimits,
    styles: Mapping[str, StageStyle],
) -> str:
    """Key counts, the headline table, the detection limit and the notes."""
    notes = (
        '<h3 id="notes">Notes</h3><div class="callout"><ul class="notes">'
        + "".join(f"<li>{esc(note)}</li>" for note in report.notes)
        + "</ul></div>"
        if report.notes
        else ""
    )
    headline = (
        _headline_table(report, metrics, styles)
        if metrics
        else '<p class="muted">The report names no metrics.</p>'
    )
    return (
        '<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>'
        + _cards(report, limits)
        + _glance(report, metrics, styles)
        + headline
        + _detection_panel(report, limits, metrics, styles)
        + notes
        + "</section>"
    )


# --- stages ---------------------------------------------------------------------------------


def stages_section(report: EvalReport, styles: Mapping[str, StageStyle]) -> str:
    """Each stage's retriever, chunker and index, as run."""
    rows: list[str] = []
    for stage in report.stages:
        chunker = (
            settings_text(stage.chunker.model_dump(mode="json"), lead="kind")
            if stage.chunker is not None
            else '<span class="muted">own spans</span>'
        )
        index = []
        if stage.chunk_count is not None:
            index.append(f"{fmt_count(stage.chunk_count)} chunks")
        if stage.indexed_documents is not None:
            index.append(f"{fmt_count(stage.indexed_documents)} documents")
        if stage.encoder_max_tokens is not None:
            index.append(f"encoder max {fmt_count(stage.encoder_max_tokens)} tokens")
        status = (
            f'<span class="verdict verdict-worse">✖ failed</span> '
            f'<span class="small">{esc(stage.error)}</span>'
            if stage.error is not None
            else '<span class="muted">ran</span>'
        )
        label = stage_label(stage.name, styles.get(stage.name), baseline=stage.baseline)
        rows.append(
            f'<tr><th scope="row">{label}'
            f"</th><td><strong>{esc(stage.kind)}</strong></td>"
            f"<td>{settings_text(stage.retriever.as_dict())}</td><td>{chunker}</td>"
            f'<td class="small">{esc(" · ".join(index)) or "—"}</td><td>{status}</td></tr>'
        )
    return (
        '<section id="stages" aria-labelledby="stages-h"><h2 id="stages-h">Stages</h2>'
        '<p class="lead">What each stage ran: the retriever and its settings, the chunker, and '
        "the index it built.</p>"
        '<div class="table-scroll"><table><caption>Stages in report order; the first is the '
        "baseline.</caption><thead><tr>"
        '<th scope="col">stage</th><th scope="col">retriever</th><th scope="col">settings</th>'
        '<th scope="col">chunker</th><th scope="col">index</th><th scope="col">status</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )


# --- curves ---------------------------------------------------------------------------------


def _curve_table(
    curves: Sequence[Curve],
    xs: Sequence[int],
    *,
    metric_name: str,
    x_label: str,
    field: str,
    styles: Mapping[str, StageStyle],
    caption: str,
) -> str:
    available = set(curves[0].x.tolist())
    shown = [x for x in xs if x in available]
    head = "".join(
        f'<th scope="col" class="num">{stage_label(c.stage, styles.get(c.stage))}</th>'
        for c in curves
    )
    rows: list[str] = []
    for x in shown:
        cells = []
        metric = metric_name.format(x=x)
        for curve in curves:
            i = int(curve.x.tolist().index(x))
            mean = number_cell(
                float(curve.mean[i]), field=field, stage=curve.stage, metric=metric, tag="span"
            )
            band = (
                f'<span class="range">[{fmt_value(float(curve.low[i]))}, '
                f"{fmt_value(float(curve.high[i]))}]</span>"
            )
            cells.append(f'<td class="num">{mean}<br>{band}</td>')
        row_head = f'<th scope="row" class="num">{esc(x_label.format(x=x))}</th>'
        rows.append(f"<tr>{row_head}{''.join(cells)}</tr>")
    return (
        "<details><summary>Show the numbers</summary>"
        f'<div class="table-scroll"><table><caption>{caption}</caption><thead><tr>'
        f'<th scope="col" class="num">{esc(x_label.format(x="x").split(" ")[0])}</th>{head}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div></details>"
    )


def curves_section(
    report: EvalReport,
    curves: CurveSet,
    styles: Mapping[str, StageStyle],
) -> str:
    """Recall by rank and recall by characters read, each with its numbers."""
    rank, budget = curves.rank, curves.budget
    head = '<section id="curves" aria-labelledby="curves-h"><h2 id="curves-h">Recall curves</h2>'
    if not rank:
        return head + '<p class="lead">No stage has results to plot.</p></section>'
    level = level_text(report)
    band = (
        f"Bands: each point's {level} interval over queries (exact Clopper–Pearson for "
        "right-or-wrong scores, t or the distribution-free betting interval otherwise)."
    )
    cutoffs = sorted({*_RANK_ROWS, *report.run.cutoffs})
    parts = [
        head,
        '<p class="lead">Recall recomputed from the recorded hits and gold spans for every '
        "cutoff (a quote counts once, at the first hit that overlaps it). Rank cutoffs favour "
        "long chunks, which carry more text per rank; the equal-budget view reads the same "
        "number of characters from every stage and is the fair comparison across chunk "
        f"sizes. {band}</p>",
        '<div class="two-up">',
        "<figure>",
        rank_curve_svg(rank, styles, confidence_level=report.run.bootstrap.confidence_level),
        "<figcaption>recall@k for k = 1 … "
        f"{int(rank[0].x[-1])}: the share of gold quotes touched by the top k hits."
        "</figcaption>",
        _curve_table(
            rank,
            cutoffs,
            metric_name="recall@{x}",
            x_label="k = {x}",
            field="curve",
            styles=styles,
            caption=f"Mean recall@k and its {level} band.",
        ),
        "</figure>",
    ]
    if budget:
        budgets = sorted({*_BUDGET_ROWS, *report.run.budgets})
        parts += [
            "<figure>",
            budget_curve_svg(
                budget, styles, confidence_level=report.run.bootstrap.confidence_level
            ),
            "<figcaption>Recall within the first N characters of the ranking (the last hit "
            "read is cut at the budget): equal context for every stage.</figcaption>",
            _curve_table(
                budget,
                budgets,
                metric_name="recall@{x}c",
                x_label="{x} chars",
                field="curve",
                styles=styles,
                caption=f"Mean recall within N characters and its {level} band.",
            ),
            "</figure>",
        ]
    else:
        parts.append(
            '<p class="muted">No equal-budget curve: document-level hits have no length to '
            "budget.</p>"
        )
    parts.append("</div></section>")
    return "".join(parts)


# --- breakdown ------------------------------------------------------------------------------


def _breakdown_table(
    rows: Sequence[BreakdownRow],
    metric: str,
    stages: Sequence[str],
    styles: Mapping[str, StageStyle],
) -> str:
    groups = {"category": "by category", "qtype": "by question type"}
    head = "".join(
        f'<th scope="col" class="num">{stage_label(name, styles.get(name))}</th>' for name in stages
    )
    body: list[str] = []
    previous = "all"
    for row in rows:
        if row.group != previous:
            body.append(
                f'<tr class="group"><th scope="rowgroup" colspan="{2 + len(stages)}">'
                f"{esc(groups.get(row.group, row.group))}</th></tr>"
            )
            previous = row.group
        values = {name: row.means[name][metric] for name in stages}
        best = max(values.values())
        cells = "".join(
            number_cell(
                values[name],
                field=f"breakdown-{row.group}",
                stage=name,
                metric=metric,
                extra_class="best" if values[name] == best and len(stages) > 1 else "",
            ).replace("<td ", f'<td data-group="{esc(row.label)}" ', 1)
            for name in stages
        )
        label = f"<strong>{esc(row.label)}</strong>" if row.group == "all" else esc(row.label)
        body.append(
            f'<tr><th scope="row">{label}</th>'
            f'<td class="num muted">{fmt_count(row.query_count)}</td>{cells}</tr>'
        )
    return (
        '<div class="table-scroll"><table class="breakdown">'
        f"<caption><strong>{esc(metric)}</strong>: mean per group; best stage in bold.</caption>"
        '<thead><tr><th scope="col">group</th><th scope="col" class="num">n</th>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def breakdown_section(
    report: EvalReport,
    rows: Sequence[BreakdownRow],
    metrics: Sequence[str],
    styles: Mapping[str, StageStyle],
) -> str:
    """Mean of each headline metric per stage, per category and question type."""
    stages = [s.name for s in scored_stages(report)]
    head = (
        '<section id="breakdown" aria-labelledby="breakdown-h">'
        '<h2 id="breakdown-h">By category and question type</h2>'
    )
    if not stages or not metrics:
        return head + '<p class="lead">No stage has results to break down.</p></section>'
    tables = "".join(_breakdown_table(rows, metric, stages, styles) for metric in metrics)
    return (
        head + '<p class="lead">Mean of each headline metric over the answerable queries of '
        "each group (a query without results counts as zero); the first row is the whole set "
        "and repeats the report's means. Small groups are noisy: read n first.</p>"
        f'<div class="grid-tables">{tables}</div></section>'
    )
