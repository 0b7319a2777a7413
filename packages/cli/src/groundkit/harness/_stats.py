"""Aggregates with bootstrap ranges, and comparisons of every stage with the baseline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from groundkit.harness._config import BASELINE_STAGE, EvalSettings
from groundkit.judgments import BootstrapSettings, MetricAggregate, StageComparison, StageReport
from groundkit.stats import bootstrap_interval, holm_adjust, paired_bootstrap, sign_flip_test

__all__ = ["aggregate", "compare_stages", "verdict"]


def aggregate(
    values: npt.NDArray[np.float64] | None, metrics: Sequence[str], bootstrap: BootstrapSettings
) -> dict[str, MetricAggregate]:
    """Mean and bootstrap interval of every metric column (empty for a failed stage)."""
    if values is None or values.shape[0] == 0:
        return {}
    out: dict[str, MetricAggregate] = {}
    for column, metric in enumerate(metrics):
        estimate = bootstrap_interval(
            values[:, column],
            resamples=bootstrap.resamples,
            seed=bootstrap.seed,
            confidence_level=bootstrap.confidence_level,
        )
        out[metric] = MetricAggregate(
            mean=estimate.value, low=estimate.low, high=estimate.high, query_count=estimate.count
        )
    return out


def verdict(
    low: float, high: float, p_holm: float, alpha: float
) -> Literal["better", "worse", "inconclusive"]:
    """The verdict of a comparison.

    ``better``/``worse`` when the interval excludes zero and the Holm-adjusted p-value is below
    ``alpha``; else ``inconclusive``.
    """
    if p_holm < alpha and low > 0.0:
        return "better"
    if p_holm < alpha and high < 0.0:
        return "worse"
    return "inconclusive"


def compare_stages(
    stages: Sequence[StageReport],
    values: dict[str, npt.NDArray[np.float64]],
    query_ids: Sequence[str],
    metrics: Sequence[str],
    settings: EvalSettings,
) -> list[StageReport]:
    """Compare each stage with the baseline on each headline metric.

    Paired bootstrap per stage, with Holm's adjustment across the candidate stages of a metric.
    The p-value that is adjusted is the larger of the bootstrap p-value and the paired sign-flip
    test's: the bootstrap tail share alone is far too small at tiny n (four queries that all
    improve give 2 / (B + 1), the exact sign-flip p is 0.125), so it must not gate a verdict.

    Returns:
        The stages with their ``comparisons`` filled in.
    """
    baseline = values.get(BASELINE_STAGE)
    candidates = [s.name for s in stages if s.name != BASELINE_STAGE and s.name in values]
    if baseline is None or not candidates:
        return list(stages)
    boot = settings.bootstrap
    alpha = 1.0 - boot.confidence_level
    columns = {name: index for index, name in enumerate(metrics)}
    found: dict[str, list[StageComparison]] = {name: [] for name in candidates}
    for metric in settings.headline_metrics:
        column = columns[metric]
        base = dict(zip(query_ids, baseline[:, column].tolist(), strict=True))
        results = {}
        gates: dict[str, float] = {}
        for name in candidates:
            cand = dict(zip(query_ids, values[name][:, column].tolist(), strict=True))
            results[name] = paired_bootstrap(
                base,
                cand,
                baseline_name=BASELINE_STAGE,
                candidate_name=name,
                metric=metric,
                resamples=boot.resamples,
                seed=boot.seed,
                confidence_level=boot.confidence_level,
            )
            flips = sign_flip_test(base, cand, resamples=boot.resamples, seed=boot.seed)
            gates[name] = max(results[name].p_value_two_sided, flips.p_value_two_sided)
        adjusted = holm_adjust(gates)
        for name, result in results.items():
            p_holm = min(1.0, max(adjusted[name], result.p_value_two_sided))
            found[name].append(
                StageComparison(
                    metric=metric,
                    baseline=BASELINE_STAGE,
                    candidate=name,
                    effect=result.effect,
                    low=result.confidence_interval_low,
                    high=result.confidence_interval_high,
                    p_value=result.p_value_two_sided,
                    p_holm=p_holm,
                    verdict=verdict(
                        result.confidence_interval_low,
                        result.confidence_interval_high,
                        p_holm,
                        alpha,
                    ),
                )
            )
    return [
        s.model_copy(update={"comparisons": found[s.name]}) if s.name in found else s
        for s in stages
    ]
