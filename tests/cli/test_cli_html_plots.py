"""The report page's plots, drawn as SVG without a plotting library, show the report's numbers.

Each plot is read back the way a reader reads it: the axis is calibrated from its own tick
labels, then every marker, bar end and curve point is mapped back to data and compared with
the numbers the plot was given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pytest
from tests.cli.test_cli_html_report import build

from groundkit.cli.html._data import Curve
from groundkit.cli.html._plots import (
    VERDICT_STYLES,
    budget_curve_svg,
    forest_svg,
    rank_curve_svg,
    stage_styles,
)
from groundkit.cli.html._svg import nice_ticks
from groundkit.judgments.report import StageComparison

_TEXT = re.compile(r'<text x="([-0-9.]+)" y="([-0-9.]+)"[^>]*>([^<]*)</text>')
_PATH = re.compile(r'<path d="([^"]+)"([^>]*)/>')
_PAIR = re.compile(r"(-?[0-9.]+) (-?[0-9.]+)")


def _texts(svg: str) -> list[tuple[float, float, str]]:
    return [(float(x), float(y), label) for x, y, label in _TEXT.findall(svg)]


def _paths(svg: str) -> list[tuple[list[tuple[float, float]], str]]:
    return [
        ([(float(x), float(y)) for x, y in _PAIR.findall(d)], attributes)
        for d, attributes in _PATH.findall(svg)
    ]


def _calibrate(ticks: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Slope and intercept mapping a position to a value, from (position, value) ticks."""
    (p0, v0), (p1, v1) = ticks[0], ticks[-1]
    slope = (v1 - v0) / (p1 - p0)
    for position, value in ticks:  # the ticks themselves lie on one straight scale
        assert v0 + slope * (position - p0) == pytest.approx(value, abs=2e-3)
    return slope, v0 - slope * p0


def _comparisons(metric: str) -> dict[str, list[StageComparison]]:
    report = build(count=30).report
    return {
        stage.name: [c for c in stage.comparisons if c.metric == metric]
        for stage in report.stages
        if not stage.baseline
    }


def test_forest_plot_places_every_interval_and_verdict_on_its_axis() -> None:
    comparisons = _comparisons("recall@10")
    assert sum(len(c) for c in comparisons.values()) == 2
    svg = forest_svg(comparisons, ["recall@10"], confidence_level=0.95, baseline="chars-200")
    texts = _texts(svg)
    ticks = [(x, float(label)) for x, _, label in texts if re.fullmatch(r"[-+]?[0-9.]+", label)]
    assert len(ticks) >= 3
    slope, intercept = _calibrate(ticks)
    stage_rows = {label: y for _, y, label in texts if label in comparisons}
    assert list(stage_rows) == list(comparisons)  # the first stage on top
    first, second = comparisons
    assert stage_rows[first] < stage_rows[second]
    for stage, found in comparisons.items():
        (comparison,) = found
        row = stage_rows[stage] - 0.36 * 11  # the label's baseline sits below the row's centre
        style = VERDICT_STYLES[comparison.outcome]
        shapes = [
            points
            for points, attributes in _paths(svg)
            if f'stroke="{style.colour}"' in attributes
            and 'stroke-width="1.6"' in attributes
            and abs(sum(y for _, y in points) / len(points) - row) < 6
        ]
        assert len(shapes) == 1, stage  # one effect marker in the stage's row
        xs = [x for x, _ in shapes[0]]
        centre = (min(xs) + max(xs)) / 2
        assert slope * centre + intercept == pytest.approx(comparison.effect, abs=3e-3)
        bars = [
            points
            for points, attributes in _paths(svg)
            if 'stroke-width="2.2"' in attributes and abs(points[0][1] - row) < 1
        ]
        assert len(bars) == 1, stage
        ends = sorted(slope * x + intercept for x, _ in bars[0])
        assert ends == pytest.approx([comparison.low, comparison.high], abs=3e-3)
    legend = [label for _, _, label in texts if label in VERDICT_STYLES]
    assert legend == list(VERDICT_STYLES)
    assert "recall@10" in [label for _, _, label in texts]
    assert "difference (candidate − baseline)" in [label for _, _, label in texts]
    assert '<title id="forest-title">Difference from the baseline chars-200</title>' in svg


