"""Plots of the HTML report, rendered by matplotlib to inline SVG.

Figures are built with ``matplotlib.figure.Figure`` directly, never through pyplot, so no GUI
backend is involved and the process's backend setting is left alone (the SVG canvas renders
them, headless like Agg). Rendering is deterministic (fixed hash salt, no date in the
metadata, no random ids) and keeps text as ``<text>`` elements (``svg.fonttype = "none"``) so
it stays selectable and takes the page's system font. Math parsing is off: a ``$`` in a stage
name is a dollar sign. Every figure's element ids get a figure-specific prefix, so several
inline SVGs never share an id.

Colours come from the Okabe–Ito palette (distinct under the common colour-vision
deficiencies); each stage also has its own line style and marker, and verdicts their own
marker shape, so nothing is told by colour alone and the plots survive greyscale printing.
"""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from groundkit.cli.html._data import Curve
from groundkit.judgments.report import StageComparison

__all__ = [
    "VERDICT_STYLES",
    "StageStyle",
    "VerdictStyle",
    "budget_curve_svg",
    "forest_svg",
    "rank_curve_svg",
    "signed_tick",
    "stage_styles",
]

# Okabe–Ito: black for the baseline, then blue, vermillion, bluish green, reddish purple,
# orange, sky blue, yellow (the last two are light; they come after the dark ones).
_COLOURS = ("#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
_DASHES: tuple[tuple[float, ...], ...] = (
    (),
    (6.0, 2.5),
    (1.5, 2.0),
    (7.0, 2.0, 1.5, 2.0),
    (3.0, 2.0),
    (7.0, 2.0, 1.5, 2.0, 1.5, 2.0),
    (10.0, 3.0),
    (2.0, 4.0),
)
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

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


@dataclass(frozen=True)
class StageStyle:
    """How one stage is drawn everywhere in the page.

    Attributes:
        colour: Hex colour.
        dashes: Dash pattern in points (empty for a solid line).
        marker: Matplotlib marker code.
    """

    colour: str
    dashes: tuple[float, ...]
    marker: str


@dataclass(frozen=True)
class VerdictStyle:
    """How a verdict is drawn: symbol and word in text, colour and marker in plots.

    Attributes:
        symbol: Text symbol shown beside the word.
        colour: Hex colour.
        marker: Matplotlib marker code.
        filled: Whether the plot marker is filled.
    """

    symbol: str
    colour: str
    marker: str
    filled: bool


VERDICT_STYLES: dict[str, VerdictStyle] = {
    "better": VerdictStyle("▲", "#0072B2", "^", filled=True),
    "worse": VerdictStyle("▼", "#D55E00", "v", filled=True),
    "inconclusive": VerdictStyle("◆", "#595959", "D", filled=False),
    "equivalent": VerdictStyle("=", "#009E73", "s", filled=False),
    "too few queries": VerdictStyle("…", "#595959", "o", filled=False),
}
"""Verdict to its style; the symbol and the word are always shown together in text."""


def stage_styles(names: Sequence[str]) -> dict[str, StageStyle]:
    """A distinct colour, dash pattern and marker per stage, in report order."""
    return {
        name: StageStyle(
            colour=_COLOURS[i % len(_COLOURS)],
            dashes=_DASHES[i % len(_DASHES)],
            marker=_MARKERS[i % len(_MARKERS)],
        )
        for i, name in enumerate(names)
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


def _percent(value: float, _: int) -> str:
    return f"{value:.0%}" if math.isfinite(value) else ""


# --- forest plot ----------------------------------------------------------------------------


def forest_svg(
    comparisons: Mapping[str, Sequence[StageComparison]],
    metrics: Sequence[str],
    *,
    confidence_level: float,
    baseline: str,
) -> str:
    """Each candidate stage's difference from the baseline per metric, with interval and verdict.

    Args:
        comparisons: Candidate stage name to its comparisons (report order).
        metrics: Metrics to draw, one panel each.
        confidence_level: Level of the intervals (for the description).
        baseline: Baseline stage name.

    Returns:
        The ``<svg>`` element.
    """
    stages = list(comparisons)
    panels = [m for m in metrics if any(c.metric == m for cs in comparisons.values() for c in cs)]
    # At most three panels a row, rows as full as possible (four panels: two by two).
    rows = max(1, math.ceil(len(panels) / 3))
    columns = max(1, math.ceil(len(panels) / rows))
    row_height = 0.42 * len(stages) + 0.9
    with mpl.rc_context(_RC):
        figure = _figure(3.6 * columns + 1.4, row_height * rows + 0.55)
        axes_grid = figure.subplots(rows, columns, squeeze=False, sharey=True)
        flat: list[Axes] = [ax for row in axes_grid for ax in row]
        positions = {name: len(stages) - 1 - i for i, name in enumerate(stages)}
        # One symmetric x range for every panel, so effects compare across metrics at a glance.
        extent = max(
            (max(abs(c.low), abs(c.high)) for cs in comparisons.values() for c in cs),
            default=0.0,
        )
        span = extent * 1.12 if extent > 0 else 0.05
        for ax, metric in zip(flat, panels, strict=False):
            _forest_panel(ax, metric, comparisons, positions)
            ax.set_xlim(-span, span)
        for ax in flat[len(panels) :]:
            ax.set_visible(False)
        for ax in flat:
            ax.set_yticks(range(len(stages)), list(reversed(stages)))
            ax.set_ylim(-0.6, len(stages) - 0.4)
        handles: list[Any] = [
            Line2D(
                [],
                [],
                linestyle="none",
                marker=style.marker,
                markersize=8,
                markerfacecolor=style.colour if style.filled else "white",
                markeredgecolor=style.colour,
                markeredgewidth=1.6,
                label=verdict,
            )
            for verdict, style in VERDICT_STYLES.items()
        ]
        figure.legend(
            handles=handles,
            loc="outside lower center",
            ncols=len(handles),
            handletextpad=0.4,
            columnspacing=1.6,
        )
        level = f"{confidence_level:.0%}"
        description = (
            f"Difference of each stage from the baseline {baseline} on "
            f"{', '.join(panels)}, with {level} intervals; the vertical line marks no "
            "difference. The numbers are in the table below the plot."
        )
        return _inline_svg(
            figure,
            prefix="forest",
            title=f"Difference from the baseline {baseline}",
            description=description,
        )


def signed_tick(value: float) -> str:
    """A difference's tick label with as many decimals as it needs (up to 4), signed.

    Rounding to a fixed two decimals printed a tick at −0.075 as "−0.08", a value the axis
    does not show; the fewest decimals that write the tick exactly never do that.
    """
    if abs(value) < 1e-12:
        return "0"
    for places in range(1, 5):
        if abs(round(value, places) - value) < 1e-9:
            return f"{value:+.{places}f}"
    return f"{value:+.4f}"


def _forest_panel(
    ax: Axes,
    metric: str,
    comparisons: Mapping[str, Sequence[StageComparison]],
    positions: Mapping[str, int],
) -> None:
    ax.axvline(0.0, color="#1a1a1a", linewidth=1.1, zorder=1)
    for stage, stage_comparisons in comparisons.items():
        for comparison in stage_comparisons:
            if comparison.metric != metric:
                continue
            style = VERDICT_STYLES[comparison.outcome]
            y = positions[stage]
            # Bar and marker both follow the decision: an interval clear of zero whose exact
            # test did not survive the family's adjustment is dashed, not a claim.
            clear = comparison.low > 0.0 or comparison.high < 0.0
            unclaimed = clear and comparison.outcome not in ("better", "worse")
            ax.plot(
                [comparison.low, comparison.high],
                [y, y],
                color=style.colour,
                linewidth=2.2,
                linestyle=(0, (4, 2)) if unclaimed else "-",
                solid_capstyle="butt",
                zorder=2,
            )
            for end in (comparison.low, comparison.high):
                ax.plot([end, end], [y - 0.12, y + 0.12], color=style.colour, linewidth=1.4)
            ax.plot(
                [comparison.effect],
                [y],
                linestyle="none",
                marker=style.marker,
                markersize=9,
                markerfacecolor=style.colour if style.filled else "white",
                markeredgecolor=style.colour,
                markeredgewidth=1.6,
                zorder=3,
            )
    ax.set_title(metric, fontsize=11, loc="left", fontweight="bold")
    ax.set_xlabel("difference (candidate − baseline)")
    ax.grid(axis="x", zorder=0)
    ax.tick_params(axis="y", length=0)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: signed_tick(v)))


