"""All pairs of systems at once: the randomised max-statistic (Tukey HSD-like) comparison.

With k systems scored on the same n queries, comparing every pair one by one makes
k(k − 1)/2 claims. Under "all systems are exchangeable on every query", the k scores of each
query may be shuffled among the systems; the largest difference between any two system means
over such shuffles (the range) is the null distribution of the whole family. A pair's adjusted
p-value is the share of shuffles whose range reaches the pair's observed difference, which
keeps the chance of any false claim among all pairs at alpha (Tukey's HSD in randomisation
form, as used in IR by Carterette 2012 and Sakai 2014); the (1 − alpha) quantile of the range
gives simultaneous intervals for every difference.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import (
    check_probability,
    check_resamples,
    check_seed,
    paired_arrays,
)
from groundkit.stats.kernels._engine import exact_mean
from groundkit.stats.verdicts._comparison import Verdict
from groundkit.stats.verdicts._family import minimum_queries

__all__ = ["AllPairsResult", "PairResult", "compare_all_pairs"]

_CHUNK_ELEMENTS = 1 << 21


class PairResult(BaseModel):
    """One pair of an all-pairs comparison: b against a.

    Attributes:
        a: First system.
        b: Second system.
        mean_a: Mean of a.
        mean_b: Mean of b.
        difference: mean_b − mean_a.
        low: Lower end of the simultaneous interval.
        high: Upper end.
        p_adjusted: Share of shuffles whose range reaches |difference| (family-adjusted).
        standard_error: Monte Carlo standard error of ``p_adjusted``.
        verdict: "better", "worse", "inconclusive" or "too few queries" (b against a).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    a: str
    b: str
    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    p_adjusted: float
    standard_error: float
    verdict: Verdict


class AllPairsResult(BaseModel):
    """Every pair of systems compared under one family-wise randomisation test.

    Attributes:
        metric: The metric compared.
        systems: System names in the order given.
        query_count: Queries every system was scored on.
        resamples: Shuffles drawn.
        seed: Seed of the shuffles.
        alpha: Family-wise level.
        confidence_level: Coverage of the simultaneous intervals (1 − alpha).
        critical_range: The (1 − alpha) quantile of the range of centred scores under
            shuffling: the half-width of every simultaneous interval.
        minimum_queries: Fewest queries with which a pair could reach p < alpha.
        pairs: One entry per pair, in the order of the systems.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str | None
    systems: list[str]
    query_count: int
    resamples: int
    seed: int
    alpha: float
    confidence_level: float
    critical_range: float
    minimum_queries: int
    pairs: list[PairResult]


def _matrix(scores: Mapping[str, Mapping[str, float]]) -> tuple[list[str], NDArray[np.float64]]:
    if not isinstance(scores, Mapping) or len(scores) < 2:
        raise StatsError("all-pairs comparison needs a mapping of at least two systems to scores")
    names = [str(name) for name in scores]
    first = names[0]
    columns = []
    for name in names:
        _, _, column = paired_arrays(
            scores[first], scores[name], baseline_name=first, candidate_name=name
        )
        columns.append(column)
    return names, np.stack(columns, axis=1)


def _ranges(matrix: NDArray[np.float64], resamples: int, seed: int) -> NDArray[np.float64]:
    """The range of the system means over `resamples` within-query shuffles."""
    n, k = matrix.shape
    rng = np.random.default_rng(seed)
    out = np.empty(resamples, dtype=np.float64)
    rows = max(1, _CHUNK_ELEMENTS // (n * k))
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        block = np.broadcast_to(matrix, (stop - start, n, k)).copy()
        rng.permuted(block, axis=2, out=block)
        means = block.sum(axis=1) / n
        out[start:stop] = means.max(axis=1) - means.min(axis=1)
    return out


def compare_all_pairs(
    scores: Mapping[str, Mapping[str, float]],
    *,
    metric: str | None = None,
    resamples: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
) -> AllPairsResult:
    """Compare every pair of systems with the randomised max-statistic test.

    Args:
        scores: System name → (query id → score); every system scores the same queries.
        metric: The metric (a label).
        resamples: Within-query shuffles to draw.
        seed: Non-negative seed of the shuffles.
        alpha: Family-wise level, strictly in (0, 1).

    Returns:
        The frozen `AllPairsResult`.

    Raises:
        StatsError: Fewer than two systems, systems scoring different queries, a non-finite
            score, or a bad setting.
    """
    count = check_resamples(resamples)
    seed_value = check_seed(seed)
    level = check_probability(alpha, name="alpha")
    names, matrix = _matrix(scores)
    n = matrix.shape[0]
    ranges = _ranges(matrix, count, seed_value)
    # Intervals: the same shuffles of the scores with each system's own mean removed, so the
    # range measures how far estimated differences stray from the true ones under any shift.
    centred = _ranges(matrix - matrix.mean(axis=0), count, seed_value)
    critical = float(np.quantile(centred, 1.0 - level, method="higher"))
    means = [exact_mean(matrix[:, j]) for j in range(len(names))]
    tolerance = 1e-9 * float(np.abs(matrix).sum()) / n
    needed = minimum_queries(level)
    pairs = []
    for i, j in itertools.combinations(range(len(names)), 2):
        difference = means[j] - means[i]
        extreme = int(np.count_nonzero(ranges >= abs(difference) - tolerance))
        p = (extreme + 1) / (count + 1)
        verdict: Verdict = "inconclusive"
        if n < needed:
            verdict = "too few queries"
        elif p < level:
            verdict = "better" if difference > 0 else "worse"
        pairs.append(
            PairResult(
                a=names[i],
                b=names[j],
                mean_a=means[i],
                mean_b=means[j],
                difference=difference,
                low=difference - critical,
                high=difference + critical,
                p_adjusted=p,
                standard_error=math.sqrt(p * (1.0 - p) / count),
                verdict=verdict,
            )
        )
    return AllPairsResult(
        metric=metric,
        systems=names,
        query_count=n,
        resamples=count,
        seed=seed_value,
        alpha=level,
        confidence_level=1.0 - level,
        critical_range=critical,
        minimum_queries=needed,
        pairs=pairs,
    )
