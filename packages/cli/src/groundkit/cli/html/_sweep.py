"""The sweep's HTML page (``sweep.html``): the Pareto front plotted and tabled.

Built from the same pieces as the report page (``_html_template``: escaping, the number rule,
the stylesheet and the page frame; ``_html_plots``: matplotlib to inline SVG in the report's
style), so it is as self-contained, static and deterministic as the report.
"""

from __future__ import annotations

import matplotlib as mpl

from groundkit.cli.__about__ import __version__
from groundkit.cli.html._plots import _RC, VERDICT_STYLES, _figure, _inline_svg
from groundkit.cli.html._template import esc, fmt_count, number_cell, page, verdict_badge
from groundkit.harness import SweepSummary
from groundkit.harness.sweep import SweepPoint, pareto_front
from groundkit.judgments.report import StageComparison

__all__ = ["render_sweep_html", "sweep_scatter_svg"]

_NAV = (("front", "Pareto front"), ("arms", "Arms"))
_FRONT_COLOUR, _OTHER_COLOUR, _BASELINE_COLOUR = "#0072B2", "#9a9a9a", "#000000"


def _plotted(summary: SweepSummary) -> list[SweepPoint]:
    return [
        p
        for p in summary.points
        if p.error is None and p.metric_mean is not None and p.context_chars is not None
    ]


def sweep_scatter_svg(summary: SweepSummary) -> str:
    """The headline metric against characters of context read; the front joined and filled."""
    points = _plotted(summary)
    with mpl.rc_context(_RC):
        figure = _figure(6.8, 4.8)
        ax = figure.subplots()
        ax.grid(True)
        # The line is the front of this plot's two axes; the filled points are the sweep's.
        flat = {p.name: (p.metric_mean or 0.0, p.context_chars or 0.0, None) for p in points}
        named = set(pareto_front(flat, ("metric", "context_chars")))
        front = sorted((p for p in points if p.name in named), key=lambda p: p.context_chars or 0.0)
        if front:
            ax.plot(
                [p.context_chars or 0.0 for p in front],
                [p.metric_mean or 0.0 for p in front],
                color=_FRONT_COLOUR,
                linewidth=1.2,
                linestyle=(0, (5.0, 2.5)),
                drawstyle="steps-pre",
                label=f"front of {summary.metric} and characters read",
            )
        for point in points:
            baseline = point.role == "baseline"
            colour = (
                _BASELINE_COLOUR
                if baseline
                else (_FRONT_COLOUR if point.on_front else _OTHER_COLOUR)
            )
            marker = "s" if baseline else ("o" if point.on_front else "x")
            ax.plot(
                [point.context_chars or 0.0],
                [point.metric_mean or 0.0],
                linestyle="none",
                marker=marker,
                markersize=7.5 if point.on_front else 6.0,
                color=colour,
            )
            ax.annotate(
                point.name,
                (point.context_chars or 0.0, point.metric_mean or 0.0),
                xytext=(5, 4),
                textcoords="offset points",
                fontsize=8.5,
                color="#1a1a1a",
            )
        ax.set_xlabel(f"characters of context read (first {summary.context_k} hits, mean)")
        ax.set_ylabel(f"{summary.metric} (mean over queries)")
        if front:
            ax.legend(loc="lower right")
        return _inline_svg(
            figure,
            prefix="sweep-front",
            title=f"{summary.metric} against characters of context read",
            description=(
                f"One point per arm and the baseline (square); arms on the sweep's Pareto front "
                f"({', '.join(summary.front_axes)}) are filled circles, the others crosses; the "
                f"dashed line joins the front of {summary.metric} and characters read alone. "
                "The values are in the table below."
            ),
        )


def _figure_cell(point: SweepPoint, field: str, value: float | None, text: str) -> str:
    if value is None:
        return "<td>—</td>"
    attributes = (
        f'data-stage="{esc(point.name)}" data-field="{field}" data-value="{esc(repr(value))}"'
    )
    return f'<td class="num" {attributes}>{text}</td>'


def _verdict_cell(point: SweepPoint, comparison: StageComparison | None, metric: str) -> str:
    if comparison is not None:
        return "<td>" + verdict_badge(comparison.verdict, stage=point.name, metric=metric) + "</td>"
    return "<td>" + ("same as baseline" if point.same_as_baseline else "—") + "</td>"


