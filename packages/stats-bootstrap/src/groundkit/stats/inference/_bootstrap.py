"""Paired bootstrap of per-query deltas, and a bootstrap interval for one system's mean."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from groundkit.stats._validation import (
    check_confidence,
    check_resamples,
    check_seed,
    finite_deltas,
    paired_arrays,
    real_array,
)
from groundkit.stats.kernels._engine import (
    ResampleMethod,
    UsedMethod,
    bootstrap_means,
    canonical_arrangement,
    exact_mean,
    percentile_interval,
    two_sided_tail_p,
)

__all__ = [
    "PERCENTILE_MIN_QUERIES",
    "BootstrapResult",
    "IntervalEstimate",
    "bootstrap_interval",
    "paired_bootstrap",
    "percentile_caution",
]


# The calibration grid measured the percentile interval at 65–93% coverage below this many
# queries (right-or-wrong scores at p = 0.9 the worst) and at 94–97% from it on.
PERCENTILE_MIN_QUERIES = 100


def percentile_caution(values: NDArray[np.float64]) -> str | None:
    """Why a percentile bootstrap interval of these values may cover less than promised."""
    if values.size >= PERCENTILE_MIN_QUERIES:
        return None
    return (
        f"percentile bootstrap intervals cover less than promised below "
        f"{PERCENTILE_MIN_QUERIES} queries (65–93% for a 95% interval at n = 10–30 in the "
        "calibration grid); compare_items and mean_interval keep their coverage"
    )


class BootstrapResult(BaseModel):
    """Outcome of a paired bootstrap comparison of a candidate against a baseline.

    Attributes:
        baseline: Name of the baseline system.
        candidate: Name of the candidate system.
        metric: Name of the per-query metric that was compared.
        query_count: Number of paired queries (the unit of resampling).
        resamples: Number of bootstrap resamples B.
        seed: Seed of the numpy Generator created for this call.
        confidence_level: Coverage of the percentile interval, e.g. 0.95.
        effect: Observed mean of the per-query deltas (candidate − baseline).
        confidence_interval_low: Lower percentile bound of the mean delta.
        confidence_interval_high: Upper percentile bound of the mean delta.
        p_value_two_sided: Achieved significance level of the bootstrap (see `paired_bootstrap`).
        significant: True exactly when the interval excludes zero and the queries are enough
            for an exact paired test to reach the level (see `paired_bootstrap`).
        method: Resampling path used: "resample" (indices) or "multinomial" (counts of distinct
            deltas); both draw from the same distribution.
        caution: Why the percentile interval's 95% (or other level) is not assured for data
            like these, when it is not (see `percentile_caution`); None otherwise.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    baseline: str
    candidate: str
    metric: str
    query_count: int
    resamples: int
    seed: int
    confidence_level: float
    effect: float
    confidence_interval_low: float
    confidence_interval_high: float
    p_value_two_sided: float
    significant: bool
    method: UsedMethod
    caution: str | None = None


