"""The HTML report's differences from the baseline: the forest plot and its numbers.

Only reads the report's comparisons (decided in the run by the verdict engine): each with its
interval, the test's p-value (± its Monte Carlo standard error), the test's name and the
adjusted p the verdict was decided on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from groundkit.cli.html._data import scored_stages
from groundkit.cli.html._plots import StageStyle, forest_svg
from groundkit.cli.html._sections import level_text
from groundkit.cli.html._template import (
    esc,
    number_cell,
    stage_label,
    verdict_badge,
)
from groundkit.harness.analysis import DetectionLimits
from groundkit.judgments import EvalReport
from groundkit.judgments.report import StageComparison
from groundkit.stats import limit_text

__all__ = ["forest_section"]


def _adjustment(report: EvalReport) -> str:
    return {"holm": "Holm", "bh": "Benjamini–Hochberg"}[report.run.bootstrap.multiplicity]


def _p_cells(stage: str, c: StageComparison) -> str:
    """The test's p (± its Monte Carlo standard error), the test's name, the adjusted p."""
    p = number_cell(c.p_value, field="p_value", stage=stage, metric=c.metric)
    se = c.p_value_standard_error
    if se:
        p = p.replace("</td>", f' <span class="range">± {se:.1g}</span></td>', 1)
    adjusted, field = (
        (c.p_adjusted, "p_adjusted") if c.p_adjusted is not None else (c.p_holm, "p_holm")
    )
    test = f'<td class="small">{esc(c.test or "—")}</td>'
    if c.role == "guardrail":
        return p + test + '<td class="num muted">guardrail</td>'
    return p + test + number_cell(adjusted, field=field, stage=stage, metric=c.metric)


def forest_section(
    report: EvalReport,
    metrics: Sequence[str],
    limits: DetectionLimits,
    styles: Mapping[str, StageStyle],
) -> str:
    """The forest plot of differences from the baseline and the table of its numbers."""
    candidates = {
        s.name: [c for c in s.comparisons if c.metric in metrics]
        for s in scored_stages(report)
        if not s.baseline
    }
    candidates = {name: comps for name, comps in candidates.items() if comps}
    head = (
        '<section id="differences" aria-labelledby="differences-h">'
        '<h2 id="differences-h">Difference from the baseline</h2>'
    )
    if not candidates:
        return (
            head + '<p class="lead">No candidate stage has a comparison with the baseline '
            f"{esc(report.baseline.name)}: nothing to compare.</p></section>"
        )
    level = level_text(report)
    svg = forest_svg(
        candidates,
        metrics,
        confidence_level=report.run.bootstrap.confidence_level,
        baseline=report.baseline.name,
    )
    rows: list[str] = []
    for name, comparisons in candidates.items():
        for index, c in enumerate(comparisons):
            stage_cell = (
                f'<th scope="rowgroup" rowspan="{len(comparisons)}">'
                f"{stage_label(name, styles.get(name))}</th>"
                if index == 0
                else ""
            )
            rows.append(
                f"<tr>{stage_cell}<td>{esc(c.metric)}</td>"
                + number_cell(c.effect, field="effect", stage=name, metric=c.metric, signed=True)
                + number_cell(c.low, field="low", stage=name, metric=c.metric, signed=True)
                + number_cell(c.high, field="high", stage=name, metric=c.metric, signed=True)
                + _p_cells(name, c)
                + f"<td>{verdict_badge(c.outcome, stage=name, metric=c.metric)}</td></tr>"
            )
    scale = (
        f" For scale: this set's unpaired detection limit is {limit_text(limits.unpaired)} "
        "(see the summary)."
    )
    return (
        head + f'<p class="lead">Each candidate minus the baseline {esc(report.baseline.name)}, '
        f"per query then averaged, with its {level} interval (Tango's score interval for "
        "right-or-wrong metrics, paired t otherwise). The marker shape gives the verdict: "
        "▲ better, ▼ worse, = equivalent, ◆ inconclusive (interval crosses zero, or the exact "
        "test's p-value, adjusted over every comparison of the report, is too large: such an "
        "interval clear of zero is drawn dashed), … too few queries. Bar and marker follow "
        f"the same decision.{scale}</p>"
        f"<figure>{svg}<figcaption>Difference from {esc(report.baseline.name)} per headline "
        f"metric; bars are {level} intervals, the solid vertical line is no difference."
        "</figcaption></figure>"
        '<div class="table-scroll"><table><caption>The numbers behind the plot. p: the '
        "two-sided p-value of the test named beside it (exact where the test can be "
        "enumerated; a Monte Carlo estimate is shown ± its standard error); p adj: adjusted "
        f"over the report's family ({esc(_adjustment(report))}). A verdict needs the adjusted "
        "p under alpha, so an interval clear of zero can still be inconclusive.</caption>"
        '<thead><tr><th scope="col">stage</th><th scope="col">metric</th>'
        '<th scope="col" class="num">Δ</th><th scope="col" class="num">low</th>'
        '<th scope="col" class="num">high</th><th scope="col" class="num">p</th>'
        '<th scope="col">test</th>'
        '<th scope="col" class="num">p adj</th><th scope="col">verdict</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )
