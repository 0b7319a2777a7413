"""Detection limits, minimum detectable differences and Wilson intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, nct, norm
from scipy.stats import t as student_t

from groundkit.stats import (
    Stratum,
    detection_limit,
    mcnemar_power,
    minimum_detectable_difference,
    paired_minimum_detectable_difference,
    stratified_wilson_interval,
    t_power,
    wilson_interval,
)


def simulated_mcnemar_power(n: int, flips: float, change: float, trials: int, seed: int) -> float:
    """Share of simulated tables the exact McNemar test (scipy's binomtest) rejects."""
    rng = np.random.default_rng(seed)
    draw = rng.random((trials, n))
    gained = np.count_nonzero(draw < (flips + change) / 2, axis=1)
    lost = np.count_nonzero((draw >= (flips + change) / 2) & (draw < flips), axis=1)
    rejected = [
        up + down > 0 and binomtest(int(up), int(up + down), 0.5).pvalue < 0.05
        for up, down in zip(gained, lost, strict=True)
    ]
    return float(np.mean(rejected))


@pytest.mark.parametrize(("n", "points"), [(300, 5.3), (1500, 2.3), (5000, 1.3)])
def test_stats_detection_limit_figures(n: int, points: float) -> None:
    limit = detection_limit(n, 0.10)
    assert limit is not None
    assert 0 < limit < 1  # a fraction, not points
    assert round(100 * limit, 1) == points


@pytest.mark.parametrize(("confidence", "power"), [(0.95, 0.8), (0.99, 0.9), (0.9, 0.5)])
def test_stats_detection_limit_is_where_exact_mcnemar_power_reaches_the_target(
    confidence: float, power: float
) -> None:
    limit = detection_limit(800, 0.07, confidence=confidence, power=power)
    assert limit is not None
    assert mcnemar_power(800, 0.07, limit, alpha=1 - confidence) == pytest.approx(power, abs=1e-8)
    # Large n: the exact limit approaches the normal approximation Z·√(d / n).
    z = norm.ppf(1 - (1 - confidence) / 2) + norm.ppf(power)
    big = detection_limit(200_000, 0.07, confidence=confidence, power=power)
    assert big == pytest.approx(z * math.sqrt(0.07 / 200_000), rel=0.02)


def test_stats_mcnemar_power_agrees_with_simulating_scipys_exact_test() -> None:
    limit = detection_limit(200, 0.2)
    assert limit is not None
    assert mcnemar_power(200, 0.2, limit, alpha=0.05) == pytest.approx(0.8, abs=1e-8)
    # 4,000 simulated tables: SD of the share 0.0063.
    assert simulated_mcnemar_power(200, 0.2, limit, 4_000, seed=3) == pytest.approx(0.8, abs=0.02)


def test_stats_a_change_larger_than_the_flip_share_flips_more_items() -> None:
    # 10 items, 20% flipping: a change of 20 points (every flip a gain) is found < 80% of the
    # time; the limit is the larger change that, flipping that many items, is found 80%.
    assert mcnemar_power(10, 0.2, 0.2, alpha=0.05) < 0.8
    limit = detection_limit(10, 0.2)
    assert limit is not None
    assert limit > 0.2
    assert mcnemar_power(10, limit, limit, alpha=0.05) == pytest.approx(0.8, abs=1e-8)


def test_stats_no_detectable_change_below_the_exact_tests_minimum_is_none() -> None:
    assert detection_limit(5, 0.5) is None  # 2 / 2^5 > 0.05: no table of 5 items rejects
    assert detection_limit(6, 0.5) is not None


def test_stats_unpaired_minimum_detectable_difference() -> None:
    assert round(100 * minimum_detectable_difference(300), 1) == 11.5
    # Large n: the noncentral-t floor approaches the normal formula.
    z = norm.ppf(1 - 0.01 / 2) + norm.ppf(0.9)
    assert minimum_detectable_difference(100_000, power=0.9, alpha=0.01) == pytest.approx(
        z * math.sqrt(0.5 / 100_000), rel=1e-3
    )


def test_stats_paired_floor_is_where_the_t_test_reaches_the_power() -> None:
    deltas = np.random.default_rng(0).normal(0.0, 0.2, 40)
    sd = float(np.std(deltas, ddof=1))
    floor = paired_minimum_detectable_difference(deltas)
    # Independent check with scipy's noncentral t: power of the two-sided test at the floor.
    critical = student_t.ppf(0.975, 39)
    shift = floor * math.sqrt(40) / sd
    assert nct.sf(critical, 39, shift) + nct.cdf(-critical, 39, shift) == pytest.approx(0.8)
    assert t_power(floor, sd, 40, alpha=0.05) == pytest.approx(0.8)
    assert paired_minimum_detectable_difference(deltas.tolist()) == pytest.approx(floor)
    assert paired_minimum_detectable_difference(sd, 40) == pytest.approx(floor)
    # t quantiles at small n: larger than the normal-quantile formula, by more at n = 10.
    z = norm.ppf(0.975) + norm.ppf(0.8)
    assert paired_minimum_detectable_difference(1.0, 10) > 1.1 * z / math.sqrt(10)
    assert paired_minimum_detectable_difference(1.0, 10_000) == pytest.approx(
        z / math.sqrt(10_000), rel=1e-3
    )


def test_stats_paired_floor_power_measured_by_simulating_the_t_test() -> None:
    rng = np.random.default_rng(8)
    floor = paired_minimum_detectable_difference(1.0, 12)
    deltas = rng.normal(floor, 1.0, size=(8_000, 12))
    statistic = deltas.mean(axis=1) / (deltas.std(axis=1, ddof=1) / math.sqrt(12))
    rejected = np.abs(statistic) > student_t.ppf(0.975, 11)
    assert float(np.mean(rejected)) == pytest.approx(0.8, abs=0.015)  # SD 0.0045


def test_stats_paired_floor_versus_unpaired_floor() -> None:
    n = 500
    rng = np.random.default_rng(3)
    ease = rng.random(n)
    # Correlated systems: the paired floor is far below the unpaired number.
    correlated = (ease + rng.normal(0, 0.05, n)) - (ease + rng.normal(0, 0.05, n))
    assert paired_minimum_detectable_difference(correlated) < minimum_detectable_difference(n) / 3
    # Wide opposite swings (each query won by one side): the unpaired number understates it.
    swings = rng.choice([-1.0, 1.0], size=n)
    assert paired_minimum_detectable_difference(swings) > 1.3 * minimum_detectable_difference(n)


@pytest.mark.parametrize(("k", "n"), [(8, 10), (0, 10), (10, 10), (37, 120), (1, 1)])
def test_stats_wilson_matches_scipy(k: int, n: int) -> None:
    ours = wilson_interval(k, n)
    theirs = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ours.low == pytest.approx(theirs.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.high, abs=1e-12)
    assert ours.estimate == k / n
    assert ours.effective_n == n


def test_stats_wilson_hand_values() -> None:
    eight_of_ten = wilson_interval(8, 10)
    assert (round(eight_of_ten.low, 4), round(eight_of_ten.high, 4)) == (0.4902, 0.9433)
    z2 = norm.ppf(0.975) ** 2
    assert wilson_interval(0, 10).high == pytest.approx(z2 / (10 + z2))
    assert wilson_interval(0, 10).low == 0.0
    wider = wilson_interval(8, 10, confidence=0.99)
    assert wider.low < eight_of_ten.low
    assert wider.high > eight_of_ten.high


def test_stats_single_stratum_is_plain_wilson() -> None:
    plain = wilson_interval(37, 120)
    single = stratified_wilson_interval([(37, 120, 5000)])
    assert single.estimate == plain.estimate
    assert single.low == pytest.approx(plain.low, abs=1e-12)
    assert single.high == pytest.approx(plain.high, abs=1e-12)
    assert single.effective_n == pytest.approx(120)


def test_stats_stratified_by_hand() -> None:
    strata: list[Stratum | tuple[int, int, int]] = [
        Stratum(successes=45, n=50, population_size=900),
        (10, 50, 100),
    ]
    result = stratified_wilson_interval(strata)
    w = np.array([0.9, 0.1])
    p = np.array([0.9, 0.2])
    estimate = float(w @ p)
    variance = float(np.sum(w**2 * p * (1 - p) / 50))
    n_eff = estimate * (1 - estimate) / variance
    assert result.estimate == pytest.approx(estimate)
    assert result.effective_n == pytest.approx(min(n_eff, 100))
    z = norm.ppf(0.975)
    centre = (estimate + z**2 / (2 * n_eff)) / (1 + z**2 / n_eff)
    half = (
        z
        / (1 + z**2 / n_eff)
        * math.sqrt(estimate * (1 - estimate) / n_eff + z**2 / (4 * n_eff**2))
    )
    assert result.low == pytest.approx(centre - half)
    assert result.high == pytest.approx(centre + half)


def test_stats_stratified_degenerate_and_capped_cases() -> None:
    # All strata all right: variance 0, Kish weighting size 1 / Σ W²/n_h = 1 / (0.25/10 + 0.25/40).
    result = stratified_wilson_interval([(10, 10, 50), (40, 40, 50)])
    assert result.estimate == 1.0
    assert result.effective_n == pytest.approx(32.0)
    assert result.high == 1.0
    assert result.low == pytest.approx(wilson_interval(32, 32).low)
    # Homogeneous strata with very different shares: n_eff capped at the sample size.
    capped = stratified_wilson_interval([(1, 50, 100), (49, 50, 100)])
    assert capped.effective_n == 100.0
    assert capped.estimate == pytest.approx(0.5)
