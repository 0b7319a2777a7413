"""Vectorised bootstrap engine: canonical arrangement, resampled means, interval and tail share."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from groundkit.stats._errors import StatsError

__all__ = [
    "ResampleMethod",
    "UsedMethod",
    "bootstrap_means",
    "canonical_arrangement",
    "exact_mean",
    "percentile_interval",
    "two_sided_tail_p",
]

ResampleMethod = Literal["auto", "resample", "multinomial"]
UsedMethod = Literal["resample", "multinomial"]

# Elements materialised per chunk (index matrix plus gathered values, 8 bytes each): about
# 16 MiB, so one million queries never need more than a few tens of MiB whatever `resamples` is.
_CHUNK_ELEMENTS = 1 << 20
# The multinomial path draws one binomial per distinct value and resample while the general
# path draws one index per query and resample; a binomial costs roughly ten to twenty index
# draws, so counts win comfortably once there are at least 16 queries per distinct value.
_QUERIES_PER_DISTINCT_VALUE = 16


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


def _distinct_runs(arranged: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Distinct values of a monotone array in order of appearance, with their counts."""
    starts = np.concatenate(([0], np.flatnonzero(np.diff(arranged) != 0) + 1))
    counts = np.diff(np.concatenate((starts, [arranged.size]))).astype(np.int64)
    return arranged[starts], counts


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
    mean is the count-weighted mean of the distinct values.
    """
    if method not in ("auto", "resample", "multinomial"):
        raise StatsError(f"method must be 'auto', 'resample' or 'multinomial' (got {method!r})")
    size = arranged.size
    values, counts = _distinct_runs(arranged)
    used: UsedMethod
    if method == "auto":
        few = values.size * _QUERIES_PER_DISTINCT_VALUE <= size
        used = "multinomial" if few else "resample"
    else:
        used = method
    means = np.empty(resamples, dtype=np.float64)
    if used == "multinomial":
        shares = counts / size
        rows = max(1, _CHUNK_ELEMENTS // values.size)
        for start in range(0, resamples, rows):
            stop = min(resamples, start + rows)
            drawn = rng.multinomial(size, shares, size=stop - start)
            means[start:stop] = (drawn @ values) / size
    else:
        rows = max(1, _CHUNK_ELEMENTS // size)
        for start in range(0, resamples, rows):
            stop = min(resamples, start + rows)
            picks = rng.integers(0, size, size=(stop - start, size))
            means[start:stop] = arranged[picks].sum(axis=1) / size
    return means, used


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