def _row(point: SweepPoint, metric: str) -> str:
    name = esc(point.name)
    if point.role == "baseline":
        name += ' <span class="tag">baseline</span>'
    if point.error is not None:
        failed = f'<td colspan="7">failed: {esc(point.error)}</td>'
        return f'<tr data-arm="{esc(point.name)}"><th scope="row">{name}</th>{failed}</tr>'
    comparison = next((c for c in point.comparisons if c.metric == metric), None)
    effect = (
        "<td>—</td>"
        if comparison is None
        else number_cell(
            comparison.effect, field="effect", stage=point.name, metric=metric, signed=True
        )
    )
    chars, latency = point.context_chars, point.latency_p95
    cells = [
        f'<th scope="row">{name}</th>',
        '<td class="front">' + ("★" if point.on_front else "") + "</td>",
        number_cell(point.metric_mean or 0.0, field="mean", stage=point.name, metric=metric),
        effect,
        _verdict_cell(point, comparison, metric),
        _figure_cell(point, "context_chars", chars, fmt_count(round(chars or 0.0))),
        _figure_cell(point, "latency_p95", latency, f"{(latency or 0.0) * 1000:.3f}"),
        "<td>" + esc(" → ".join(point.stages)) + "</td>",
    ]
    return f'<tr data-arm="{esc(point.name)}">{"".join(cells)}</tr>'


def _table(summary: SweepSummary) -> str:
    head = (
        '<tr><th scope="col">arm</th><th scope="col">front</th>'
        f'<th scope="col">{esc(summary.metric)}</th><th scope="col">Δ vs baseline</th>'
        '<th scope="col">verdict</th><th scope="col">context chars</th>'
        '<th scope="col">latency p95 (ms)</th><th scope="col">stages</th></tr>'
    )
    rows = "".join(_row(p, summary.metric) for p in summary.points)
    return (
        f'<div class="table-scroll"><table><thead>{head}</thead><tbody>{rows}</tbody></table></div>'
    )


def render_sweep_html(summary: SweepSummary) -> str:
    """The sweep summary as one self-contained HTML page."""
    level = f"{summary.confidence_level:.0%}"
    front = ", ".join(summary.front) or "none"
    symbols = " ".join(esc(f"{style.symbol} {word}") for word, style in VERDICT_STYLES.items())
    body = (
        '<section id="front"><h2>Pareto front</h2>'
        f"<p>On the front over {esc(', '.join(summary.front_axes))} (no other point is at "
        f"least as good on every one and better on one; {esc(summary.metric)} higher, "
        f"characters read and latency lower): <strong>{esc(front)}</strong>.</p>"
        f"<figure>{sweep_scatter_svg(summary)}</figure></section>\n"
        '<section id="arms"><h2>Arms</h2>'
        f"<p>Every arm is compared with the baseline on every headline metric as one family "
        f"({esc(summary.adjustment)}, {summary.family_size} decisions, {level} intervals). "
        f"Verdict symbols: {symbols}.</p>"
        f"{_table(summary)}</section>"
    )
    header = (
        "<h1>Retrieval sweep</h1>"
        f'<p data-field="fingerprint" data-value="{esc(summary.corpus_fingerprint)}">'
        f"{len(summary.points) - 1} arms · corpus "
        f"<code>{esc(summary.corpus_fingerprint[:12])}</code>"
        f" · judgments <code>{esc(summary.judgments_fingerprint[:12])}</code>"
        f" · created {esc(summary.created_at)}</p>"
    )
    footer = (
        "<p><strong>Number rule.</strong> Metric values and differences are rounded to 4 "
        "decimals; the exact value is in each number's <code>data-value</code>.</p>"
        f"<p>Sweep schema {esc(summary.schema_version)} · page generated by groundkit-cli "
        f"{esc(__version__)} (<code>grk eval sweep</code>).</p>"
    )
    return page(
        title=f"Retrieval sweep · {summary.metric}",
        header=header,
        nav=_NAV,
        body=body,
        footer=footer,
    ).replace('content="groundkit grk eval report"', 'content="groundkit grk eval sweep"')