class IntervalEstimate(BaseModel):
    """Bootstrap percentile interval for the mean of one system's scores.

    Attributes:
        value: Observed mean score.
        low: Lower percentile bound.
        high: Upper percentile bound.
        count: Number of scores.
        resamples: Number of bootstrap resamples.
        seed: Seed of the numpy Generator created for this call.
        confidence_level: Coverage of the interval.
        method: Resampling path used ("resample" or "multinomial").
        caution: Why the stated coverage is not assured for data like these (else None).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float
    low: float
    high: float
    count: int
    resamples: int
    seed: int
    confidence_level: float
    method: UsedMethod
    caution: str | None = None


# Public API: each keyword is a documented option; grouping them would hide them from
# help() and inspect.signature.
def paired_bootstrap(  # noqa: PLR0913
    baseline_scores: Mapping[str, float],
    candidate_scores: Mapping[str, float],
    *,
    baseline_name: str,
    candidate_name: str,
    metric: str,
    resamples: int = 10_000,
    seed: int = 7,
    confidence_level: float = 0.95,
    method: ResampleMethod = "auto",
) -> BootstrapResult:
    """Paired bootstrap of the mean per-query delta (candidate − baseline).

    The query is the unit of resampling: each resample draws as many per-query deltas as there
    are queries, uniformly with replacement, and records their mean.

    The interval is the percentile interval of the B resampled means, with linear interpolation
    between ordered means (numpy's quantile method "linear"). `significant` is read from that
    interval: it is true exactly when the interval excludes zero and there are enough queries
    for an exact paired test to reach ``1 - confidence_level`` at all (2 / 2ⁿ below it: at
    least 6 queries at 95%); with fewer, an interval of one or two resampled values says
    nothing, so n = 1 or 2 is never significant.

    `p_value_two_sided` is an achieved significance level computed independently of the
    interval: with r the smaller of the number of resampled means at or below zero and the
    number at or above zero, it is min(1, 2·(r + 1) / (B + 1)). It is never exactly zero (its
    floor is 2 / (B + 1)), and because it resamples the observed deltas rather than data
    generated under "no difference", it is a bootstrap tail share, not an exact test; near the
    threshold it can disagree with `significant`, which is why the two are reported separately.

    Results are deterministic: query ids are paired in sorted order, a numpy Generator is
    created from `seed` inside the call, and the resampling depends only on the multiset of
    deltas, so renaming queries or reordering the mappings never changes the result and
    swapping the two sides exactly negates the effect and mirrors the interval.

    Memory stays bounded: resamples are drawn in chunks of about a million elements. When the
    deltas take few distinct values (hit@k, recall with one gold item) the resampled counts of
    each distinct value are drawn from a multinomial distribution instead, which gives the same
    distribution of means at a tiny fraction of the cost. `method="auto"` picks the multinomial
    path when there are at least 48 queries per distinct delta.

    Args:
        baseline_scores: Per-query scores of the baseline, keyed by query id.
        candidate_scores: Per-query scores of the candidate, with exactly the same query ids.
        baseline_name: Name of the baseline system (reported, used in error messages).
        candidate_name: Name of the candidate system (reported, used in error messages).
        metric: Name of the metric (reported).
        resamples: Number of bootstrap resamples B (positive).
        seed: Non-negative seed for the numpy Generator.
        confidence_level: Coverage of the percentile interval, strictly between 0 and 1.
        method: "auto", "resample" (index resampling) or "multinomial" (counts of distinct
            deltas).

    Returns:
        The frozen `BootstrapResult`.

    Raises:
        StatsError: If `resamples` is not positive, `confidence_level` is not strictly in
            (0, 1), there are no scores, the two mappings score different query ids, any
            score is not a finite real number, or a difference (or their sum) overflows.

    Example:
        >>> result = paired_bootstrap(
        ...     {"q1": 0.0, "q2": 1.0, "q3": 0.0},
        ...     {"q1": 1.0, "q2": 1.0, "q3": 1.0},
        ...     baseline_name="bm25",
        ...     candidate_name="hybrid",
        ...     metric="hit@10",
        ...     resamples=1_000,
        ... )
        >>> round(result.effect, 3)
        0.667
    """
    count = check_resamples(resamples)
    level = check_confidence(confidence_level)
    seed_value = check_seed(seed)
    ids, baseline, candidate = paired_arrays(
        baseline_scores,
        candidate_scores,
        baseline_name=baseline_name,
        candidate_name=candidate_name,
    )
    deltas = canonical_arrangement(finite_deltas(baseline, candidate, ids=ids))
    rng = np.random.default_rng(seed_value)
    means, used = bootstrap_means(deltas, resamples=count, rng=rng, method=method)
    low, high = percentile_interval(means, level)
    # Below this many queries no exact paired test could clear 1 - level (its smallest
    # two-sided p is 2 / 2^n), so an interval clear of zero is not evidence: n = 1 or 2
    # resamples one or two values into an interval of width zero.
    decidable = 2.0 ** (1 - deltas.size) < 1.0 - level
    return BootstrapResult(
        baseline=baseline_name,
        candidate=candidate_name,
        metric=metric,
        query_count=int(deltas.size),
        resamples=count,
        seed=seed_value,
        confidence_level=level,
        effect=exact_mean(deltas),
        confidence_interval_low=low,
        confidence_interval_high=high,
        p_value_two_sided=two_sided_tail_p(means),
        significant=decidable and (low > 0.0 or high < 0.0),
        method=used,
        caution=percentile_caution(deltas),
    )


def bootstrap_interval(
    scores: Sequence[float] | Mapping[str, float] | NDArray[np.floating],
    *,
    resamples: int = 2_000,
    seed: int = 0,
    confidence_level: float = 0.95,
    method: ResampleMethod = "auto",
) -> IntervalEstimate:
    """Bootstrap percentile interval for the mean of one system's per-query scores.

    Resamples the scores with replacement (chunked and, for few distinct values, through
    multinomial counts exactly as in `paired_bootstrap`) and interpolates linearly between the
    ordered resampled means.

    Args:
        scores: Per-query scores: a sequence, a 1-d array, or a mapping keyed by query id.
        resamples: Number of bootstrap resamples (positive).
        seed: Non-negative seed for the numpy Generator created inside the call.
        confidence_level: Coverage of the interval, strictly between 0 and 1.
        method: "auto", "resample" or "multinomial".

    Returns:
        The frozen `IntervalEstimate`.

    Raises:
        StatsError: If there are no scores, a score is not a finite real number, or a setting
            is out of range.
    """
    count = check_resamples(resamples)
    level = check_confidence(confidence_level)
    seed_value = check_seed(seed)
    arranged = canonical_arrangement(real_array(scores, what="scores"))
    rng = np.random.default_rng(seed_value)
    means, used = bootstrap_means(arranged, resamples=count, rng=rng, method=method)
    low, high = percentile_interval(means, level)
    return IntervalEstimate(
        value=exact_mean(arranged),
        low=low,
        high=high,
        count=int(arranged.size),
        resamples=count,
        seed=seed_value,
        confidence_level=level,
        method=used,
        caution=percentile_caution(arranged),
    )
