"""McNemar, sign-flip and Holm against scipy and hand-computed values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest, permutation_test

from groundkit.stats import holm_adjust, mcnemar, sign_flip_test


def table(both: int, gained: int, lost: int, neither: int) -> tuple[list[bool], list[bool]]:
    before = [True] * both + [False] * gained + [True] * lost + [False] * neither
    after = [True] * both + [True] * gained + [False] * lost + [False] * neither
    return before, after


def test_stats_mcnemar_counts_and_exact_p_value() -> None:
    result = mcnemar(*table(240, 3, 27, 30))
    assert (result.both, result.gained, result.lost, result.neither) == (240, 3, 27, 30)
    assert result.item_count == 300
    assert result.discordant == 30
    assert result.p_value == binomtest(3, 30, 0.5).pvalue
    # By hand: 2 · (C(30,0) + C(30,1) + C(30,2) + C(30,3)) / 2**30.
    assert result.p_value == pytest.approx(2 * (1 + 30 + 435 + 4060) / 2**30, rel=1e-12)


def test_stats_mcnemar_small_and_degenerate_tables() -> None:
    assert mcnemar(*table(0, 4, 0, 0)).p_value == pytest.approx(0.125)
    assert mcnemar(*table(5, 0, 0, 5)).p_value == 1.0
    assert mcnemar(*table(1, 2, 2, 1)).p_value == 1.0
    # 0/1 integers and numpy booleans are accepted as outcomes too.
    mixed = mcnemar([1, 0, 1], [np.bool_(True), True, False])  # type: ignore[list-item]
    assert (mixed.gained, mixed.lost, mixed.both, mixed.neither) == (1, 1, 1, 0)


@pytest.mark.parametrize(("gained", "lost"), [(1, 9), (12, 4), (50, 70), (0, 6)])
def test_stats_mcnemar_matches_binomtest(gained: int, lost: int) -> None:
    result = mcnemar(*table(10, gained, lost, 10))
    assert result.p_value == pytest.approx(binomtest(gained, gained + lost, 0.5).pvalue, rel=1e-12)


def test_stats_sign_flip_exact_by_hand() -> None:
    # Deltas 1, 2, 3: of the 8 sign patterns only +++ and −−− reach |sum| = 6.
    result = sign_flip_test([0.0, 0.0, 0.0], [1.0, 2.0, 3.0], resamples=8)
    assert result.exact
    assert result.resamples == 8
    assert result.p_value_two_sided == 0.25
    assert result.effect == 2.0
    # Zero deltas cannot change sign and do not enlarge the enumeration.
    padded = sign_flip_test([0.0] * 5, [1.0, 2.0, 3.0, 0.0, 0.0], resamples=8)
    assert (padded.exact, padded.nonzero_count, padded.p_value_two_sided) == (True, 3, 0.25)
    assert padded.effect == pytest.approx(6 / 5)


def test_stats_sign_flip_no_differences() -> None:
    result = sign_flip_test({"a": 0.5, "b": 0.2}, {"a": 0.5, "b": 0.2})
    assert (result.p_value_two_sided, result.nonzero_count, result.effect) == (1.0, 0, 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stats_sign_flip_exact_matches_scipy_permutation_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    base = rng.random(10)
    cand = base + rng.normal(0.15, 0.3, 10)
    ours = sign_flip_test(base.tolist(), cand.tolist(), resamples=1024)
    theirs = permutation_test(
        (cand, base),
        lambda x, y: np.mean(x - y),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    assert ours.exact
    assert ours.p_value_two_sided == pytest.approx(theirs.pvalue, rel=1e-12)


def test_stats_sign_flip_monte_carlo_close_to_exact() -> None:
    rng = np.random.default_rng(4)
    base = rng.random(12)
    cand = base + rng.normal(0.1, 0.3, 12)
    exact = sign_flip_test(base.tolist(), cand.tolist(), resamples=4096)
    sampled = sign_flip_test(
        base.tolist(), cand.tolist(), resamples=4095, seed=9, method="monte carlo"
    )
    assert exact.exact
    assert not sampled.exact
    assert sampled.method == "monte carlo"
    # SD of a share from 4095 draws is at most 0.008, and the result reports its own SE.
    assert sampled.p_value_two_sided == pytest.approx(exact.p_value_two_sided, abs=0.03)
    assert sampled.standard_error == pytest.approx(
        (sampled.p_value_two_sided * (1 - sampled.p_value_two_sided) / 4095) ** 0.5
    )
    assert sampled == sign_flip_test(
        base.tolist(), cand.tolist(), resamples=4095, seed=9, method="monte carlo"
    )


def test_stats_sign_flip_floor_when_every_delta_is_positive() -> None:
    base = [0.0] * 30
    cand = [0.1 + 0.01 * i for i in range(30)]
    # Exact: only the observed pattern and its mirror image reach |sum|: 2 of 2^30.
    exact = sign_flip_test(base, cand, resamples=999)
    assert exact.exact
    assert exact.p_value_two_sided == 2 / 2**30
    # Monte Carlo (forced, or beyond the enumeration limit): floored at 1 / (B + 1).
    sampled = sign_flip_test(base, cand, resamples=999, method="monte carlo")
    assert sampled.p_value_two_sided == 1 / 1000
    many = [0.1 + 0.001 * i for i in range(60)]
    beyond = sign_flip_test([0.0] * 60, many, resamples=999)
    assert beyond.method == "monte carlo"
    assert beyond.p_value_two_sided == 1 / 1000


def test_stats_sign_flip_exact_by_meeting_in_the_middle_equals_brute_force() -> None:
    rng = np.random.default_rng(21)
    for size in (3, 9, 16):
        # Repeated absolute values take the binomial-group path, distinct ones the counted one.
        for deltas in (rng.normal(0, 1, size), rng.choice([-0.5, 0.25, 1.0], size)):
            signs = np.array(list(itertools.product([-1.0, 1.0], repeat=size)))
            observed = abs(float(deltas.sum()))
            brute = float(np.mean(np.abs(signs @ np.abs(deltas)) >= observed - 1e-9))
            ours = sign_flip_test(np.zeros(size).tolist(), deltas.tolist())
            assert ours.exact
            assert ours.p_value_two_sided == pytest.approx(brute, rel=1e-12)


def test_stats_sign_flip_on_right_or_wrong_deltas_is_exact_mcnemar_at_any_n() -> None:
    rng = np.random.default_rng(2)
    before = rng.random(5_000) < 0.6
    after = np.where(rng.random(5_000) < 0.8, before, rng.random(5_000) < 0.65)
    flips = sign_flip_test(before.astype(float).tolist(), after.astype(float).tolist())
    table = mcnemar(before.tolist(), after.tolist())
    assert flips.exact
    assert flips.p_value_two_sided == pytest.approx(table.p_value, rel=1e-9)


def test_stats_monte_carlo_p_value_is_refined_near_a_threshold() -> None:
    rng = np.random.default_rng(13)
    base = rng.random(80)
    cand = base + rng.normal(0.0, 0.1, 80) + 0.0155  # p ≈ 0.052 from the first patterns
    plain = sign_flip_test(base.tolist(), cand.tolist(), resamples=2_000, seed=1)
    near = abs(plain.p_value_two_sided - 0.05) < 3 * plain.standard_error
    refined = sign_flip_test(
        base.tolist(), cand.tolist(), resamples=2_000, seed=1, thresholds=[0.05]
    )
    assert near  # the data were chosen so the first 2,000 patterns leave it undecided
    assert refined.resamples > plain.resamples
    assert refined.standard_error < plain.standard_error
    far = sign_flip_test(base.tolist(), cand.tolist(), resamples=2_000, seed=1, thresholds=[0.9])
    assert far.resamples == 2_000


def test_stats_holm_hand_computed_example() -> None:
    # Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → max-so-far 0.06.
    adjusted = holm_adjust([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    keyed = holm_adjust({"dense": 0.01, "hybrid": 0.04, "rerank": 0.03, "splade": 0.005})
    assert keyed == pytest.approx({"dense": 0.03, "hybrid": 0.06, "rerank": 0.06, "splade": 0.02})
    assert holm_adjust([0.2, 0.6]) == [0.4, 0.6]
    assert holm_adjust([0.7, 0.9]) == [1.0, 1.0]
    assert holm_adjust([]) == []
    assert holm_adjust([0.04]) == [0.04]
