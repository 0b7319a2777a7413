"""The resampling kernels draw exactly the promised distributions, deterministically and fast.

Every distribution test runs at a fixed seed against an exact reference (enumerated or a
closed-form multinomial/binomial law) with a chi-square test, so it cannot flake and a biased
kernel fails it by a wide margin at these sample sizes.
"""

from __future__ import annotations

import itertools
import math
import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, chi2_contingency, chisquare, multinomial

from groundkit.stats import StatsError
from groundkit.stats.kernels import _cores as cores
from groundkit.stats.kernels import _resampling as resampling
from groundkit.stats.kernels import _rowsums as rowsums
from groundkit.stats.kernels import _scratch as scratch_buffers
from groundkit.stats.kernels._engine import canonical_arrangement

KINDS = ["pairs", "singles", "counts"]
# A p-value below this at the fixed seed means a wrong distribution, not bad luck.
ALPHA = 1e-4


def means_by(
    kind: str, values: np.ndarray, resamples: int, *, seed: int = 0, workers: int = 1
) -> np.ndarray:
    """Run one kernel path directly (pairs and singles are both "resample" paths)."""
    kernel: resampling._Kernel
    if kind == "counts":
        distinct, counts = resampling.distinct_runs(values)
        kernel = resampling._CountsKernel(distinct, counts)
    else:
        kernel = resampling._BlockKernel(values, pairs=kind == "pairs")
    out = np.empty(resamples)
    resampling._run_chunks(kernel, out, np.random.SeedSequence(seed), workers)
    return out


def pooled_chisquare(observed: np.ndarray, expected_share: np.ndarray) -> float:
    """Chi-square p-value, cells expected below 5 pooled into one (their share included)."""
    expected = expected_share * observed.sum()
    small = expected < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum() + observed.sum() - expected.sum())
    keep = exp > 0
    return float(chisquare(obs[keep], exp[keep]).pvalue)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", [3, 4])
