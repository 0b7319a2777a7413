"""The sweep's HTML page (``sweep.html``): the Pareto front plotted and tabled.

Built from the same pieces as the report page (``_template``: escaping, the number rule, the
stylesheet and the page frame; ``_plots``: the verdict styles), so it is as self-contained,
static and deterministic as the report. Its scatter plot, with labels placed around the
points, is drawn by matplotlib (``matplotlib.figure.Figure`` directly, never pyplot, so no GUI
backend is involved and the process's backend setting is left alone) and inlined as SVG:
deterministic (fixed hash salt, no date in the metadata), text kept as ``<text>``
(``svg.fonttype = "none"``), math parsing off (a ``$`` in a name is a dollar sign), ids
prefixed. The report page itself needs no matplotlib (``_svg``), so this module is imported
only when a sweep's page is written.
"""

from __future__ import annotations

import html
import io
import re
from typing import Any

import matplotlib as mpl
from matplotlib.figure import Figure

from groundkit.cli.__about__ import __version__
from groundkit.cli.html._plots import VERDICT_STYLES
from groundkit.cli.html._template import esc, fmt_count, number_cell, page, verdict_badge
from groundkit.harness import SweepSummary
from groundkit.harness.sweep import SweepPoint, pareto_front
from groundkit.judgments.report import StageComparison

__all__ = ["render_sweep_html", "sweep_scatter_svg"]

# Typed loosely: matplotlib's stubs key rc_context by a Literal of every rc name.
_RC: Any = {
    "svg.fonttype": "none",
    "svg.hashsalt": "groundkit-html-report",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 11.0,
    "axes.edgecolor": "#4d4d4d",
    "axes.labelcolor": "#1a1a1a",
    "axes.linewidth": 0.8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": "#4d4d4d",
    "ytick.color": "#4d4d4d",
    "xtick.labelcolor": "#1a1a1a",
    "ytick.labelcolor": "#1a1a1a",
    "grid.color": "#d9d9d9",
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "figure.dpi": 72.0,
}

# --- SVG post-processing --------------------------------------------------------------------

