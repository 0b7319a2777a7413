"""Calibration under simulation: error rates and coverage close to nominal (seeded, fast).

Tolerances come from the binomial SD of a share over T trials: sqrt(p (1 − p) / T). For
T = 400 and p = 0.05 that is 0.011, and the percentile bootstrap is known to run slightly
liberal at small n, so the accepted band [0.02, 0.09] is about −2.7 to +3.7 SD. For coverage
(p = 0.95, same SD) the band [0.92, 0.98] is about −2.7 to +2.7 SD.
"""

from __future__ import annotations

import numpy as np

from groundkit.stats import mcnemar, paired_bootstrap, sign_flip_test

TRIALS = 400
QUERIES = 100


def as_ids(values: np.ndarray) -> dict[str, float]:
    return {f"q{i}": float(v) for i, v in enumerate(values)}


def run(base: np.ndarray, cand: np.ndarray, seed: int) -> tuple[bool, float, float, float]:
    result = paired_bootstrap(
        as_ids(base),
        as_ids(cand),
        baseline_name="a",
        candidate_name="b",
        metric="m",
        resamples=1000,
        seed=seed,
    )
    return (
        result.significant,
        result.confidence_interval_low,
        result.confidence_interval_high,
        result.p_value_two_sided,
    )


def test_stats_aa_comparisons_are_called_significant_about_five_percent_of_the_time() -> None:
    rng = np.random.default_rng(2024)
    ease = rng.random((TRIALS, QUERIES))
    noise = rng.normal(0.0, 0.15, size=(2, TRIALS, QUERIES))
    outcomes = [run(ease[t] + noise[0, t], ease[t] + noise[1, t], t) for t in range(TRIALS)]
    significant_share = np.mean([o[0] for o in outcomes])
    p_share = np.mean([o[3] < 0.05 for o in outcomes])
    assert 0.02 <= significant_share <= 0.09
    assert 0.02 <= p_share <= 0.09


def test_stats_aa_with_hit_at_k_items_uses_counts_and_stays_calibrated() -> None:
    rng = np.random.default_rng(77)
    flips = rng.random((TRIALS, 2, QUERIES * 3))
    base = (flips[:, 0] < 0.55).astype(float)
    cand = (flips[:, 1] < 0.55).astype(float)
    # Shared per-query outcomes make most deltas zero, as with two similar retrievers.
    same = rng.random((TRIALS, QUERIES * 3)) < 0.8
    cand = np.where(same, base, cand)
    called = [run(base[t], cand[t], t)[0] for t in range(TRIALS)]
    assert 0.02 <= np.mean(called) <= 0.09


def test_stats_interval_covers_a_known_effect_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(7)
    true_effect = 0.04
    base = rng.random((TRIALS, QUERIES))
    cand = base + rng.normal(true_effect, 0.12, size=(TRIALS, QUERIES))
    covered = []
    for t in range(TRIALS):
        _, low, high, _ = run(base[t], cand[t], 10_000 + t)
        covered.append(low <= true_effect <= high)
    assert 0.92 <= np.mean(covered) <= 0.98


def test_stats_sign_flip_and_mcnemar_reject_about_five_percent_under_the_null() -> None:
    rng = np.random.default_rng(11)
    deltas = rng.normal(0.0, 1.0, size=(TRIALS, 40))
    flip_rejections = np.mean(
        [
            sign_flip_test(
                np.zeros(40).tolist(), deltas[t].tolist(), resamples=500, seed=t
            ).p_value_two_sided
            < 0.05
            for t in range(TRIALS)
        ]
    )
    assert 0.02 <= flip_rejections <= 0.09
    before = rng.random((TRIALS, 200)) < 0.5
    after = np.where(rng.random((TRIALS, 200)) < 0.9, before, rng.random((TRIALS, 200)) < 0.5)
    mcnemar_rejections = np.mean(
        [mcnemar(before[t].tolist(), after[t].tolist()).p_value < 0.05 for t in range(TRIALS)]
    )
    # Exact McNemar is conservative (discrete binomial), so only the upper side is tight.
    assert mcnemar_rejections <= 0.08
