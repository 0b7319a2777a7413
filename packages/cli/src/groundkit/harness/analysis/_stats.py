"""A report's statistics, all from the verdict engine in ``groundkit.stats``.

Each metric's interval is :func:`groundkit.stats.mean_interval`; the stage comparisons are one
family in :func:`groundkit.stats.compare_family` — every candidate stage × headline metric,
under the report's multiplicity control (Holm by default), or only the primary metric's
comparisons when one is named, the other headline metrics then shown as guardrails. The same
function recomputes a written report's family (:func:`report_family`), so `grk eval compare`,
the HTML report and the run itself can never disagree.

The ablation rows (whole stage minus each component) are a second family, decided by the same
function under the same settings (:func:`ablation_family`): they answer another question
("does this part of the stage help?") than the stage comparisons ("does this stage beat the
baseline?"), so turning ablation on or off never changes a stage comparison's verdict, and
the chance of any false ablation claim is held at alpha within the ablation family.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from groundkit.judgments import EvalReport, StageReport
from groundkit.judgments.report import BootstrapSettings, MetricAggregate, StageComparison
from groundkit.stats import (
    FamilySettings,
    ItemComparison,
    PairedScores,
    compare_family,
    holm_adjust,
    mean_interval,
)

if TYPE_CHECKING:  # the run's settings model: only a run compares stages, not a reader
    from groundkit.harness.run._config import EvalSettings

__all__ = [
    "ablation_family",
    "aggregate",
    "compare_stages",
    "compare_with_baseline",
    "family_settings",
    "holm_by_member",
    "report_ablation_family",
    "report_family",
    "stage_comparison",
]


def aggregate(
    values: npt.NDArray[np.float64] | None, metrics: Sequence[str], bootstrap: BootstrapSettings
) -> dict[str, MetricAggregate]:
    """Mean and interval of every metric column (empty for a failed stage)."""
    if values is None or values.shape[0] == 0:
        return {}
    out: dict[str, MetricAggregate] = {}
    for column, metric in enumerate(metrics):
        estimate = mean_interval(
            values[:, column], confidence_level=bootstrap.confidence_level, seed=bootstrap.seed
        )
        out[metric] = MetricAggregate(
            mean=estimate.value,
            low=estimate.low,
            high=estimate.high,
            query_count=estimate.count,
            method=estimate.method,
            caution=estimate.caution,
        )
    return out


def family_settings(bootstrap: BootstrapSettings) -> FamilySettings:
    """The engine's settings for a report's family (alpha = 1 − confidence level)."""
    return FamilySettings(
        resamples=bootstrap.resamples,
        seed=bootstrap.seed,
        confidence_level=bootstrap.confidence_level,
        alpha=1.0 - bootstrap.confidence_level,
        power=bootstrap.power,
        adjustment=bootstrap.multiplicity,
        equivalence_margin=bootstrap.equivalence_margin,
    )


def _members(
    columns: Mapping[str, Mapping[str, Mapping[str, float]]],
    baseline: str,
    candidates: Sequence[str],
    headline: Sequence[str],
    primary: str | None,
) -> list[PairedScores]:
    """One member per candidate stage × headline metric: ``columns[stage][metric]``."""
    return [
        PairedScores(
            columns[baseline][metric],
            columns[name][metric],
            metric=metric,
            label=name,
            role="decision" if primary is None or metric == primary else "guardrail",
        )
        for name in candidates
        for metric in headline
    ]


def stage_comparison(
    result: ItemComparison,
    holm: float,
    *,
    baseline: str,
    candidate: str | None = None,
) -> StageComparison:
    """The report's record of one engine comparison (``holm``: its Holm-adjusted p-value).

    ``baseline`` and ``candidate`` name the two sides (``candidate`` by default: the member's
    label).
    """
    three_way = result.verdict if result.verdict in ("better", "worse") else "inconclusive"
    return StageComparison(
        metric=result.metric or "",
        baseline=baseline,
        candidate=result.label or "" if candidate is None else candidate,
        effect=result.difference,
        low=result.confidence_interval_low,
        high=result.confidence_interval_high,
        p_value=result.p_value,
        p_holm=holm,
        verdict=three_way,
        decision=result.verdict,
        role=result.role,
        interval_method=result.interval_method,
        interval_caution=result.interval_caution,
        test=result.test,
        p_value_standard_error=result.p_value_standard_error,
        p_adjusted=result.p_adjusted,
        adjustment=result.adjustment,
        family_size=result.family_size,
        minimum_queries=result.minimum_queries,
        detection_limit=result.detection_limit or None,
        detection_caution=result.detection_caution,
        power=result.power,
        gained=result.gained,
        lost=result.lost,
        ties=result.ties,
        paired_t_p_value=result.paired_t_p_value,
        effect_size=result.effect_size,
        effect_size_low=result.effect_size_low,
        effect_size_high=result.effect_size_high,
        relative_change=result.relative_change,
        relative_change_low=result.relative_change_low,
        relative_change_high=result.relative_change_high,
        equivalence_margin=result.equivalence_margin,
        equivalence_p_value=result.equivalence_p_adjusted,
        equivalent=result.equivalent,
    )


def holm_by_member(results: Sequence[ItemComparison]) -> list[float]:
    """Holm-adjusted p-values over the decisions (a guardrail keeps its raw p-value)."""
    decisions = [i for i, r in enumerate(results) if r.role == "decision"]
    adjusted = dict(
        zip(decisions, holm_adjust([results[i].p_value for i in decisions]), strict=True)
    )
    return [adjusted.get(i, r.p_value) for i, r in enumerate(results)]


def _family(
    columns: Mapping[str, Mapping[str, Mapping[str, float]]],
    baseline: str,
    candidates: Sequence[str],
    headline: Sequence[str],
    bootstrap: BootstrapSettings,
) -> list[ItemComparison]:
    members = _members(columns, baseline, candidates, headline, bootstrap.primary_metric)
    if not members:
        return []
    return compare_family(members, family_settings(bootstrap))


def compare_with_baseline(
    columns: Mapping[str, Mapping[str, Mapping[str, float]]],
    baseline: str,
    candidates: Sequence[str],
    headline: Sequence[str],
    bootstrap: BootstrapSettings,
) -> dict[str, list[StageComparison]]:
    """Each candidate against the baseline on each headline metric, as one family.

    ``columns[name][metric]`` maps query id to score; ``columns[baseline]`` is the baseline.
    The rule of a report's stage comparisons, also applied to a sweep's arms.

    Returns:
        Each candidate's comparisons, in headline order.
    """
    results = _family(columns, baseline, candidates, headline, bootstrap)
    found: dict[str, list[StageComparison]] = {name: [] for name in candidates}
    for result, holm in zip(results, holm_by_member(results), strict=True):
        found[result.label or ""].append(stage_comparison(result, holm, baseline=baseline))
    return found


def compare_stages(
    stages: Sequence[StageReport],
    values: dict[str, npt.NDArray[np.float64]],
    query_ids: Sequence[str],
    metrics: Sequence[str],
    settings: EvalSettings,
) -> list[StageReport]:
    """Compare each stage with the baseline on each headline metric, as one family.

    Returns:
        The stages with their ``comparisons`` filled in.
    """
    baseline = settings.baseline
    if baseline not in values:
        return list(stages)
    candidates = [s.name for s in stages if s.name != baseline and s.name in values]
    index = {name: i for i, name in enumerate(metrics)}
    columns = {
        name: {
            metric: dict(zip(query_ids, values[name][:, index[metric]].tolist(), strict=True))
            for metric in settings.headline_metrics
        }
        for name in [baseline, *candidates]
    }
    found = compare_with_baseline(
        columns, baseline, candidates, settings.headline_metrics, settings.bootstrap
    )
    from groundkit.harness.run._results import rebuilt  # a run's module: imported by a run

    return [rebuilt(s, comparisons=found[s.name]) if s.name in found else s for s in stages]


# The last family computed, by report object: reading a report checks its verdicts and the
# command then uses the same family, so it is computed once (a weak reference: no report is
# kept alive by the cache; reports are frozen, so an object's family never changes).
_LAST_FAMILY: tuple[weakref.ref[EvalReport], list[ItemComparison]] | None = None


def report_family(report: EvalReport) -> list[ItemComparison]:
    """The report's family recomputed from its per-query scores, exactly as the run did.

    Every stage that ran is compared with the baseline on every headline metric, under the
    report's own settings; a metric a stage did not record counts as zero, as in the means.
    """
    global _LAST_FAMILY
    if _LAST_FAMILY is not None and _LAST_FAMILY[0]() is report:
        return list(_LAST_FAMILY[1])
    results = _report_family(report)
    _LAST_FAMILY = (weakref.ref(report), results)
    return list(results)


def _report_family(report: EvalReport) -> list[ItemComparison]:
    if report.baseline.error is not None:
        return []
    order = [q.query_id for q in report.queries if q.answerable]
    headline = list(report.run.headline_metrics)
    ran = [s for s in report.stages if s.error is None]
    columns = {
        stage.name: {
            metric: {qid: scores.get(qid, {}).get(metric, 0.0) for qid in order}
            for metric in headline
        }
        for stage in ran
        for scores in [{r.query_id: r.scores for r in stage.queries}]
    }
    candidates = [s.name for s in ran if not s.baseline]
    return _family(columns, report.baseline.name, candidates, headline, report.run.bootstrap)


AblationPair = tuple[str, str]
"""``(whole, component)``: the two columns of one ablation row."""


def ablation_family(
    pairs: Sequence[AblationPair],
    columns: Mapping[str, Mapping[str, Mapping[str, float]]],
    headline: Sequence[str],
    bootstrap: BootstrapSettings,
) -> list[list[ItemComparison]]:
    """Whole minus component on every headline metric, every pair in one family.

    Args:
        pairs: The ablation rows' ``(whole, component)`` column names.
        columns: Column name -> metric -> query id -> value.
        headline: The report's headline metrics.
        bootstrap: The report's settings (the primary metric decides when one is named).

    Returns:
        Each pair's comparisons, in the order of ``headline``.
    """
    primary = bootstrap.primary_metric
    members = [
        PairedScores(
            columns[component][metric],
            columns[whole][metric],
            metric=metric,
            label=str(index),
            role="decision" if primary is None or metric == primary else "guardrail",
        )
        for index, (whole, component) in enumerate(pairs)
        for metric in headline
    ]
    out: list[list[ItemComparison]] = [[] for _ in pairs]
    if members:
        for result in compare_family(members, family_settings(bootstrap)):
            out[int(result.label or 0)].append(result)
    return out


def report_ablation_family(report: EvalReport) -> list[list[ItemComparison]]:
    """The report's ablation family recomputed from its per-query scores, as the run did."""
    order = [q.query_id for q in report.queries if q.answerable]
    headline = list(report.run.headline_metrics)
    stages = {s.name: {r.query_id: r.scores for r in s.queries} for s in report.stages}
    replays = {row.component: row.scores for row in report.ablation if row.source == "replay"}
    columns = {
        name: {
            metric: {qid: scores.get(qid, {}).get(metric, 0.0) for qid in order}
            for metric in headline
        }
        for name, scores in {**stages, **replays}.items()
    }
    pairs = [(row.stage, row.component) for row in report.ablation]
    return ablation_family(pairs, columns, headline, report.run.bootstrap)
