"""The verdict engine's parts against independent references and hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.stats import beta, binomtest, nct, norm, ttest_rel
from scipy.stats import t as student_t

from groundkit.stats import (
    FamilySettings,
    PairedScores,
    StatsError,
    bh_adjust,
    compare_all_pairs,
    compare_family,
    compare_items,
    exact_binomial_interval,
    mean_interval,
    paired_difference_interval,
    sign_flip_test,
)
from groundkit.stats.inference._tango import tango_interval


def rows(values: np.ndarray | list[float]) -> dict[str, float]:
    return {f"q{i:04d}": float(v) for i, v in enumerate(values)}


def table(both: int, gained: int, lost: int, neither: int) -> tuple[list[float], list[float]]:
    before = [1.0] * both + [0.0] * gained + [1.0] * lost + [0.0] * neither
    after = [1.0] * both + [1.0] * gained + [0.0] * lost + [0.0] * neither
    return before, after


# --- Tango against a brute-force score statistic ------------------------------------------


def brute_score_statistic(gained: int, lost: int, n: int, delta: float) -> float:
    """The score statistic with the restricted MLE found numerically (no closed form)."""
    both_and_neither = n - gained - lost

    def negative_log_likelihood(lost_share: float) -> float:
        gain_share = lost_share + delta
        rest = 1.0 - gain_share - lost_share
        if gain_share <= 0 or lost_share <= 0 or rest <= 0:
            return math.inf
        return -(
            gained * math.log(gain_share)
            + lost * math.log(lost_share)
            + both_and_neither * math.log(rest)
        )

    upper = (1.0 - delta) / 2.0
    found = minimize_scalar(
        negative_log_likelihood,
        bounds=(max(1e-12, -delta + 1e-12), upper - 1e-12),
        method="bounded",
        options={"xatol": 1e-12},
    )
    share = float(found.x)
    return (gained - lost - n * delta) / math.sqrt(n * (2 * share + delta * (1 - delta)))


@pytest.mark.parametrize(
    ("gained", "lost", "n"), [(3, 27, 300), (12, 2, 50), (5, 5, 40), (1, 0, 9)]
)
def test_tango_interval_ends_solve_the_brute_force_score_equation(
    gained: int, lost: int, n: int
) -> None:
    low, high = tango_interval(gained, lost, n, confidence_level=0.95)
    z = norm.ppf(0.975)
    for end, target in ((low, z), (high, -z)):
        if -1.0 < end < 1.0:
            assert brute_score_statistic(gained, lost, n, end) == pytest.approx(target, abs=1e-4)


def test_tango_excludes_zero_whenever_exact_mcnemar_rejects() -> None:
    for n in (10, 30, 60):
        for gained in range(n + 1):
            for lost in range(n + 1 - gained):
                if gained + lost == 0:
                    continue
                if binomtest(gained, gained + lost, 0.5).pvalue < 0.05:
                    low, high = tango_interval(gained, lost, n, confidence_level=0.95)
                    assert low > 0 or high < 0, (gained, lost, n)


# --- Clopper–Pearson, t, betting ----------------------------------------------------------


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (37, 120)])
def test_exact_binomial_interval_matches_scipy(k: int, n: int) -> None:
    ours = exact_binomial_interval(k, n)
    theirs = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert ours.low == pytest.approx(theirs.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.high, abs=1e-12)
    assert ours.method == "clopper-pearson"
    assert mean_interval([1.0] * k + [0.0] * (n - k)).low == pytest.approx(ours.low)


def test_mean_interval_uses_t_where_cochran_holds_and_betting_where_not() -> None:
    rng = np.random.default_rng(1)
    symmetric = rng.beta(3, 3, 200)
    interval = mean_interval(symmetric)
    assert interval.method == "t"
    half = student_t.ppf(0.975, 199) * symmetric.std(ddof=1) / math.sqrt(200)
    assert interval.low == pytest.approx(symmetric.mean() - half)
    skewed = np.where(rng.random(20) < 0.8, 0.0, rng.random(20))
    assert mean_interval(skewed).method == "betting"
    assert mean_interval(skewed, bounds=None).caution is not None  # unbounded: says so
    with pytest.raises(StatsError, match="outside the bounds"):
        mean_interval([0.5, 2.0], bounds=(0.0, 1.0))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=2, max_size=40),
    st.integers(0, 2**31),
)
def test_betting_interval_always_contains_the_sample_mean_and_stays_in_bounds(
    values: list[float], seed: int
) -> None:
    array = np.asarray(values)
    if float(np.ptp(array)) == 0.0:
        array = np.append(array, 1.0 - array[0] if array[0] != 0.5 else 0.0)
    result = mean_interval(array, seed=seed, bounds=(0.0, 1.0))
    assert 0.0 <= result.low <= result.value <= result.high <= 1.0


def test_betting_interval_covers_skewed_means_at_n_10() -> None:
    rng = np.random.default_rng(4)
    truth = 0.2 * beta.mean(2, 5)
    covered = 0
    trials = 300
    for _ in range(trials):
        x = np.where(rng.random(10) < 0.8, 0.0, rng.beta(2, 5, 10))
        result = mean_interval(x)
        covered += result.low <= truth <= result.high
    assert covered / trials >= 0.95  # valid at every n: never below the promise


# --- the family ---------------------------------------------------------------------------


def test_holm_family_adjusts_every_decision_and_leaves_guardrails_alone() -> None:
    a, b = table(200, 30, 8, 62)
    same = [0.5] * 300
    members = [
        PairedScores(rows(a), rows(b), metric="hit@10", label="dense"),
        PairedScores(rows(a), rows(a), metric="hit@10", label="copy"),
        PairedScores(rows(same), rows(same), metric="mrr", label="dense", role="guardrail"),
    ]
    results = compare_family(members, FamilySettings(adjustment="holm"))
    decisions = [r for r in results if r.role == "decision"]
    assert [r.family_size for r in decisions] == [2, 2]
    assert decisions[0].p_adjusted == pytest.approx(2 * decisions[0].p_value)
    assert results[2].adjustment == "none"
    assert results[2].p_adjusted == results[2].p_value
    assert results[2].family_size == 1


def test_bh_family_uses_the_step_up_adjustment() -> None:
    assert bh_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    a, b = table(150, 25, 5, 70)
    members = [PairedScores(rows(a), rows(b), metric="m", label=str(i)) for i in range(3)]
    results = compare_family(members, FamilySettings(adjustment="bh"))
    assert {r.p_adjusted for r in results} == {results[0].p_value}  # equal p: BH keeps it


def test_minimum_queries_grows_with_the_holm_family() -> None:
    a = [0.0] * 8
    b = [1.0] * 8
    alone = compare_items(rows(a), rows(b))
    assert alone.verdict == "better"
    assert alone.minimum_queries == 6
    members = [PairedScores(rows(a), rows(b), metric=f"m{i}") for i in range(12)]
    family = compare_family(members, FamilySettings())
    assert {r.minimum_queries for r in family} == {9}
    assert {r.verdict for r in family} == {"too few queries"}


def test_equivalence_is_told_apart_from_inconclusive() -> None:
    rng = np.random.default_rng(2)
    base = rng.random(400)
    close = np.clip(base + rng.normal(0.0, 0.01, 400), 0, 1)
    shown = compare_items(rows(base), rows(close), equivalence_margin=0.02)
    assert shown.verdict == "equivalent"
    assert shown.equivalent
    # Independent check: TOST with scipy's one-sided paired t tests.
    deltas = close - base
    upper = ttest_rel(close, base - 0.02, alternative="greater").pvalue
    lower = ttest_rel(close, base + 0.02, alternative="less").pvalue
    assert shown.equivalence_p_value == pytest.approx(max(upper, lower), rel=1e-9)
    few = compare_items(rows(base[:20]), rows(close[:20] + 0.05), equivalence_margin=0.02)
    assert few.verdict in ("better", "inconclusive")
    assert not few.equivalent
    assert float(np.mean(deltas)) < 0.02


def test_effect_size_and_relative_change_against_scipy() -> None:
    rng = np.random.default_rng(3)
    base = rng.beta(2, 3, 80)
    cand = np.clip(base + rng.normal(0.03, 0.1, 80), 0, 1)
    result = compare_items(rows(base), rows(cand))
    deltas = cand - base
    dz = deltas.mean() / deltas.std(ddof=1)
    assert result.effect_size == pytest.approx(dz)
    # The d_z interval inverts the noncentral t: at each end the observed t is a 2.5% tail.
    t_obs = dz * math.sqrt(80)
    assert result.effect_size_low is not None
    assert result.effect_size_high is not None
    assert nct.cdf(t_obs, 79, result.effect_size_low * math.sqrt(80)) == pytest.approx(0.975)
    assert nct.cdf(t_obs, 79, result.effect_size_high * math.sqrt(80)) == pytest.approx(0.025)
    assert result.paired_t_p_value == pytest.approx(ttest_rel(cand, base).pvalue)
    assert result.relative_change == pytest.approx(cand.mean() / base.mean() - 1)
    # Fieller's ends make the ratio's t statistic exactly the critical value.
    q = student_t.ppf(0.975, 79)
    for rho in (result.relative_change_low, result.relative_change_high):
        assert rho is not None
        combined = cand - (1 + rho) * base
        t_value = combined.mean() / (combined.std(ddof=1) / math.sqrt(80))
        assert abs(t_value) == pytest.approx(q, rel=1e-6)
    assert (result.gained, result.ties, result.lost) == (
        int((deltas > 0).sum()),
        int((deltas == 0).sum()),
        int((deltas < 0).sum()),
    )


def test_all_pairs_controls_the_family_and_reduces_to_sign_flip_for_two() -> None:
    rng = np.random.default_rng(5)
    ease = rng.random(120)
    systems = {
        name: rows(np.clip(ease + shift + rng.normal(0, 0.1, 120), 0, 1))
        for name, shift in (("a", 0.0), ("b", 0.0), ("c", 0.08))
    }
    result = compare_all_pairs(systems, metric="ndcg@10", resamples=4_000, seed=1)
    by_pair = {(p.a, p.b): p for p in result.pairs}
    assert by_pair[("a", "c")].verdict == "better"
    assert by_pair[("a", "b")].verdict == "inconclusive"
    for pair in result.pairs:
        assert pair.low == pytest.approx(pair.difference - result.critical_range)
    two = compare_all_pairs({"a": systems["a"], "c": systems["c"]}, resamples=4_000, seed=2)
    flips = sign_flip_test(systems["a"], systems["c"], resamples=4_000, method="monte carlo")
    assert two.pairs[0].p_adjusted == pytest.approx(flips.p_value_two_sided, abs=0.01)


# --- edges ---------------------------------------------------------------------------------


def test_differences_that_overflow_are_refused() -> None:
    with pytest.raises(StatsError, match="not a finite number"):
        compare_items({"q1": 1e308, "q2": 0.0}, {"q1": -1e308, "q2": 0.0})
    with pytest.raises(StatsError, match="too large to sum"):
        sign_flip_test([0.0] * 3, [1e308, 1e308, 1e308])
    with pytest.raises(StatsError, match="not a finite number"):
        paired_difference_interval({"q": -1e308}, {"q": 1e308})


def test_mixed_id_types_are_a_stats_error() -> None:
    with pytest.raises(StatsError, match="one type"):
        compare_items({1: 0.5, "2": 0.3}, {1: 0.5, "2": 0.4})  # type: ignore[dict-item]
    with pytest.raises(StatsError, match="one type"):
        mean_interval({1: 0.5, "2": 0.3})  # type: ignore[dict-item]


def test_exact_sign_flip_memory_stays_bounded() -> None:
    import tracemalloc

    rng = np.random.default_rng(6)
    deltas = rng.normal(0.05, 0.2, 30)
    tracemalloc.start()
    result = sign_flip_test(np.zeros(30).tolist(), deltas.tolist())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.exact
    assert peak < 64 * 2**20  # the old 2^n enumeration took 1.55 GB at 22 deltas
