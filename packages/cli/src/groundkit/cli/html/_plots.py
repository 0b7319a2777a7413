"""Plots of the HTML report, drawn as inline SVG (``_svg``; no plotting library).

Each plot is written directly: a forest plot of every comparison's interval and verdict, and
the recall curves by rank and by characters read with their bootstrap bands. Rendering is
deterministic, text stays ``<text>`` (selectable, in the page's font), every element id has a
figure-specific prefix so several inline SVGs never share one, and each plot carries a title
and a description for screen readers.

Colours come from the Okabe–Ito palette (distinct under the common colour-vision
deficiencies); each stage also has its own line style and marker, and verdicts their own
marker shape, so nothing is told by colour alone and the plots survive greyscale printing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from groundkit.cli.html._data import Curve
from groundkit.cli.html._svg import (
    FONT_SIZE,
    Canvas,
    Frame,
    LegendEntry,
    legend_columns,
    legend_height,
    nice_ticks,
    text_width,
    tick_bins,
)
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
_PAD = 4.0  # figure margin, points
_LINE = 1.25 * FONT_SIZE  # height of a line of text
_BELOW_AXIS = 3.5 + 3.5 + FONT_SIZE  # tick, pad, tick labels


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


# --- forest plot ----------------------------------------------------------------------------


def _verdict_legend() -> list[LegendEntry]:
    return [
        LegendEntry(
            label=verdict,
            colour=style.colour,
            marker=style.marker,
            marker_size=8.0,
            filled=style.filled,
            marker_edge_width=1.6,
        )
        for verdict, style in VERDICT_STYLES.items()
    ]


@dataclass(frozen=True)
class _Grid:
    """Where the forest plot's panels go: one frame per metric, and the legend's layout."""

    frames: list[Frame]
    legend_columns: int
    legend_bottom: float


_WIDEST_TICK = text_width("+0.00")
_GAP = _WIDEST_TICK * 0.6 + 6.0  # room for the end tick labels of neighbouring panels
_LEAST_PANEL = 2.4 * 72  # a panel's least width, however long the stage names


def _gutter(stages: Sequence[str]) -> float:
    """Room left of the first column for the stage names."""
    return _PAD + max((text_width(s) for s in stages), default=0.0) + 3.5


def _forest_width(columns: int, stages: Sequence[str]) -> float:
    """The figure's width: 3.6 inches a panel plus 1.4, wider when stage names need it."""
    least = _gutter(stages) + _PAD + _WIDEST_TICK / 2 + (_LEAST_PANEL + _GAP) * columns - _GAP
    return max((3.6 * columns + 1.4) * 72, least)