def test_resampling_matches_the_enumerated_bootstrap_of_few_values(kind: str, size: int) -> None:
    # 2**40 + 5**i: every count vector has its own exact float64 sum (a float32 or lossy
    # accumulation could not be decoded), and the n**n draw sequences give its probability.
    base = 2.0**40
    values = base + 5.0 ** np.arange(size)
    exact: dict[tuple[int, ...], float] = {}
    for sequence in itertools.product(range(size), repeat=size):
        counts = tuple(int(c) for c in np.bincount(sequence, minlength=size))
        exact[counts] = exact.get(counts, 0.0) + float(size) ** -size
    means = means_by(kind, values, 200_000)
    rest = np.rint(means * size - size * base).astype(np.int64)
    digits = np.stack([(rest // 5**i) % 5 for i in range(size)], axis=1)
    assert np.array_equal((digits * 5 ** np.arange(size)).sum(axis=1), rest)  # decodes exactly
    assert np.all(digits.sum(axis=1) == size)
    cells = list(exact)
    codes = np.array([sum(c * 5**i for i, c in enumerate(cell)) for cell in cells])
    order = np.argsort(codes)
    observed = np.bincount(order[np.searchsorted(codes[order], rest)], minlength=len(cells))
    assert pooled_chisquare(observed, np.array([exact[c] for c in cells])) > ALPHA


@pytest.mark.parametrize(
    ("kind", "size", "resamples"),
    [("pairs", 600, 100_000), ("singles", 600, 100_000), ("singles", 9_000, 10_000)],
)
def test_resampling_picks_are_multinomial_across_blocks_and_remainder(
    kind: str, size: int, resamples: int
) -> None:
    # 600 values: two full blocks of 256 and a remainder of 88 in both index modes; 9,000:
    # 17 blocks of 512 (masked 16-bit lanes) and a remainder of 296. Two indicator sets
    # spread over every block; the sum encodes both counts, whose joint law is
    # multinomial(n; |A|/n, |B|/n, rest).
    position = np.arange(size)
    step = size // 90
    in_a, in_b = position % step == 0, position % step == 3
    values = in_a * 1.0 + in_b * 1024.0
    sums = np.rint(means_by(kind, values, resamples, seed=1) * size).astype(np.int64)
    count_a, count_b = sums % 1024, sums // 1024
    shares = [in_a.mean(), in_b.mean(), 1 - in_a.mean() - in_b.mean()]
    grid_a, grid_b = np.meshgrid(np.arange(160), np.arange(160), indexing="ij")
    cells = np.stack([grid_a.ravel(), grid_b.ravel(), size - grid_a.ravel() - grid_b.ravel()], 1)
    expected = multinomial.pmf(cells, size, shares)
    observed = np.bincount(count_a * 160 + count_b, minlength=160 * 160)
    assert observed.size == 160 * 160  # no count beyond the grid
    assert pooled_chisquare(observed, expected) > ALPHA


@pytest.mark.parametrize(
    ("kind", "size"),
    [
        ("pairs", 1),
        ("pairs", 3),
        ("pairs", 256),
        ("pairs", 257),
        ("pairs", 320),
        ("pairs", 1000),
        ("singles", 2),
        ("singles", 300),
        ("singles", 5000),
        ("singles", 20_000),
        ("counts", 500),
    ],
)
def test_resampled_means_have_the_exact_mean_and_variance(kind: str, size: int) -> None:
    rng = np.random.default_rng(size)
    values = np.sort(rng.beta(2.0, 3.0, size) if kind != "counts" else rng.integers(0, 4, size))
    values = values.astype(np.float64)
    resamples = 20_000 if size < 10_000 else 4_000
    means = means_by(kind, values, resamples, seed=2)
    variance = values.var() / size  # s²(n − 1)/n² with s² the n − 1 sample variance
    if variance == 0:
        assert np.all(means == values[0])
        return
    assert abs(means.mean() - values.mean()) < 4.5 * math.sqrt(variance / resamples)
    assert abs(means.var() / variance - 1) < 4.5 * math.sqrt(2 / resamples)


def test_resample_and_multinomial_paths_agree_on_hit_deltas() -> None:
    deltas = canonical_arrangement(np.repeat([-1.0, 0.0, 1.0], [40, 900, 60]))
    quantiles = [0.01, 0.1, 0.5, 0.9, 0.99]
    general, used_general = resampling.resampled_means(
        deltas, resamples=40_000, seed=3, method="resample"
    )
    counted, used_counted = resampling.resampled_means(
        deltas, resamples=40_000, seed=4, method="multinomial"
    )
    assert (used_general, used_counted) == ("resample", "multinomial")
    # Resampled sums are integers: compare the two histograms directly.
    both = np.rint(np.concatenate([general, counted]) * deltas.size).astype(np.int64) + 1000
    table = np.stack([np.bincount(half, minlength=2001) for half in np.split(both, 2)])
    assert chi2_contingency(table[:, table.sum(axis=0) >= 10]).pvalue > ALPHA
    se = deltas.std() / math.sqrt(deltas.size)
    np.testing.assert_allclose(
        np.quantile(general, quantiles), np.quantile(counted, quantiles), atol=0.15 * se
    )


@pytest.mark.parametrize(
    ("kind", "size"),
    [("pairs", 700), ("singles", 700), ("singles", 20_000), ("counts", 700)],
)
def test_resampling_is_the_same_for_any_number_of_threads(kind: str, size: int) -> None:
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 5, size) if kind == "counts" else rng.normal(size=size)
    values = canonical_arrangement(raw.astype(np.float64))
    resamples = 3_000 if size < 10_000 else 400
    one = means_by(kind, values, resamples, seed=9, workers=1)
    assert np.array_equal(means_by(kind, values, resamples, seed=9, workers=2), one)
    assert np.array_equal(means_by(kind, values, resamples, seed=9, workers=4), one)
    assert not np.array_equal(means_by(kind, values, resamples, seed=10, workers=2), one)


@pytest.mark.parametrize("kind", KINDS)
def test_negating_the_arrangement_exactly_negates_every_mean(kind: str) -> None:
    rng = np.random.default_rng(6)
    raw = rng.integers(-3, 4, 900) * 0.1 if kind == "counts" else rng.normal(size=900) ** 3
    values = canonical_arrangement(raw)
    mirrored = canonical_arrangement(-raw)
    assert np.array_equal(mirrored, -values)
    forward = means_by(kind, values, 2_000, seed=11, workers=2)
    backward = means_by(kind, mirrored, 2_000, seed=11, workers=2)
    assert np.array_equal(backward, -forward)


unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
grid = st.sampled_from([-1.0, -0.5, 0.0, 0.25, 1.0])
samples = st.lists(st.one_of(unit, grid), min_size=1, max_size=300)


@settings(max_examples=40, deadline=None)
@given(
    raw=samples,
    method=st.sampled_from(["auto", "resample", "multinomial"]),
    resamples=st.integers(1, 600),
    seed=st.integers(0, 2**32),
)
def test_resampled_means_properties(
    raw: list[float], method: resampling.ResampleMethod, resamples: int, seed: int
) -> None:
    values = canonical_arrangement(np.array(raw))
    means, used = resampling.resampled_means(
        values, resamples=resamples, seed=seed, method=method, workers=2
    )
    assert means.shape == (resamples,)
    assert means.dtype == np.float64
    assert used == (method if method != "auto" else used)
    tiny = 1e-12
    assert np.all(means >= values.min() - tiny)
    assert np.all(means <= values.max() + tiny)
    negated, _ = resampling.resampled_means(
        canonical_arrangement(-np.array(raw)), resamples=resamples, seed=seed, method=method
    )
    if np.array_equal(canonical_arrangement(-np.array(raw)), -values):
        assert np.array_equal(negated, -means)
    again, _ = resampling.resampled_means(
        values, resamples=resamples, seed=seed, method=method, workers=1
    )
    assert np.array_equal(again, means)


def test_chunks_batches_and_gather_groups_change_no_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = canonical_arrangement(np.random.default_rng(7).normal(size=300))
    usual = {kind: means_by(kind, values, 1_003, seed=3) for kind in KINDS}
    # Batches of one chunk (each block's table reloaded per chunk): the same numbers.
    monkeypatch.setattr(resampling, "_BATCH_CELLS", 1)
    for kind in KINDS:
        assert np.array_equal(means_by(kind, values, 1_003, seed=3, workers=3), usual[kind])
    # Tiny chunks and groups: many chunks, groups of one row, rows longer than a group.
    monkeypatch.setattr(resampling, "_CHUNK_DRAWS", 64)
    monkeypatch.setattr(resampling, "_GROUP_LANES", 16)
    monkeypatch.setattr(resampling, "_MIN_CHUNK_ROWS", 1)
    for kind in KINDS:
        means = means_by(kind, values, 1_003, seed=3, workers=3)
        assert means.shape == (1_003,)
        assert np.all((means >= values.min()) & (means <= values.max()))
        assert np.unique(means).size > 900
        assert abs(means.mean() - values.mean()) < 5 * values.std() / math.sqrt(300 * 1_003)


@pytest.mark.parametrize("workers", [1, resampling._MAX_WORKERS])
def test_memory_stays_bounded_whatever_the_sizes(
    workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = np.sort(np.random.default_rng(0).normal(size=300_000))
    # The kernel imports scipy's compiled sparse routines on its first call: done before the
    # tracing, so that the peaks are the resampling's own memory (alone, the import added
    # 13 MiB to the first peak). Its caches (idle scratch buffers, the kernel's weights) are
    # then emptied, so the traced peaks are the cold worst case whatever ran before this
    # test in its process, and the most threads the kernels use allocate at once.
    resampling.resampled_means(values[:10], resamples=8, seed=0, method="resample")
    monkeypatch.setattr(scratch_buffers, "_IDLE_SCRATCH", [])
    monkeypatch.setattr(rowsums, "_ONES", [np.ones(0)])
    tracemalloc.start()
    try:
        resampling.resampled_means(values, resamples=24, seed=0, method="resample", workers=workers)
        _, peak_large_n = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        resampling.resampled_means(
            values[:50], resamples=400_000, seed=0, method="resample", workers=workers
        )
        _, peak_many = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Unchunked: 24 × 300,000 × 16 bytes = 115 MB; 400,000 × 50 × 16 bytes = 320 MB. Chunked,
    # each thread holds one gather group's buffers (about 1.6 MiB here) and the threads
    # share the kernel's weights (1 MiB): measured 3.2 and 6.9 MiB at four threads.
    assert peak_large_n < 10 * 2**20
    assert peak_many < 400_000 * 8 + 10 * 2**20  # the output itself plus small buffers


def test_resampled_means_refuses_bad_settings() -> None:
    values = np.array([0.0, 1.0])
    with pytest.raises(StatsError, match="method must be"):
        resampling.resampled_means(values, resamples=5, seed=0, method="fast")  # type: ignore[arg-type]
    with pytest.raises(StatsError, match="workers must be"):
        resampling.resampled_means(values, resamples=5_000_000, seed=0, workers=0)
    with pytest.raises(StatsError, match="seed must be"):
        resampling.resampled_means(values, resamples=5, seed=-1)
    with pytest.raises(StatsError, match="at least one value"):
        resampling.resampled_means(np.array([]), resamples=5, seed=0)
    with pytest.raises(StatsError, match="at least one value"):
        resampling.random_sign_counts(values, 1.0, resamples=0, seed=0, tolerance=0.0)


def test_a_seed_sequence_is_spawned_from_like_numpy() -> None:
    values = np.linspace(0, 1, 400)
    root = np.random.SeedSequence(12)
    first, _ = resampling.resampled_means(values, resamples=300, seed=root)
    second, _ = resampling.resampled_means(values, resamples=300, seed=root)
    fresh, _ = resampling.resampled_means(values, resamples=300, seed=np.random.SeedSequence(12))
    assert np.array_equal(first, fresh)
    assert not np.array_equal(first, second)  # independent streams, as numpy's spawn gives


def sign_histogram(
    values: np.ndarray, levels: np.ndarray, *, resamples: int, seed: int
) -> np.ndarray:
    """Patterns per |sum| band between consecutive levels, from counts at each level."""
    reach = np.array(
        [
            resampling.random_sign_counts(
                values, float(level), resamples=resamples, seed=seed, tolerance=0.0
            )
            for level in levels
        ]
    )
    return np.append(-np.diff(reach), reach[-1])


def test_random_sign_counts_match_the_enumerated_law_of_signed_powers_of_two() -> None:
    # Values 1, 2, 4, ..., 1024 (two byte groups, one partial): every sign pattern has its own
    # sum, so |sum| bands have exactly enumerable shares.
    values = 2.0 ** np.arange(11)
    signs = 1 - 2 * ((np.arange(2**11)[:, None] >> np.arange(11)) & 1)
    exact = np.abs(signs @ values)
    levels = np.array([0.0, 101, 301, 601, 901, 1201, 1501, 1801, 2001])
    bands = np.searchsorted(levels, exact, side="right") - 1
    shares = np.bincount(bands, minlength=levels.size) / exact.size
    observed = sign_histogram(values, levels, resamples=200_000, seed=0)
    assert observed.sum() == 200_000
    assert pooled_chisquare(observed, shares) > ALPHA


@pytest.mark.parametrize("build_per_pass", [False, True])
def test_random_sign_counts_are_binomial_for_many_equal_values(
    monkeypatch: pytest.MonkeyPatch, build_per_pass: bool
) -> None:
    # 601 ones (10 passes of 64 tables, a partial last group): sum = 601 − 2·Binomial(601, ½).
    if build_per_pass:
        monkeypatch.setattr(resampling, "_SIGN_TABLE_BYTES", 0)
    size = 601
    values = np.ones(size)
    levels = np.array([0.0, 5, 11, 21, 31, 41, 51, 61, 81])
    flips = np.arange(size + 1)
    sums = np.abs(size - 2 * flips)
    bands = np.searchsorted(levels, sums, side="right") - 1
    shares = np.bincount(bands, weights=binom.pmf(flips, size, 0.5), minlength=levels.size)
    observed = sign_histogram(values, levels, resamples=50_000, seed=1)
    assert pooled_chisquare(observed, shares) > ALPHA


def test_random_sign_counts_are_deterministic_and_thread_independent() -> None:
    values = np.random.default_rng(8).normal(size=1_500)
    observed = abs(float(values.sum()))
    count: Callable[..., int] = resampling.random_sign_counts
    one = count(values, observed, resamples=7_001, seed=4, tolerance=1e-9, workers=1)
    assert count(values, observed, resamples=7_001, seed=4, tolerance=1e-9, workers=2) == one
    assert count(values, observed, resamples=7_001, seed=4, tolerance=1e-9, workers=4) == one
    assert 0 <= one <= 7_001
    # Threshold at or below zero: every pattern counts; far above every |sum|: none.
    assert count(values, 0.0, resamples=999, seed=4, tolerance=0.0) == 999
    assert count(values, 1e9, resamples=999, seed=4, tolerance=0.0) == 0


def test_default_workers_leave_busy_cores_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cores, "cgroup_cpu_limit", lambda: None)  # whatever this machine's
    monkeypatch.setattr(resampling.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(resampling.os, "getloadavg", lambda: (0.1, 0.0, 0.0))
    assert resampling._default_workers() == 2
    monkeypatch.setattr(resampling.os, "getloadavg", lambda: (2.9, 0.0, 0.0))
    assert resampling._default_workers() == 1
    monkeypatch.setattr(resampling.os, "sched_getaffinity", lambda _pid: set(range(16)))
    monkeypatch.setattr(resampling.os, "getloadavg", lambda: (1.0, 0.0, 0.0))
    assert resampling._default_workers() == 4  # at most four threads


def test_sign_tables_hold_every_signed_sum_of_their_byte() -> None:
    values = np.random.default_rng(9).normal(size=13)  # one full group, one partial
    kernel = resampling._SignKernel(values, 0.0)
    padded = np.append(values, np.zeros(3)).reshape(2, 8)
    bit = (np.arange(256)[:, None] >> np.arange(8)) & 1
    expected = padded @ (1 - 2 * bit).T
    assert kernel._tables is not None
    np.testing.assert_allclose(kernel._tables, expected, rtol=0, atol=1e-12)


def test_default_workers_keep_to_the_container_s_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    # 16 processors visible, a quota of 1.5 CPUs, an idle machine: 2 threads, not 4.
    monkeypatch.setattr(
        resampling.os, "sched_getaffinity", lambda _pid: set(range(16)), raising=False
    )
    monkeypatch.setattr(resampling.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(cores, "cgroup_cpu_limit", lambda: 1.5)
    assert resampling._default_workers() == 2
