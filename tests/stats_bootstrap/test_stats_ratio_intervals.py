"""Stratified domain and ratio intervals: exact values against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from groundkit.stats import (
    RatioStratum,
    StatsError,
    stratified_domain_interval,
    stratified_ratio_interval,
    stratified_wilson_interval,
    wilson_interval,
)

Z = float(norm.ppf(0.975))


def _wilson(p: float, n: float) -> tuple[float, float]:
    # Wilson's score interval written out, independent of the package's helper.
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def test_domain_share_by_hand() -> None:
    # h1: N 100, 10 drawn, 6 in the domain, 3 of them right; h2: N 50, 5 drawn, 2 in, 1 right.
    # D = 80: p = 100/80 * 3/10 + 50/80 * 1/5 = 0.375 + 0.125 = 0.5;
    # Var = 1.25² * .3 * .7 / 10 + .625² * .2 * .8 / 5 = 0.0328125 + 0.0125 = 0.0453125.
    strata = [
        RatioStratum(n=10, population_size=100, numerator=3, denominator=6),
        RatioStratum(n=5, population_size=50, numerator=1, denominator=2),
    ]
    result = stratified_domain_interval(strata, 80)
    assert result.estimate == pytest.approx(0.5, abs=1e-15)
    assert result.effective_n == pytest.approx(0.25 / 0.0453125, rel=1e-12)
    low, high = _wilson(0.5, 0.25 / 0.0453125)
    assert (result.low, result.high) == (
        pytest.approx(low, rel=1e-12),
        pytest.approx(high, rel=1e-12),
    )
    assert result.caution is not None  # n_eff below 300


def test_domain_that_is_the_whole_population_is_the_stratified_wilson() -> None:
    strata = [(3, 10, 100), (4, 5, 50)]
    plain = stratified_wilson_interval(strata)
    domain = stratified_domain_interval(
        [RatioStratum(n=n, population_size=N, numerator=s, denominator=n) for s, n, N in strata],
        150,
    )
    assert domain.estimate == pytest.approx(plain.estimate, rel=1e-15)
    assert (domain.low, domain.high) == (pytest.approx(plain.low), pytest.approx(plain.high))
    assert domain.effective_n == pytest.approx(plain.effective_n)


def test_ratio_by_hand_against_item_level_linearisation() -> None:
    # h1: N 100, 10 drawn, 8 relevant, 6 of those found; h2: N 200, 5 drawn, 4 relevant, 1 found.
    # X = 100*6/10 + 200*1/5 = 100, Y = 100*8/10 + 200*4/5 = 240, R = 5/12.
    strata = [
        RatioStratum(n=10, population_size=100, numerator=6, denominator=8),
        RatioStratum(n=5, population_size=200, numerator=1, denominator=4),
    ]
    result = stratified_ratio_interval(strata)
    ratio = 5 / 12
    assert result.estimate == pytest.approx(ratio, rel=1e-15)
    # The same variance from the items themselves: d = x - R y, its population variance.
    items = [
        (np.array([1] * 6 + [0] * 4), np.array([1] * 8 + [0] * 2), 100),
        (np.array([1] + [0] * 4), np.array([1] * 4 + [0]), 200),
    ]
    variance = sum((N / 240) ** 2 * np.var(x - ratio * y) / len(x) for x, y, N in items)
    effective = ratio * (1 - ratio) / variance
    assert effective < 12  # below the cap: the linearisation decides
    assert result.effective_n == pytest.approx(effective, rel=1e-12)
    low, high = _wilson(ratio, effective)
    assert result.low == pytest.approx(low, rel=1e-12)
    assert result.high == pytest.approx(high, rel=1e-12)


def test_ratio_effective_n_is_capped_at_the_sampled_relevant_items() -> None:
    # X = 40, Y = 90, R = 4/9; the linearised n_eff (9.80) exceeds the 5 + 4 sampled relevant.
    strata = [
        RatioStratum(n=10, population_size=100, numerator=3, denominator=5),
        RatioStratum(n=5, population_size=50, numerator=1, denominator=4),
    ]
    result = stratified_ratio_interval(strata)
    assert result.estimate == pytest.approx(4 / 9, rel=1e-15)
    assert result.effective_n == 9.0
    assert (result.low, result.high) == tuple(pytest.approx(v) for v in _wilson(4 / 9, 9.0))


@pytest.mark.parametrize(("a", "b", "n"), [(3, 7, 12), (0, 4, 9), (5, 5, 5), (1, 1, 30)])
def test_one_stratum_ratio_is_wilson_of_found_over_relevant(a: int, b: int, n: int) -> None:
    result = stratified_ratio_interval(
        [RatioStratum(n=n, population_size=1000, numerator=a, denominator=b)]
    )
    plain = wilson_interval(a, b)
    assert result.estimate == pytest.approx(plain.estimate, abs=1e-15)
    assert (result.low, result.high) == (pytest.approx(plain.low), pytest.approx(plain.high))
    assert result.effective_n == pytest.approx(b)


@pytest.mark.parametrize(
    "strata",
    [
        [],
        [RatioStratum(n=3, population_size=10, numerator=2, denominator=1)],
        [RatioStratum(n=3, population_size=10, numerator=1, denominator=4)],
        [RatioStratum(n=0, population_size=10, numerator=0, denominator=0)],
        [RatioStratum(n=3, population_size=10, numerator=0, denominator=0)],
    ],
)
def test_bad_strata_raise(strata: list[RatioStratum]) -> None:
    with pytest.raises(StatsError):
        stratified_ratio_interval(strata)
    with pytest.raises(StatsError):
        stratified_domain_interval(strata, 10)