_ID = re.compile(r'\bid="([^"]+)"')
_REFERENCE = re.compile(r'(\bid="|\bhref="#|url\(#)([^")]+)')
_HEAD = re.compile(r"\A.*?(<svg\b[^>]*>)", re.DOTALL)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)
_SIZE = re.compile(r'\s(?:width|height)="[^"]*"')
_VIEWBOX = re.compile(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"')


def _inline_svg(figure: Figure, *, prefix: str, title: str, description: str) -> str:
    """The figure as an ``<svg>`` element ready to inline in HTML (accessible, unique ids)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    head = _HEAD.match(text)
    if head is None:  # pragma: no cover - matplotlib always writes an <svg> root
        raise RuntimeError("matplotlib wrote no <svg> element")
    root = head.group(1)
    body = _METADATA.sub("", text[head.end() :], count=1)
    ids = set(_ID.findall(body))
    body = _REFERENCE.sub(
        lambda m: f"{m[1]}{prefix}-{m[2]}" if m[2] in ids else m[0],
        body,
    )
    viewbox = _VIEWBOX.search(root)
    width = viewbox.group(1) if viewbox else "0"
    root = _SIZE.sub("", root)
    label = f"{prefix}-title {prefix}-desc"
    root = root.replace(
        "<svg ",
        f'<svg class="plot" role="img" aria-labelledby="{label}" '
        f'style="max-width: {float(width) * 96 / 72:.0f}px" ',
        1,
    )
    accessible = (
        f'<title id="{prefix}-title">{html.escape(title)}</title>'
        f'<desc id="{prefix}-desc">{html.escape(description)}</desc>'
    )
    return root + accessible + body.rstrip() + "\n"


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), layout="constrained")
    figure.patch.set_alpha(0.0)
    return figure


_NAV = (("front", "Pareto front"), ("arms", "Arms"))
_FRONT_COLOUR, _OTHER_COLOUR, _BASELINE_COLOUR = "#0072B2", "#9a9a9a", "#000000"


def _plotted(summary: SweepSummary) -> list[SweepPoint]:
    return [
        p
        for p in summary.points
        if p.error is None and p.metric_mean is not None and p.context_chars is not None
    ]


# Label offsets tried in turn (points, from the marker) until one overlaps no placed label.
_LABEL_OFFSETS = ((6, 5), (6, -13), (-6, 5), (-6, -13), (6, 14), (-6, 14), (6, -22), (-6, -22))
_LABEL_FONT = 8.5


def _place_labels(ax: Any, points: list[SweepPoint]) -> None:
    """Name every point, moving a label that would overlap one already placed.

    A greedy search over a few offsets in display space, the boxes estimated from the font
    size (a label that finds no free place takes the first offset).
    """
    ax.figure.draw_without_rendering()  # the axis limits in force, so display positions hold
    placed: list[tuple[float, float, float, float]] = []
    char_width, height = _LABEL_FONT * 0.6, _LABEL_FONT * 1.25
    for point in sorted(points, key=lambda p: (-(p.metric_mean or 0.0), p.name)):
        x, y = ax.transData.transform((point.context_chars or 0.0, point.metric_mean or 0.0))
        width = char_width * len(point.name)
        chosen = _LABEL_OFFSETS[0]
        for dx, dy in _LABEL_OFFSETS:
            left = x + dx if dx > 0 else x + dx - width
            box = (left, y + dy, left + width, y + dy + height)
            if not any(_overlap(box, other) for other in placed):
                chosen = (dx, dy)
                break
        dx, dy = chosen
        left = x + dx if dx > 0 else x + dx - width
        placed.append((left, y + dy, left + width, y + dy + height))
        ax.annotate(
            point.name,
            (point.context_chars or 0.0, point.metric_mean or 0.0),
            xytext=(dx, dy),
            textcoords="offset points",
            ha="left" if dx > 0 else "right",
            fontsize=_LABEL_FONT,
            color="#1a1a1a",
        )


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def sweep_scatter_svg(summary: SweepSummary) -> str:
    """The headline metric against characters of context read; the front joined and filled.

    Each point carries its interval (a vertical bar) and links to its arm's report; the
    legend sits below the axes, where it covers no point.
    """
    points = _plotted(summary)
    with mpl.rc_context(_RC):
        figure = _figure(6.8, 5.2)
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
            _draw_point(ax, point)
        _place_labels(ax, points)
        ax.set_xlabel(f"characters read (first {summary.context_k} hits, mean)")
        ax.set_ylabel(f"{summary.metric} (mean over queries)")
        figure.legend(loc="outside lower center", ncols=2, frameon=False, fontsize=8.5)
        return _inline_svg(
            figure,
            prefix="sweep-front",
            title=f"{summary.metric} against characters of context read",
            description=(
                f"One point per arm and the baseline (square), each with its "
                f"{summary.confidence_level:.0%} interval; arms on the sweep's Pareto front "
                f"({', '.join(summary.front_axes)}) are filled circles, the others crosses; the "
                f"dashed line joins the front of {summary.metric} and characters read alone. "
                "Characters read count whole documents at document level. Each point links "
                "to its arm's report. The values are in the table below."
            ),
        )


def _draw_point(ax: Any, point: SweepPoint) -> None:
    baseline = point.role == "baseline"
    colour = _BASELINE_COLOUR if baseline else (_FRONT_COLOUR if point.on_front else _OTHER_COLOUR)
    x, y = point.context_chars or 0.0, point.metric_mean or 0.0
    low, high = point.metric_low, point.metric_high
    label = "baseline" if baseline else ("on the front" if point.on_front else "off the front")
    if low is not None and high is not None:
        ax.errorbar(
            [x], [y], yerr=[[max(0.0, y - low)], [max(0.0, high - y)]], fmt="none",
            ecolor=colour, elinewidth=1.0, capsize=2.5, alpha=0.7,
        )  # fmt: skip
    (marker,) = ax.plot(
        [x],
        [y],
        linestyle="none",
        marker="s" if baseline else ("o" if point.on_front else "x"),
        markersize=7.5 if point.on_front else 6.0,
        color=colour,
        label=label if label not in ax.get_legend_handles_labels()[1] else None,
    )
    href = _href(point.report)
    if href is not None:
        marker.set_url(href)  # the SVG wraps the marker in a link to the arm's report


def _href(path: str) -> str | None:
    """A link to an arm's report: a relative path only (never a URL with a scheme)."""
    return None if ":" in path or path.startswith(("/", "\\")) else path


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
    href = _href(point.report)
    name = esc(point.name) if href is None else f'<a href="{esc(href)}">{esc(point.name)}</a>'
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
        f"<figure>{sweep_scatter_svg(summary)}<figcaption>Each point with its {level} "
        "interval; a point links to its arm's report. Characters read are those of the first "
        f"{summary.context_k} hits: whole documents at document level.</figcaption></figure>"
        "</section>\n"
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
