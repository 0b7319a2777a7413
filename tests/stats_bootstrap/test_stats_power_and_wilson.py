"""Detection limits, minimum detectable differences and Wilson intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from groundkit.stats import (
    Stratum,
    detection_limit,
    minimum_detectable_difference,
    paired_minimum_detectable_difference,
    stratified_wilson_interval,
    wilson_interval,
)


@pytest.mark.parametrize(("n", "points"), [(300, 5.1), (1500, 2.3), (5000, 1.3)])
def test_stats_detection_limit_figures(n: int, points: float) -> None:
    limit = detection_limit(n, 0.10)
    assert 0 < limit < 1  # a fraction, not points
    assert round(100 * limit, 1) == points


@pytest.mark.parametrize(("confidence", "power"), [(0.95, 0.8), (0.99, 0.9), (0.9, 0.5)])
def test_stats_detection_limit_formula(confidence: float, power: float) -> None:
    z = norm.ppf(1 - (1 - confidence) / 2) + norm.ppf(power)
    assert detection_limit(800, 0.07, confidence=confidence, power=power) == pytest.approx(
        z * math.sqrt(0.07 / 800), rel=1e-12
    )


def test_stats_unpaired_minimum_detectable_difference() -> None:
    assert round(100 * minimum_detectable_difference(300), 1) == 11.4
    z = norm.ppf(1 - 0.01 / 2) + norm.ppf(0.9)
    assert minimum_detectable_difference(1000, power=0.9, alpha=0.01) == pytest.approx(
        z * math.sqrt(0.5 / 1000), rel=1e-12
    )


def test_stats_paired_floor_from_sd_and_from_deltas() -> None:
    z = norm.ppf(0.975) + norm.ppf(0.8)
    # Worst case: ±1 deltas (SD 1) is √2 times the unpaired number.
    assert paired_minimum_detectable_difference(1.0, 300) == pytest.approx(
        math.sqrt(2) * minimum_detectable_difference(300), rel=1e-12
    )
    deltas = np.random.default_rng(0).normal(0.0, 0.2, 400)
    expected = z * np.std(deltas, ddof=1) / math.sqrt(400)
    assert paired_minimum_detectable_difference(deltas) == pytest.approx(expected, rel=1e-12)
    assert paired_minimum_detectable_difference(deltas.tolist()) == pytest.approx(expected)
    # Projecting to four times the queries halves the floor.
    assert paired_minimum_detectable_difference(deltas, 1600) == pytest.approx(expected / 2)


def test_stats_binary_detection_limit_is_the_paired_floor_with_sd_sqrt_d() -> None:
    assert detection_limit(300, 0.1) == pytest.approx(
        paired_minimum_detectable_difference(math.sqrt(0.1), 300), rel=1e-12
    )


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