def test_forest_plot_panels_share_one_row_per_stage() -> None:
    report = build(count=30).report
    metrics = list(report.run.headline_metrics)
    comparisons = {s.name: s.comparisons for s in report.stages if not s.baseline}
    svg = forest_svg(comparisons, metrics, confidence_level=0.95, baseline="chars-200")
    labels = [label for _, _, label in _texts(svg)]
    shown = [m for m in metrics if m in labels]
    assert shown == metrics  # one titled panel per metric
    rows = math.ceil(len(metrics) / 3)
    # stage names label the first column only: once per row of panels
    for stage in comparisons:
        assert labels.count(stage) == rows
    assert labels.count("difference (candidate − baseline)") == len(metrics)


def _curve(stage: str, x: Sequence[int], mean: Sequence[float]) -> Curve:
    values = np.asarray(mean, dtype=float)
    return Curve(
        stage=stage,
        x=np.asarray(x, dtype=np.int64),
        mean=values,
        low=np.clip(values - 0.05, 0, 1),
        high=np.clip(values + 0.05, 0, 1),
    )


def test_recall_curves_pass_through_every_mean_on_their_axes() -> None:
    ks = list(range(1, 21))
    curves = [
        _curve("bm25", ks, [min(1.0, 0.3 + 0.03 * k) for k in ks]),
        _curve("dense", ks, [min(1.0, 0.5 + 0.02 * k) for k in ks]),
    ]
    styles = stage_styles(["bm25", "dense"])
    svg = rank_curve_svg(curves, styles, confidence_level=0.9)
    texts = _texts(svg)
    y_ticks = [(y, float(label[:-1]) / 100) for _, y, label in texts if label.endswith("%")]
    assert [v for _, v in y_ticks] == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    y_slope, y_intercept = _calibrate([(y - 0.36 * 11, v) for y, v in y_ticks])
    x_ticks = [(x, math.log(float(label))) for x, _, label in texts if label.isdigit()]
    assert [round(math.exp(v)) for _, v in x_ticks] == [1, 2, 3, 5, 10, 20]
    x_slope, x_intercept = _calibrate(x_ticks)  # a log axis: log k is linear in position
    for curve in curves:
        style = styles[curve.stage]
        (line,) = [
            points
            for points, attributes in _paths(svg)
            if f'stroke="{style.colour}" stroke-width="1.8"' in attributes and len(points) > 2
        ]
        assert [round(math.exp(x_slope * x + x_intercept)) for x, _ in line] == ks
        assert [y_slope * y + y_intercept for _, y in line] == pytest.approx(
            list(curve.mean), abs=3e-3
        )
        assert curve.stage in [label for _, _, label in texts]  # in the legend
    assert "rank cutoff k (log scale)" in svg
    assert "with 90% bootstrap bands" in svg


def test_budget_curve_ticks_are_the_budgets_in_range() -> None:
    budgets = [250, 500, 1000, 2000, 5000]
    curves = [_curve("bm25", budgets, [0.2, 0.3, 0.5, 0.6, 0.7])]
    svg = budget_curve_svg(curves, stage_styles(["bm25"]), confidence_level=0.95)
    labels = [label for _, _, label in _texts(svg)]
    assert [t for t in labels if t[0].isdigit() and not t.endswith("%")] == [
        "250",
        "500",
        "1,000",
        "2,000",
        "5,000",
    ]
    assert 'aria-labelledby="budget-curve-title budget-curve-desc"' in svg


@pytest.mark.parametrize(
    ("low", "high", "bins", "expected"),
    [  # matplotlib's MaxNLocator (default steps) on the same ranges
        (-0.33, 0.33, 5, [-0.2, 0.0, 0.2]),
        (-0.33, 0.33, 7, [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3]),
        (-0.05, 0.05, 5, [-0.04, -0.02, 0.0, 0.02, 0.04]),
        (0.0, 1.0, 9, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (-0.12, 0.12, 5, [-0.1, -0.05, 0.0, 0.05, 0.1]),
    ],
)
def test_tick_positions_follow_matplotlibs_locator(
    low: float, high: float, bins: int, expected: list[float]
) -> None:
    assert nice_ticks(low, high, bins) == pytest.approx(expected)
