"""The fused gather-and-add pass, and the random stream it left unchanged.

`row_sums` replaced `np.take` + `np.add.reduceat` in the resampling kernel: its sums are
checked against plain left-to-right additions, on both of its routes (scipy's private C++
kernel and the public sparse matrix), and the resampled means against values the kernel
produced before the change (same seeds, same random words: equal to rounding).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from groundkit.stats.kernels import _resampling as resampling
from groundkit.stats.kernels import _rowsums as rowsums
from groundkit.stats.kernels._engine import canonical_arrangement


def by_hand(table: np.ndarray, indices: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    sums = []
    for start, stop in itertools.pairwise(bounds):
        total = 0.0
        for index in indices[start:stop]:
            total += float(table[index])  # left to right, from 0.0
        sums.append(total)
    return np.array(sums)


def case(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    table = rng.normal(size=300) ** 3
    lengths = rng.integers(0, 40, size=25)
    lengths[[0, 7, 24]] = 0  # empty rows first, inside and last
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
    indices = rng.integers(0, table.size, size=int(bounds[-1])).astype(np.int32)
    return table, indices, bounds


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_row_sums_are_left_to_right_additions(seed: int) -> None:
    table, indices, bounds = case(seed)
    sums = rowsums.row_sums(table, indices, bounds)
    assert sums.dtype == np.float64
    assert np.array_equal(sums, by_hand(table, indices, bounds))
    assert np.array_equal(rowsums.row_sums(-table, indices, bounds), -sums)
    assert sums[0] == sums[7] == sums[24] == 0.0


def test_the_public_route_gives_the_same_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    table, indices, bounds = case(3)
    private = rowsums.row_sums(table, indices, bounds)
    values = canonical_arrangement(np.random.default_rng(4).normal(size=700))
    means, _ = resampling.resampled_means(values, resamples=1_500, seed=2, workers=1)
    monkeypatch.setattr(rowsums, "_KERNEL", [rowsums._public_matvec])
    assert np.array_equal(rowsums.row_sums(table, indices, bounds), private)
    again, _ = resampling.resampled_means(values, resamples=1_500, seed=2, workers=1)
    assert np.array_equal(again, means)


def test_shared_weights_grow_and_stay_read_only() -> None:
    table, indices, bounds = case(5)
    rowsums.row_sums(table, indices, bounds)
    longer = np.zeros(4 * rowsums._ONES[0].size + 3, dtype=np.int32)
    halves = np.array([0.5, 3.0])  # sums of halves are exact: any order gives the same
    sums = rowsums.row_sums(halves, longer, np.array([0, longer.size], dtype=np.int32))
    assert sums[0] == 0.5 * longer.size
    assert rowsums._ONES[0].size >= longer.size
    assert not rowsums._ONES[0].flags.writeable


# Produced by the kernel before the fused pass (take + reduceat, commit f55a32a): the first
# and last means, the 2.5% order statistic and the sum. The random words are the same, only
# the additions are grouped differently, so they agree to rounding (a changed stream would
# differ by about a standard error, 1e-2 here).
BEFORE = [
    (1000, 2000, 7, -0.11962010132374985, -0.18606606303208786, -0.2291487067728981,
     8.648654756277077),
    (300, 1500, 3, -0.1736059496744693, -0.052887192008425836, -0.2748943030686373,
     64.08017878886739),
    (20000, 40, 5, -0.014707099298308685, -0.03871570182484679, -0.08294488430868668,
     -0.8699616693433397),
    (57, 1024, 1, -0.03210051248833265, 0.42296593682381967, -0.5713941422177559,
     11.53857940418486),
]  # fmt: skip


@pytest.mark.parametrize(("size", "resamples", "seed", "first", "last", "low", "total"), BEFORE)
def test_the_random_stream_is_the_one_drawn_before(
    size: int, resamples: int, seed: int, first: float, last: float, low: float, total: float
) -> None:
    # 1000 and 300: pair tables with a remainder block (exact bounded integers); 57: one
    # block of 16-bit bounded integers; 20,000: single picks in blocks of 1,024 values.
    values = canonical_arrangement(np.random.default_rng(size).normal(size=size) ** 3)
    means, used = resampling.resampled_means(values, resamples=resamples, seed=seed, workers=2)
    assert used == "resample"
    got = [means[0], means[-1], np.sort(means)[resamples // 40], means.sum()]
    np.testing.assert_allclose(got, [first, last, low, total], rtol=1e-12, atol=1e-14)
