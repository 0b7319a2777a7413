"""The exact null distribution of a signed sum, enumerated with bounded memory.

Under "the two systems are exchangeable on every query" each non-zero delta keeps or flips
its sign with probability 1/2. Deltas that share an absolute value v contribute
v · (2X − c) with X ~ Binomial(c, 1/2), so the signed sum only takes Π (c_k + 1) values over
the distinct absolute values — far fewer than 2^m patterns whenever values repeat (right-or-
wrong items have one distinct value: the test is then exactly McNemar's). The groups are split
into two halves whose supports are enumerated separately; the two-sided tail
P(|A + B| ≥ t) is then a sum over A of sorted-B tail probabilities (meet in the middle), so
memory and time grow with the square root of the support, not with the support itself.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray

from groundkit.stats.kernels._special import fair_binomial_pmf

__all__ = ["EXACT_SUPPORT_LIMIT", "exact_two_sided_tail"]

_TINY = float(np.finfo(np.float64).tiny)

EXACT_SUPPORT_LIMIT = 1 << 16
"""Largest support enumerated for one half (512 KiB of sums): 2^32 sign patterns in all."""


@functools.lru_cache(maxsize=1024)
def _fair_binomial(count: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(2k − count, P(k)) for k = 0 … count under Binomial(count, 1/2)."""
    k = np.arange(count + 1)
    steps = (2.0 * k - count).astype(np.float64)
    steps.flags.writeable = False
    probs = fair_binomial_pmf(count)
    probs.flags.writeable = False
    return steps, probs


def _group_support(value: float, count: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    steps, probs = _fair_binomial(count)
    return value * steps, probs


def _half_distribution(
    groups: list[tuple[float, int]],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Every value of the half's signed sum with its probability, sorted by value."""
    sums = np.zeros(1, dtype=np.float64)
    probs = np.ones(1, dtype=np.float64)
    for value, count in groups:
        values, weights = _group_support(value, count)
        sums = (sums[:, None] + values[None, :]).ravel()
        probs = (probs[:, None] * weights[None, :]).ravel()
    order = np.argsort(sums, kind="stable")
    return sums[order], probs[order]


def _sorted_signed_sums(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """All 2^m signed sums of distinct values, sorted: each value merges two sorted copies."""
    sums = np.zeros(1, dtype=np.float64)
    for value in np.sort(values)[::-1]:
        # Both shifted copies are sorted; a stable sort of their concatenation is a merge.
        sums = np.sort(np.concatenate((sums - value, sums + value)), kind="stable")
    return sums


def _split(
    groups: list[tuple[float, int]], limit: int
) -> tuple[list[tuple[float, int]], list[tuple[float, int]]] | None:
    """Two halves with supports within `limit`, largest groups placed first (greedy)."""
    halves: tuple[list[tuple[float, int]], list[tuple[float, int]]] = ([], [])
    sizes = [1, 1]
    for group in sorted(groups, key=lambda g: -g[1]):
        side = 0 if sizes[0] <= sizes[1] else 1
        sizes[side] *= group[1] + 1
        if sizes[side] > limit:
            return None
        halves[side].append(group)
    return halves


def _uniform_tail(values: NDArray[np.float64], threshold: float) -> float:
    """The tail when every |delta| is distinct: all 2^m patterns equally likely, counted."""
    half = values.size // 2
    sums_a = _sorted_signed_sums(values[:half])[::-1]
    sorted_b = _sorted_signed_sums(values[half:])
    upper = np.searchsorted(sorted_b, threshold - sums_a, side="left")
    lower = np.searchsorted(sorted_b, -threshold - sums_a, side="right")
    extreme = int(np.sum(sorted_b.size - upper) + np.sum(lower))
    return min(1.0, extreme / float(1 << values.size))


def exact_two_sided_tail(
    nonzero_abs: NDArray[np.float64], threshold: float, *, limit: int = EXACT_SUPPORT_LIMIT
) -> float | None:
    """P(|Σ sᵢ·vᵢ| ≥ threshold) over independent fair signs sᵢ, or None when too large.

    Args:
        nonzero_abs: Absolute values of the non-zero deltas.
        threshold: The observed |sum| less a rounding tolerance (ties count as extreme).
        limit: Largest support enumerated for each half.

    Returns:
        The exact tail probability, or None when the support exceeds ``limit`` squared.
    """
    if threshold <= 0.0:
        return 1.0
    values, counts = np.unique(nonzero_abs, return_counts=True)
    groups = [(float(v), int(c)) for v, c in zip(values.tolist(), counts.tolist(), strict=True)]
    if sum(math.log2(c + 1) for _, c in groups) > 2 * math.log2(limit):
        return None
    split = _split(groups, limit)
    if split is None:
        return None
    if all(count == 1 for _, count in groups):
        return _uniform_tail(values, threshold)
    sums_a, probs_a = _half_distribution(split[0])
    sorted_b, probs_b = _half_distribution(split[1])
    # cumulative[i] = P(B < sorted_b[i]); the last entry is the total mass 1.
    cumulative = np.concatenate(([0.0], np.cumsum(probs_b)))
    # A in descending order makes the searchsorted keys ascending: far faster lookups.
    sums_a, probs_a = sums_a[::-1], probs_a[::-1]
    upper = np.searchsorted(sorted_b, threshold - sums_a, side="left")
    lower = np.searchsorted(sorted_b, -threshold - sums_a, side="right")
    tail = (cumulative[-1] - cumulative[upper]) + cumulative[lower]
    # A p-value is never zero: an underflow to 0.0 is reported as the smallest normal float.
    return min(1.0, max(float(np.dot(probs_a, tail)), _TINY))
