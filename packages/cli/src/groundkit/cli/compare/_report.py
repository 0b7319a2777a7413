"""`grk eval compare REPORT`: two stages of one report, or every pair of its stages.

A comparison of a candidate stage with the report's baseline on a headline metric is taken
from the report's own family, recomputed by the same engine with the same settings, so it
gives exactly the report's verdict (with other resamples or seed it is recomputed under those).
A whole stage against one of its ablation components (``--baseline dense --candidate hybrid``)
is taken from the report's ablation family the same way. Any other pair — two candidate
stages, or a metric outside the headline ones — is a family of one, said so in the output.
``--all-pairs`` compares every pair of stages at once under the randomised max-statistic test
(family-wise control over all pairs).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli._checked import load_checked_report
from groundkit.cli._errors import InputError
from groundkit.cli.compare._items_command import ItemsCommand, items_command
from groundkit.cli.console._fit import print_table
from groundkit.cli.console._report import VERDICT_MARKS, format_delta, format_interval, format_value
from groundkit.harness.analysis import (
    family_settings,
    report_ablation_family,
    report_family,
)
from groundkit.judgments import EvalReport
from groundkit.judgments.report import BootstrapSettings
from groundkit.stats import (
    AllPairsResult,
    ItemComparison,
    PairedScores,
    compare_all_pairs,
    compare_family,
    family_text,
)

__all__ = [
    "ReportOutcome",
    "compare_report_all_pairs",
    "compare_report_stages",
    "render_all_pairs",
    "render_report_outcome",
]

_SHOWN = 5


def _names(values: list[str]) -> str:
    shown = ", ".join(values[:_SHOWN])
    return shown + (f", … and {len(values) - _SHOWN} more" if len(values) > _SHOWN else "")


@dataclass(frozen=True, slots=True)
class ReportOutcome:
    """Result of comparing two stages of one report."""

    report_path: str
    baseline: str
    candidate: str
    result: ItemComparison
    in_family: bool
    stored_verdict: str | None
    in_ablation_family: bool = False
    items: ItemsCommand | None = None

    @property
    def verdict(self) -> str:
        """The comparison's verdict (decides the exit code)."""
        return self.result.verdict

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form (``--json``)."""
        result = self.result
        return {
            "mode": "report",
            "report": self.report_path,
            "metric": result.metric,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "query_count": result.item_count,
            "baseline_mean": result.mean_a,
            "candidate_mean": result.mean_b,
            "difference": result.difference,
            "low": result.confidence_interval_low,
            "high": result.confidence_interval_high,
            "confidence_level": result.confidence_level,
            "p_value": result.p_value,
            "p_adjusted": result.p_adjusted,
            "verdict": self.verdict,
            "report_verdict": self.stored_verdict,
            "in_report_family": self.in_family,
            "in_ablation_family": self.in_ablation_family,
            "family": family_text(result.adjustment, result.family_size),
            "items_command": None if self.items is None else self.items.command,
            "items_alpha": None if self.items is None else self.items.alpha,
            "comparison": result.model_dump(mode="json"),
        }


def _stage_scores(report: EvalReport, name: str, metric: str, path: Path) -> dict[str, float]:
    if not any(s.name == name for s in report.stages):
        known = ", ".join(s.name for s in report.stages)
        raise InputError(f"{path}: no stage named {name!r} (stages: {known})")
    stage = report.stage(name)
    if stage.error is not None:
        raise InputError(f"{path}: stage {name!r} failed in this run, nothing to compare")
    scores: dict[str, float] = {}
    for result in stage.queries:
        if metric not in result.scores:
            available = sorted(result.scores)
            raise InputError(
                f"{path}: stage {name!r} query {result.query_id!r} has no {metric!r} "
                f"(metrics: {_names(available)})"
            )
        scores[result.query_id] = result.scores[metric]
    if not scores:
        raise InputError(f"{path}: stage {name!r} has no scored queries")
    return scores


def _with_overrides(
    report: EvalReport, resamples: int | None, seed: int | None, margin: float | None
) -> EvalReport:
    settings = report.run.bootstrap
    update: dict[str, Any] = {}
    if resamples is not None:
        update["resamples"] = resamples
    if seed is not None:
        update["seed"] = seed
    if margin is not None:
        update["equivalence_margin"] = margin
    if not update:
        return report
    bootstrap = BootstrapSettings.model_validate({**settings.model_dump(), **update})
    run = report.run.model_copy(update={"bootstrap": bootstrap})
    return report.model_copy(update={"run": run})


def _pick_candidate(report: EvalReport, base_name: str, candidate: str | None, path: Path) -> str:
    if candidate is None:
        others = [s.name for s in report.stages if s.name != base_name]
        if len(others) != 1:
            raise InputError(
                f"{path}: pass --candidate (stages: {', '.join(s.name for s in report.stages)})"
            )
        candidate = others[0]
    if candidate == base_name:
        raise InputError(f"{path}: baseline and candidate are the same stage {candidate!r}")
    return candidate


def compare_report_stages(
    path: Path,
    *,
    baseline: str | None,
    candidate: str | None,
    metric: str,
    resamples: int | None,
    seed: int | None,
    equivalence_margin: float | None = None,
) -> ReportOutcome:
    """The verdict of ``candidate`` against ``baseline`` on one report's per-query scores.

    Args:
        path: The report file.
        baseline: Baseline stage (default: the report's baseline).
        candidate: Candidate stage (default: the only other stage, when there is one).
        metric: Metric compared.
        resamples: Random sign patterns (default: the report's setting).
        seed: Seed (default: the report's setting).
        equivalence_margin: Margin of an equivalence test (default: the report's setting).

    Raises:
        InputError: Unknown or repeated stage, missing metric, or an unreadable report.
    """
    report = load_checked_report(path)
    base_name = baseline or report.baseline.name
    candidate = _pick_candidate(report, base_name, candidate, path)
    base_scores = _stage_scores(report, base_name, metric, path)
    cand_scores = _stage_scores(report, candidate, metric, path)
    adjusted = _with_overrides(report, resamples, seed, equivalence_margin)
    in_family = base_name == report.baseline.name and metric in report.run.headline_metrics
    found = None
    family: list[ItemComparison] = []
    if in_family:
        family = report_family(adjusted)
        found = next((r for r in family if r.label == candidate and r.metric == metric), None)
    ablation = None if in_family else _ablation_result(adjusted, base_name, candidate, metric)
    if ablation is not None:
        found, stored = ablation
        return ReportOutcome(
            report_path=str(path),
            baseline=base_name,
            candidate=candidate,
            result=found,
            in_family=False,
            stored_verdict=stored,
            in_ablation_family=True,
        )
    if found is None:
        in_family = False
        alone = dataclasses.replace(family_settings(adjusted.run.bootstrap), adjustment="none")
        member = PairedScores(base_scores, cand_scores, metric=metric, label=candidate)
        (found,) = compare_family([member], alone)
        family = [found]
    stored = None
    if base_name == report.baseline.name:
        stored = next(
            (c.outcome for c in report.stage(candidate).comparisons if c.metric == metric), None
        )
    return ReportOutcome(
        report_path=str(path),
        baseline=base_name,
        candidate=candidate,
        result=found,
        in_family=in_family,
        stored_verdict=stored,
        items=items_command(
            path, (base_scores, cand_scores), (base_name, candidate), found, family
        ),
    )


def _ablation_result(
    report: EvalReport, component: str, whole: str, metric: str
) -> tuple[ItemComparison, str | None] | None:
    """The ablation family's comparison of ``whole`` with ``component``, when it has one."""
    rows = [
        i for i, r in enumerate(report.ablation) if (r.stage, r.component) == (whole, component)
    ]
    if not rows or metric not in report.run.headline_metrics:
        return None
    results = report_ablation_family(report)[rows[0]]
    found = next((r for r in results if r.metric == metric), None)
    if found is None:
        return None
    stored = next(
        (c.outcome for c in report.ablation[rows[0]].comparisons if c.metric == metric), None
    )
    return found, stored


def render_report_outcome(console: Console, outcome: ReportOutcome) -> None:
    """Print a report-mode comparison."""
    result = outcome.result
    level = round(result.confidence_level * 100)
    console.print(
        Text(f"{result.metric}: ", style="bold")
        + Text(f"{outcome.candidate} vs {outcome.baseline} on {result.item_count} queries")
    )
    console.print(f"  {outcome.baseline:<20} {format_value(result.mean_a)}")
    console.print(f"  {outcome.candidate:<20} {format_value(result.mean_b)}")
    mark, style = VERDICT_MARKS[result.verdict]
    line = Text(f"  {'difference':<20} {format_delta(result.difference)} ")
    interval = format_interval(
        result.confidence_interval_low, result.confidence_interval_high, signed=True
    )
    line.append(f"{interval} ({level}% {result.interval_method} interval)  ")
    line.append(f"{result.test} p={result.p_value:.3g}  ")
    if result.family_size > 1:
        line.append(f"{result.adjustment} p={result.p_adjusted:.3g}  ")
    line.append(mark, style=style)
    console.print(line)
    console.print(
        Text(
            f"  {result.gained} gained / {result.ties} tied / {result.lost} lost; detection "
            f"limit {result.detection_text()}",
            style="dim",
        )
    )
    if outcome.in_ablation_family:
        scope = (
            f"decided within the report's ablation family: {result.adjustment} over "
            f"{result.family_size} comparisons (whole − component)"
        )
    elif outcome.in_family:
        scope = (
            f"decided within the report's family: {result.adjustment} over "
            f"{result.family_size} comparisons"
            if result.family_size > 1
            else "decided within the report's family of one comparison"
        )
    else:
        scope = "outside the report's family: decided as a comparison of its own, not adjusted"
    console.print(Text(f"  {scope}", style="dim"))
    if result.equivalence_margin is not None:
        shown = "shown" if result.equivalent else "not shown"
        console.print(
            Text(
                f"  equivalence within ±{result.equivalence_margin:g}: {shown} "
                f"(two one-sided tests, p={result.equivalence_p_adjusted:.3g})",
                style="dim",
            )
        )
    if result.verdict == "too few queries":
        console.print(
            Text(
                f"  {result.item_count} queries cannot reach p < {result.alpha:g} at this level "
                f"whatever the scores: at least {result.minimum_queries} are needed",
                style="dim",
            )
        )
    if outcome.items is not None and outcome.items.command is not None:
        console.print(Text("  the same verdict from the items file:", style="dim"))
        console.print(Text(f"    {outcome.items.command}"), soft_wrap=True)
    elif outcome.items is not None:
        console.print(Text(f"  no items-mode command reproduces it: {outcome.items.why_not}"))
    if outcome.stored_verdict is not None and outcome.stored_verdict != result.verdict:
        console.print(
            Text(
                f"  the report's own verdict is {outcome.stored_verdict!r}: it was decided "
                "within the report's family with the report's settings",
                style="dim",
            )
        )


def compare_report_all_pairs(
    path: Path, *, metric: str, resamples: int | None, seed: int | None
) -> AllPairsResult:
    """Every pair of the report's stages that ran, under the max-statistic randomisation."""
    report = load_checked_report(path)
    ran = [s.name for s in report.stages if s.error is None]
    if len(ran) < 2:
        raise InputError(f"{path}: --all-pairs needs at least two stages that ran")
    scores = {name: _stage_scores(report, name, metric, path) for name in ran}
    settings = report.run.bootstrap
    return compare_all_pairs(
        scores,
        metric=metric,
        resamples=settings.resamples if resamples is None else resamples,
        seed=settings.seed if seed is None else seed,
        alpha=1.0 - settings.confidence_level,
    )


def render_all_pairs(console: Console, result: AllPairsResult) -> None:
    """Print every pair with its simultaneous interval, adjusted p-value and verdict."""
    level = round(result.confidence_level * 100)
    table = Table(
        title=(
            f"{result.metric}: every pair of {len(result.systems)} stages on "
            f"{result.query_count} queries (randomised max-statistic test, "
            f"{result.resamples:,} shuffles; {level}% simultaneous intervals)"
        ),
        title_justify="left",
    )
    headers = ("stage b", "stage a", "b", "a", "b − a", f"{level}% interval", "p adj", "verdict")
    for header in headers:
        left = header in ("stage a", "stage b", "verdict")
        table.add_column(header, justify="left" if left else "right")
    for pair in result.pairs:
        mark, style = VERDICT_MARKS[pair.verdict]
        table.add_row(
            pair.b,
            pair.a,
            format_value(pair.mean_b),
            format_value(pair.mean_a),
            format_delta(pair.difference),
            format_interval(pair.low, pair.high, signed=True),
            f"{pair.p_adjusted:.3g}",
            Text(mark, style=style),
        )
    print_table(console, table)