def _forest_grid(
    panels: int, stages: Sequence[str], span: float, width: float, height: float
) -> _Grid:
    """Panels in rows of at most three (rows as full as possible), sharing the stage axis."""
    rows = max(1, math.ceil(panels / 3))
    columns = max(1, math.ceil(panels / rows))
    labels = list(VERDICT_STYLES)
    legend_cols = legend_columns(labels, most=len(labels), handle=2 * FONT_SIZE, room=width - 8)
    legend_rows = math.ceil(len(labels) / legend_cols)
    gutter = _gutter(stages)
    panel_width = (width - gutter - _PAD - _WIDEST_TICK / 2 - _GAP * (columns - 1)) / columns
    title, below = _LINE + 4.0, _BELOW_AXIS + 4.0 + _LINE
    block = (height - 2 * _PAD - legend_height(legend_rows)) / rows
    frames = [
        Frame(
            left=gutter + (index % columns) * (panel_width + _GAP),
            top=_PAD + (index // columns) * block + title,
            width=panel_width,
            height=block - title - below,
            x_limits=(-span, span),
            y_limits=(-0.6, len(stages) - 0.4),
        )
        for index in range(panels)
    ]
    return _Grid(frames, legend_cols, height - _PAD)


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
    rows = max(1, math.ceil(len(panels) / 3))
    columns = max(1, math.ceil(len(panels) / rows))
    row_height = 0.42 * len(stages) + 0.9
    canvas = Canvas(
        _forest_width(columns, stages), (row_height * rows + 0.55) * 72, prefix="forest"
    )
    # One symmetric x range for every panel, so effects compare across metrics at a glance.
    extent = max(
        (max(abs(c.low), abs(c.high)) for cs in comparisons.values() for c in cs),
        default=0.0,
    )
    span = extent * 1.12 if extent > 0 else 0.05
    grid = _forest_grid(len(panels), stages, span, canvas.width, canvas.height)
    positions = {name: len(stages) - 1 - i for i, name in enumerate(stages)}
    for frame, metric in zip(grid.frames, panels, strict=True):
        first_column = frame.left == grid.frames[0].left
        _forest_panel(canvas, frame, metric, comparisons, positions, labels=first_column)
    canvas.legend(
        _verdict_legend(),
        bottom=grid.legend_bottom,
        columns=grid.legend_columns,
        handle=2 * FONT_SIZE,
    )
    level = f"{confidence_level:.0%}"
    description = (
        f"Difference of each stage from the baseline {baseline} on "
        f"{', '.join(panels)}, with {level} intervals; the vertical line marks no "
        "difference. The numbers are in the table below the plot."
    )
    return canvas.svg(title=f"Difference from the baseline {baseline}", description=description)


def _forest_panel(
    canvas: Canvas,
    frame: Frame,
    metric: str,
    comparisons: Mapping[str, Sequence[StageComparison]],
    positions: Mapping[str, int],
    *,
    labels: bool,
) -> None:
    """One metric's panel: grid, zero line, each stage's interval and verdict marker."""
    canvas.rect(frame, fill="#ffffff")
    ticks = nice_ticks(*frame.x_limits, tick_bins(frame.width, vertical=False))
    canvas.grid(frame, xs=ticks)
    zero = frame.x(0.0)
    canvas.line([(zero, frame.top), (zero, frame.bottom)], colour="#1a1a1a", width=1.1)
    marks: list[tuple[float, float, str]] = []
    for stage, stage_comparisons in comparisons.items():
        for comparison in stage_comparisons:
            if comparison.metric != metric:
                continue
            y = frame.y(positions[stage])
            colour = VERDICT_STYLES[comparison.outcome].colour
            # Bar and marker both follow the decision: an interval clear of zero whose exact
            # test did not survive the family's adjustment is dashed, not a claim.
            clear = comparison.low > 0.0 or comparison.high < 0.0
            unclaimed = clear and comparison.outcome not in ("better", "worse")
            low, high = frame.x(comparison.low), frame.x(comparison.high)
            canvas.line(
                [(low, y), (high, y)], colour=colour, width=2.2, dashes=(4, 2) if unclaimed else ()
            )
            cap = frame.height / (frame.y_limits[1] - frame.y_limits[0]) * 0.12
            for end in (low, high):
                canvas.line([(end, y - cap), (end, y + cap)], colour=colour, width=1.4)
            marks.append((frame.x(comparison.effect), y, comparison.outcome))
    for x, y, outcome in marks:  # markers above every bar, as their layer was
        style = VERDICT_STYLES[outcome]
        canvas.marker(
            x,
            y,
            style.marker,
            size=9.0,
            face=style.colour if style.filled else "white",
            edge=style.colour,
            edge_width=1.6,
        )
    stage_ticks = [(float(p), name) for name, p in positions.items()] if labels else []
    canvas.axes(
        frame, x_ticks=[(t, signed_tick(t)) for t in ticks], y_ticks=stage_ticks, y_tick_length=0.0
    )
    canvas.text(frame.left, frame.top - 6.0, metric, anchor="start", bold=True)
    label_y = frame.bottom + _BELOW_AXIS + 4.0 + 0.76 * FONT_SIZE
    canvas.text(frame.left + frame.width / 2, label_y, "difference (candidate − baseline)")


# --- curves ---------------------------------------------------------------------------------


def _mark_every(count: int) -> list[int]:
    """Marker positions roughly evenly spread on the log axis (always the first and last)."""
    if count <= 12:
        return list(range(count))
    picks = {round(v) - 1 for v in [1.0, *(count ** (i / 9) for i in range(1, 10))]}
    return sorted(p for p in picks if 0 <= p < count)


def _curve_legend(curves: Sequence[Curve], styles: Mapping[str, StageStyle]) -> list[LegendEntry]:
    return [
        LegendEntry(
            label=curve.stage,
            colour=styles[curve.stage].colour,
            marker=styles[curve.stage].marker,
            marker_size=5.5,
            marker_edge="white",
            marker_edge_width=0.6,
            line_width=1.8,
            dashes=styles[curve.stage].dashes,
        )
        for curve in curves
    ]


def _curve_plot(
    curves: Sequence[Curve],
    styles: Mapping[str, StageStyle],
    *,
    prefix: str,
    x_limits: tuple[float, float],
    x_ticks: Sequence[tuple[float, str]],
    labels: tuple[str, str],
) -> Canvas:
    """Mean recall per stage on a log x axis with its band, grid, axes and legend."""
    canvas = Canvas(6.4 * 72, 4.6 * 72, prefix=prefix)
    handle = 3.4 * FONT_SIZE
    entries = _curve_legend(curves, styles)
    columns = legend_columns(
        [e.label for e in entries], most=4, handle=handle, room=canvas.width - 2 * _PAD
    )
    legend = legend_height(math.ceil(len(entries) / columns))
    y_values = nice_ticks(0.0, 1.0, 9)
    y_ticks = [(v, f"{v:.0%}") for v in y_values]
    left = _PAD + _LINE + 4.0 + max(text_width(t) for _, t in y_ticks) + 7.0
    right = canvas.width - _PAD - text_width(x_ticks[-1][1]) / 2 if x_ticks else canvas.width
    top = _PAD + FONT_SIZE / 2
    bottom = canvas.height - _PAD - legend - _LINE - 4.0 - _BELOW_AXIS
    frame = Frame(left, top, right - left, bottom - top, x_limits, (0.0, 1.0), log_x=True)
    canvas.rect(frame, fill="#ffffff")
    clip = canvas.clip(frame)
    for curve in curves:
        xs = [frame.x(float(v)) for v in curve.x]
        canvas.band(
            list(zip(xs, (frame.y(float(v)) for v in curve.high), strict=True)),
            list(zip(xs, (frame.y(float(v)) for v in curve.low), strict=True)),
            colour=styles[curve.stage].colour,
            opacity=0.13,
            clip=clip,
        )
    canvas.grid(frame, xs=[v for v, _ in x_ticks], ys=y_values)
    for curve in curves:
        style = styles[curve.stage]
        points = [
            (frame.x(float(x)), frame.y(float(m))) for x, m in zip(curve.x, curve.mean, strict=True)
        ]
        canvas.line(points, colour=style.colour, width=1.8, dashes=style.dashes, clip=clip)
        for index in _mark_every(len(points)):
            x, y = points[index]
            canvas.marker(
                x, y, style.marker, size=5.5, face=style.colour, edge="white", edge_width=0.6
            )
    canvas.axes(frame, x_ticks=x_ticks, y_ticks=y_ticks)
    label_y = frame.bottom + _BELOW_AXIS + 4.0 + 0.76 * FONT_SIZE
    canvas.text(frame.left + frame.width / 2, label_y, labels[0])
    canvas.text(_PAD + 0.76 * FONT_SIZE, frame.top + frame.height / 2, labels[1], rotate=True)
    canvas.legend(entries, bottom=canvas.height - _PAD, columns=columns, handle=handle)
    return canvas


def rank_curve_svg(
    curves: Sequence[Curve], styles: Mapping[str, StageStyle], *, confidence_level: float
) -> str:
    """``recall@k`` against ``k`` (log axis) per stage with bootstrap bands."""
    top = int(max((int(c.x[-1]) for c in curves), default=1))
    ticks = [t for t in (1, 2, 3, 5, 10, 20, 30, 50, 100) if t <= top]
    if top not in ticks:
        ticks.append(top)
    canvas = _curve_plot(
        curves,
        styles,
        prefix="rank-curve",
        x_limits=(0.9, max(top * 1.1, 1.0)),
        x_ticks=[(float(t), str(t)) for t in ticks],
        labels=("rank cutoff k (log scale)", "recall@k (share of gold quotes found)"),
    )
    level = f"{confidence_level:.0%}"
    return canvas.svg(
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
    low = int(min((int(c.x[0]) for c in curves), default=250))
    high = int(max((int(c.x[-1]) for c in curves), default=20_000))
    candidates = (250, 500, 1000, 2000, 5000, 10_000, 20_000)
    ticks = [t for t in candidates if low <= t <= high] or sorted({low, high})
    canvas = _curve_plot(
        curves,
        styles,
        prefix="budget-curve",
        x_limits=(low / 1.08, high * 1.08),
        x_ticks=[(float(t), f"{t:,}") for t in ticks],
        labels=(
            "characters read, best hit first (log scale)",
            "recall (share of gold quotes found)",
        ),
    )
    level = f"{confidence_level:.0%}"
    return canvas.svg(
        title="Recall at equal context budget",
        description=(
            f"Mean recall within the first N characters of the ranked hits, N from {low:,} "
            f"to {high:,}, for each stage, with {level} bootstrap bands over queries."
        ),
    )
