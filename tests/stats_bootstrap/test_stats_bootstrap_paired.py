"""Behaviour of paired_bootstrap and bootstrap_interval: determinism, p-value, interval, paths."""

from __future__ import annotations

import random
import tracemalloc

import numpy as np
import pytest
from scipy.stats import ks_2samp

from groundkit.stats import BootstrapResult, StatsError, bootstrap_interval, paired_bootstrap
from groundkit.stats.kernels import _engine as engine
from groundkit.stats.kernels import _resampling as resampling


def scores(seed: int, n: int, *, binary: bool = False) -> tuple[dict[str, float], dict[str, float]]:
    rng = np.random.default_rng(seed)
    if binary:
        hit_base = rng.random(n) < 0.6
        hit_cand = np.where(rng.random(n) < 0.15, ~hit_base, hit_base)
        pairs = hit_base.astype(float), hit_cand.astype(float)
    else:
        base = rng.random(n)
        pairs = base, np.clip(base + rng.normal(0.02, 0.2, n), 0.0, 1.0)
    ids = [f"query-{i}" for i in range(n)]
    return (
        dict(zip(ids, pairs[0].tolist(), strict=True)),
        dict(zip(ids, pairs[1].tolist(), strict=True)),
    )


def boot(baseline: dict[str, float], candidate: dict[str, float], **kw: object) -> BootstrapResult:
    return paired_bootstrap(
        baseline,
        candidate,
        baseline_name="bm25",
        candidate_name="dense",
        metric="ndcg@10",
        **kw,  # type: ignore[arg-type]
    )


def test_stats_result_fields_and_effect() -> None:
    baseline, candidate = scores(1, 200)
    result = boot(baseline, candidate, resamples=500, seed=3)
    expected_effect = np.mean([candidate[q] - baseline[q] for q in sorted(baseline)])
    assert result.effect == pytest.approx(expected_effect, abs=1e-15)
    assert (result.baseline, result.candidate, result.metric) == ("bm25", "dense", "ndcg@10")
    assert (result.query_count, result.resamples, result.seed) == (200, 500, 3)
    assert result.confidence_level == 0.95
    assert result.method == "resample"
    with pytest.raises(ValueError, match="frozen"):
        result.effect = 1.0  # type: ignore[misc]


def test_stats_identical_run_to_run_and_independent_of_call_order() -> None:
    baseline, candidate = scores(2, 150)
    first = boot(baseline, candidate)
    boot(*scores(99, 50))  # another call in between must not leak random state
    np.random.seed(123)
    random.seed(123)
    assert boot(baseline, candidate) == first


def test_stats_mapping_insertion_order_does_not_matter() -> None:
    baseline, candidate = scores(3, 120)
    shuffled = list(baseline)
    random.Random(5).shuffle(shuffled)
    reordered_base = {q: baseline[q] for q in shuffled}
    reordered_cand = {q: candidate[q] for q in reversed(shuffled)}
    assert boot(reordered_base, reordered_cand) == boot(baseline, candidate)


def test_stats_seed_changes_the_resamples() -> None:
    baseline, candidate = scores(4, 100)
    one, two = boot(baseline, candidate, seed=1), boot(baseline, candidate, seed=2)
    assert one.effect == two.effect
    assert one.confidence_interval_low != two.confidence_interval_low


@pytest.mark.parametrize("method", ["resample", "multinomial"])
def test_stats_p_value_floor_when_every_delta_is_positive(method: str) -> None:
    baseline = {f"q{i}": 0.1 * (i % 5) for i in range(40)}
    candidate = {q: v + 0.05 + 0.01 * (i % 3) for i, (q, v) in enumerate(baseline.items())}
    result = boot(baseline, candidate, resamples=999, method=method)
    assert result.p_value_two_sided == 2 / 1000
    assert result.significant
    assert result.confidence_interval_low > 0


