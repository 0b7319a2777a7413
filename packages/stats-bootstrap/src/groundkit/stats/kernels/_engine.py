"""Vectorised bootstrap engine: canonical arrangement, resampled means, interval and tail share."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from groundkit.stats.kernels._resampling import ResampleMethod, UsedMethod, resampled_means

__all__ = [
    "ResampleMethod",
    "UsedMethod",
    "bootstrap_means",
    "canonical_arrangement",
    "exact_mean",
    "percentile_interval",
    "two_sided_tail_p",
]


def exact_mean(values: NDArray[np.float64]) -> float:
    """Correctly rounded mean: independent of element order and exactly odd under negation."""
    return math.fsum(values.tolist()) / values.size + 0.0


def canonical_arrangement(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """The values in an order that depends only on their multiset.

    Sorting makes the bootstrap a function of the multiset of values (renaming or reordering
    queries changes nothing). The direction of the sort is chosen by comparing the sorted values
    with the sorted negated values, so negating every value (swapping baseline and candidate)
    yields exactly the negated arrangement and therefore exactly mirrored resampled means.
    A multiset equal to its own negation is left ascending: swapping sides gives the same input.
    """
    ascending = np.sort(values)
    negated_ascending = -ascending[::-1]
    differ = np.flatnonzero(ascending != negated_ascending)
    if differ.size and ascending[differ[0]] < negated_ascending[differ[0]]:
        return ascending[::-1].copy()
    return ascending


def bootstrap_means(
    arranged: NDArray[np.float64],
    *,
    resamples: int,
    rng: np.random.Generator,
    method: ResampleMethod = "auto",
) -> tuple[NDArray[np.float64], UsedMethod]:
    """Means of `resamples` with-replacement resamples of `arranged` (same size), and the path used.

    Both paths draw from the same distribution: resampling n values uniformly with replacement
    makes the counts of the distinct values multinomial(n, empirical shares), and the resample
    mean is the count-weighted mean of the distinct values. The work is done by
    `_resampling.resampled_means`, seeded from `rng` (which advances).
    """
    entropy = rng.integers(0, 2**63, size=4, dtype=np.int64)
    seed = np.random.SeedSequence([int(word) for word in entropy])
    return resampled_means(arranged, resamples=resamples, seed=seed, method=method)


def percentile_interval(means: NDArray[np.float64], confidence_level: float) -> tuple[float, float]:
    """Percentile interval: linear interpolation between the ordered bootstrap means."""
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], method="linear")
    return float(low) + 0.0, float(high) + 0.0


def two_sided_tail_p(means: NDArray[np.float64]) -> float:
    """Twice the smaller share of means at or beyond zero, with the (r + 1) / (B + 1) correction."""
    at_or_below = int(np.count_nonzero(means <= 0.0))
    at_or_above = int(np.count_nonzero(means >= 0.0))
    smaller = min(at_or_below, at_or_above)
    return min(1.0, 2.0 * (smaller + 1) / (means.size + 1))