# --- curves ---------------------------------------------------------------------------------


def _curve_axes(
    ax: Axes,
    curves: Sequence[Curve],
    styles: Mapping[str, StageStyle],
) -> None:
    for curve in curves:
        style = styles[curve.stage]
        x = curve.x.astype(float)
        ax.fill_between(x, curve.low, curve.high, color=style.colour, alpha=0.13, linewidth=0)
        ax.plot(
            x,
            curve.mean,
            color=style.colour,
            linewidth=1.8,
            dashes=style.dashes if style.dashes else (None, None),
            marker=style.marker,
            markersize=5.5,
            markevery=_mark_every(len(x)),
            markerfacecolor=style.colour,
            markeredgecolor="white",
            markeredgewidth=0.6,
            label=curve.stage,
        )
    ax.set_ylim(0.0, 1.0)
    ax.yaxis.set_major_formatter(FuncFormatter(_percent))
    ax.grid(True, which="major")
    ax.figure.legend(
        loc="outside lower center",
        ncols=min(4, len(curves)),
        handlelength=3.4,
        columnspacing=1.6,
    )


def _mark_every(count: int) -> list[int]:
    """Marker positions roughly evenly spread on the log axis (always the first and last)."""
    if count <= 12:
        return list(range(count))
    picks = {round(v) - 1 for v in [1.0, *(count ** (i / 9) for i in range(1, 10))]}
    return sorted(p for p in picks if 0 <= p < count)


def _log_ticks(ax: Axes, ticks: Sequence[int], labels: Sequence[str]) -> None:
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator([float(t) for t in ticks]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks([float(t) for t in ticks], list(labels))


def rank_curve_svg(
    curves: Sequence[Curve], styles: Mapping[str, StageStyle], *, confidence_level: float
) -> str:
    """``recall@k`` against ``k`` (log axis) per stage with bootstrap bands."""
    with mpl.rc_context(_RC):
        figure = _figure(6.4, 4.6)
        ax = figure.subplots()
        _curve_axes(ax, curves, styles)
        top = int(max((int(c.x[-1]) for c in curves), default=1))
        ticks = [t for t in (1, 2, 3, 5, 10, 20, 30, 50, 100) if t <= top]
        if top not in ticks:
            ticks.append(top)
        _log_ticks(ax, ticks, [str(t) for t in ticks])
        ax.set_xlim(0.9, top * 1.1)
        ax.set_xlabel("rank cutoff k (log scale)")
        ax.set_ylabel("recall@k (share of gold quotes found)")
        level = f"{confidence_level:.0%}"
        return _inline_svg(
            figure,
            prefix="rank-curve",
            title="Recall at rank k",
            description=(
                f"Mean recall@k for k from 1 to {top} for each stage, with {level} bootstrap "
                "bands over queries. Selected values are in the table below the plot."
            ),
        )


def budget_curve_svg(
    curves: Sequence[Curve], styles: Mapping[str, StageStyle], *, confidence_level: float
) -> str:
    """Recall within the first N characters read (log axis) per stage with bootstrap bands."""
    with mpl.rc_context(_RC):
        figure = _figure(6.4, 4.6)
        ax = figure.subplots()
        _curve_axes(ax, curves, styles)
        low = int(min((int(c.x[0]) for c in curves), default=250))
        high = int(max((int(c.x[-1]) for c in curves), default=20_000))
        candidates = (250, 500, 1000, 2000, 5000, 10_000, 20_000)
        ticks = [t for t in candidates if low <= t <= high] or [low, high]
        _log_ticks(ax, ticks, [f"{t:,}" for t in ticks])
        ax.set_xlim(low / 1.08, high * 1.08)
        ax.set_xlabel("characters read, best hit first (log scale)")
        ax.set_ylabel("recall (share of gold quotes found)")
        level = f"{confidence_level:.0%}"
        return _inline_svg(
            figure,
            prefix="budget-curve",
            title="Recall at equal context budget",
            description=(
                f"Mean recall within the first N characters of the ranked hits, N from {low:,} "
                f"to {high:,}, for each stage, with {level} bootstrap bands over queries."
            ),
        )