def test_stats_significant_is_read_from_the_interval_not_the_p_value() -> None:
    # Every delta positive: the interval excludes zero, but with B = 20 the smallest possible
    # p-value is 2 / 21 ≈ 0.095, well above 0.05. The two must disagree here.
    baseline = {f"q{i}": 0.0 for i in range(30)}
    candidate = {f"q{i}": 0.1 + 0.01 * i for i in range(30)}
    result = boot(baseline, candidate, resamples=20)
    assert result.p_value_two_sided == pytest.approx(2 / 21)
    assert result.p_value_two_sided > 1 - result.confidence_level
    assert result.significant is True


def test_stats_all_zero_deltas() -> None:
    same = {f"q{i}": i / 10 for i in range(10)}
    result = boot(same, dict(same), resamples=100)
    assert result.effect == 0.0
    assert (result.confidence_interval_low, result.confidence_interval_high) == (0.0, 0.0)
    assert result.p_value_two_sided == 1.0
    assert result.significant is False


def test_stats_interval_is_linear_interpolation_of_bootstrap_means() -> None:
    baseline, candidate = scores(5, 60)
    deltas = engine.canonical_arrangement(
        np.array([candidate[q] - baseline[q] for q in sorted(baseline)])
    )
    means, _ = engine.bootstrap_means(
        deltas, resamples=777, rng=np.random.default_rng(11), method="resample"
    )
    result = boot(baseline, candidate, resamples=777, seed=11, confidence_level=0.9)
    ordered = np.sort(means)
    position = 0.05 * (777 - 1)
    below = int(np.floor(position))
    fraction = position - below
    by_hand = ordered[below] + fraction * (ordered[below + 1] - ordered[below])
    assert result.confidence_interval_low == pytest.approx(by_hand, abs=1e-15)
    tail = min(np.sum(means <= 0), np.sum(means >= 0))
    assert result.p_value_two_sided == min(1.0, 2 * (tail + 1) / 778)


def test_stats_auto_path_choice() -> None:
    assert boot(*scores(6, 300, binary=True), resamples=50).method == "multinomial"
    assert boot(*scores(6, 300), resamples=50).method == "resample"
    # Continuous-looking metric with few distinct values per query is also counted.
    few = {f"q{i}": [0.0, 0.5, 1.0][i % 3] for i in range(300)}
    assert boot(few, dict.fromkeys(few, 1.0), resamples=50).method == "multinomial"


def test_stats_multinomial_path_matches_resampling_in_distribution() -> None:
    deltas = engine.canonical_arrangement(
        np.repeat([-1.0, 0.0, 1.0], [14, 268, 18])  # hit@10-like deltas, 300 queries
    )
    general, _ = engine.bootstrap_means(
        deltas, resamples=4000, rng=np.random.default_rng(1), method="resample"
    )
    counted, _ = engine.bootstrap_means(
        deltas, resamples=4000, rng=np.random.default_rng(2), method="multinomial"
    )
    assert ks_2samp(general, counted).pvalue > 0.01
    quantiles = [0.025, 0.25, 0.5, 0.75, 0.975]
    # SD of a resampled mean is about 0.01 here; quantiles of 4000 draws agree to a few 0.001.
    np.testing.assert_allclose(
        np.quantile(general, quantiles), np.quantile(counted, quantiles), atol=0.004
    )
    theory_sd = np.std(deltas) / np.sqrt(deltas.size)
    for means in (general, counted):
        assert means.mean() == pytest.approx(deltas.mean(), abs=4 * theory_sd / np.sqrt(4000))
        assert means.std() == pytest.approx(theory_sd, rel=0.06)


def test_stats_both_paths_give_close_intervals_for_continuous_scores() -> None:
    baseline, candidate = scores(7, 80)
    general = boot(baseline, candidate, resamples=4000, method="resample")
    counted = boot(baseline, candidate, resamples=4000, method="multinomial")
    assert general.method == "resample"
    assert counted.method == "multinomial"
    assert counted.confidence_interval_low == pytest.approx(
        general.confidence_interval_low, abs=0.006
    )
    assert counted.confidence_interval_high == pytest.approx(
        general.confidence_interval_high, abs=0.006
    )


@pytest.mark.parametrize("method", ["resample", "multinomial"])
def test_stats_chunking_fills_every_resample(
    monkeypatch: pytest.MonkeyPatch, method: engine.ResampleMethod
) -> None:
    # Tiny chunks and gather groups (the chunking lives in the resampling kernels).
    monkeypatch.setattr(resampling, "_CHUNK_DRAWS", 7)
    monkeypatch.setattr(resampling, "_GROUP_LANES", 3)
    monkeypatch.setattr(resampling, "_MIN_CHUNK_ROWS", 1)
    deltas = engine.canonical_arrangement(np.array([0.5, -0.25, 0.0, 1.0, 0.5]))
    means, used = engine.bootstrap_means(
        deltas, resamples=1003, rng=np.random.default_rng(0), method=method
    )
    assert used == method
    assert means.shape == (1003,)
    assert np.all((means >= deltas.min()) & (means <= deltas.max()))
    assert means.mean() == pytest.approx(deltas.mean(), abs=0.03)
    assert len(np.unique(means)) > 10


def test_stats_memory_stays_bounded_for_many_queries() -> None:
    rng = np.random.default_rng(0)
    n = 200_000
    deltas = engine.canonical_arrangement(rng.normal(size=n))
    tracemalloc.start()
    try:
        engine.bootstrap_means(deltas, resamples=40, rng=rng, method="resample")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Unchunked this needs 40 × 200,000 × 16 bytes = 128 MB; chunked a few rows of 200,000.
    assert peak < 40 * 2**20


def test_stats_bootstrap_interval_for_one_system() -> None:
    values = np.random.default_rng(8).random(250)
    estimate = bootstrap_interval(values.tolist(), resamples=3000, seed=4)
    assert estimate.value == pytest.approx(values.mean(), abs=1e-15)
    assert estimate.low < estimate.value < estimate.high
    se = values.std(ddof=1) / np.sqrt(values.size)
    assert estimate.high - estimate.low == pytest.approx(2 * 1.96 * se, rel=0.1)
    assert (estimate.count, estimate.resamples, estimate.seed) == (250, 3000, 4)
    by_id = {f"q{i}": v for i, v in enumerate(values.tolist())}
    assert bootstrap_interval(by_id, resamples=3000, seed=4) == estimate
    assert bootstrap_interval(values, resamples=3000, seed=4) == estimate
    hits = bootstrap_interval([True] * 70 + [False] * 30)
    assert hits.method == "multinomial"
    assert hits.value == pytest.approx(0.7)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_stats_too_few_queries_are_never_significant(n: int) -> None:
    baseline = {f"q{i}": 0.0 for i in range(n)}
    candidate = {f"q{i}": 1.0 for i in range(n)}
    result = boot(baseline, candidate, resamples=200)
    assert result.confidence_interval_low == 1.0  # the interval excludes zero...
    assert result.significant is False  # ...but no exact test of n items reaches 0.05
    six = boot(
        {**baseline, **{f"x{i}": 0.0 for i in range(6 - n)}},
        {**candidate, **{f"x{i}": 1.0 for i in range(6 - n)}},
        resamples=200,
    )
    assert six.significant is True


@pytest.mark.parametrize(("low", "high"), [(-1e308, 1e308), (1e308, -1e308), (-1.7e308, 1.7e308)])
def test_stats_overflowing_differences_are_refused(low: float, high: float) -> None:
    with pytest.raises(StatsError, match="not a finite number"):
        boot({"q1": low, "q2": 0.0}, {"q1": high, "q2": 0.0}, resamples=50)


def test_stats_differences_whose_sum_overflows_are_refused() -> None:
    baseline = {f"q{i}": 0.0 for i in range(4)}
    candidate = {f"q{i}": 1e308 for i in range(4)}
    with pytest.raises(StatsError, match="too large to sum"):
        boot(baseline, candidate, resamples=50)
