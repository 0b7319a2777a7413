"""Fast exact resampling kernels: bootstrap means and Monte Carlo sign-flip counts.

Both kernels are pure numpy and draw exactly the distribution they promise (no Poisson
weights, no binning). The speed comes from fewer numpy element-operations per pick:

* Random bits come from `BitGenerator.random_raw` viewed as 8- or 16-bit lanes: one 64-bit
  word yields four or eight uniform indices with no shift; a lane indexes a table directly.
* `resampled_means` splits the values into blocks, draws for every resample how many of its
  n picks fall in each block (multinomial: exact for with-replacement picks over any
  partition), then picks uniformly inside each block. Up to 8,192 values a block holds 256
  values and one 16-bit lane picks two of them through a 65,536-entry table of pair sums
  (half the gathers and half the lanes); beyond, a block holds up to 8,192 values (64 KiB,
  so gathers stay in cache) and one lane picks one value. Power-of-two blocks take lanes
  as they come; the last, smaller block takes exact bounded integers from
  `Generator.integers`. Lanes are drawn in gather groups of about 2**17 into one 32-bit
  index buffer, and each group's resamples are summed in one fused gather-and-add pass
  (`_rowsums.row_sums`: scipy's CSR matrix-vector kernel, left-to-right additions), so a
  thread's buffers are bounded by the group whatever n and B.
* `random_sign_counts` gives each group of 8 values a 256-entry table of its 256 signed
  sums, so one random byte signs 8 values with one gather.

Work is cut into chunks of resamples whose size depends only on the input; chunk i draws
from its own generator seeded by the i-th child of the seed's `SeedSequence`, always in the
same order. Results therefore depend on the seed alone, never on the number of threads,
the batching or the scheduling. numpy and scipy release the GIL in generation, gathers
and sums, so batches of chunks run in a thread pool; a batch is processed block by block,
so a block's table stays in cache across its chunks. Every random decision depends on
positions only, and every sum is taken in a fixed order, so the same seed applied to the
negated arrangement gives exactly negated sums.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
from numpy.typing import NDArray

from groundkit.stats._errors import StatsError
from groundkit.stats.kernels._cores import available_cores
from groundkit.stats.kernels._rowsums import row_sums
from groundkit.stats.kernels._scratch import borrowed_scratch, index_scratch, scratch

__all__ = [
    "ResampleMethod",
    "UsedMethod",
    "distinct_runs",
    "random_sign_counts",
    "resampled_means",
]

ResampleMethod = Literal["auto", "resample", "multinomial"]
UsedMethod = Literal["resample", "multinomial"]
Seed = int | np.random.SeedSequence
Floats = NDArray[np.float64]
Ints = NDArray[np.int64]
Indices = NDArray[np.int32]
Lane = type[np.uint8] | type[np.uint16]
Job = tuple[Floats, np.random.SeedSequence]

# Picks per seeded chunk (~1 ms of work): enough chunks to balance threads on B = 10,000.
_CHUNK_DRAWS = 1 << 20
# At least this many resamples per chunk, so a chunk's fixed cost stays small at n = 10**6.
_MIN_CHUNK_ROWS = 4
# Lanes drawn per call for the random words (chosen when each group was also gathered and
# summed: 2**16 30.7 / 234 ms, 2**17 26.5 / 208 ms, 2**18 25.7 / 199 ms at n = 1,000 /
# 10**6). The groups decide how words are cut into lanes, so they stay part of the stream.
_GROUP_LANES = 1 << 17
# Batches per thread: enough to even out a core slowed by other work, few enough that a
# block's table is reloaded into cache rarely.
_BATCHES_PER_WORKER = 4
# State held per batch (multinomial picks, 8 bytes per row and block): at most 16 MiB.
_BATCH_CELLS = 1 << 21
# Pair mode: 256 values per block (a 16-bit lane is two 8-bit picks). Tables cost 2 KiB per
# value, so pairs are used up to 8,192 values (16 MiB), and only when there are enough
# resamples to pay for building them (256 additions per value).
_PAIR_BLOCK = 256
_PAIR_MAX_VALUES = 1 << 13
_PAIR_MIN_RESAMPLES = 1024
# Single mode: blocks of at most 2**13 values (64 KiB; measured 2.5 ns a pick against 3.2
# with 2**16 at n = 10**6), at least 2**4 blocks, so the last, smaller block (drawn slower)
# holds under 1/16 of the picks.
_SINGLE_BLOCK_BITS = 13
_SINGLE_BLOCKS_LOG = 4
# numpy's 16-bit bounded integers reject often above 4,096 (3-5 ns); 32-bit ones cost 2.3.
_CHEAP_UINT16_BOUND = 1 << 12
# The multinomial path draws one binomial (60-130 ns) per distinct value and resample; the
# index path costs 1-2.5 ns per value and resample: counts win from 48 values per distinct.
_VALUES_PER_DISTINCT = 48
# Sign counts: 8 values per table (one random byte), 64 tables (128 KiB) gathered per pass.
_SIGN_GROUP = 8
_SIGN_TABLES_PER_PASS = 64
_SIGN_LANES = 1 << 16
# Tables for all groups are built once up to 64 MiB (262,144 values); beyond, per pass.
_SIGN_TABLE_BYTES = 1 << 26
_MAX_WORKERS = 4


def _changes(arranged: Floats) -> NDArray[np.bool_]:
    """Where a monotone array moves to a new value: position i + 1 differs from i."""
    return cast(NDArray[np.bool_], arranged[1:] != arranged[:-1])


def distinct_runs(arranged: Floats) -> tuple[Floats, Ints]:
    """Distinct values of a monotone array in order of appearance, with their counts."""
    starts = np.concatenate(([0], np.flatnonzero(_changes(arranged)) + 1))
    counts = np.diff(np.concatenate((starts, [arranged.size]))).astype(np.int64)
    return arranged[starts], counts


def resampled_means(
    arranged: Floats,
    *,
    resamples: int,
    seed: Seed,
    method: ResampleMethod = "auto",
    workers: int | None = None,
) -> tuple[Floats, UsedMethod]:
    """Means of `resamples` with-replacement resamples of `arranged` (same size), and the path.

    Each resample is n independent uniform picks among the n values: exactly the
    nonparametric bootstrap. "multinomial" draws the counts of each distinct value instead
    (the same distribution, cheaper for few distinct values); "auto" picks it when there
    are at least 48 values per distinct value.

    Args:
        arranged: The values in canonical order (see `_engine.canonical_arrangement`).
        resamples: Number of resamples B (positive).
        seed: An int or a `SeedSequence` (spawned from, as numpy's own spawning does).
        method: "auto", "resample" or "multinomial".
        workers: Threads to use (default: the idle cores, at most 4); the result does not
            depend on it.

    Returns:
        The B means (float64) and the path used.

    Raises:
        StatsError: On an unknown method, no values, a non-positive `resamples`, a bad seed
            or a non-positive `workers`.
    """
    if method not in ("auto", "resample", "multinomial"):
        raise StatsError(f"method must be 'auto', 'resample' or 'multinomial' (got {method!r})")
    if arranged.size == 0 or resamples <= 0:
        raise StatsError("resampled_means needs at least one value and one resample")
    used: UsedMethod
    if method == "auto":
        # Counted, not kept: the index path does not need the distinct values themselves.
        distinct = int(np.count_nonzero(_changes(arranged))) + 1
        few = distinct * _VALUES_PER_DISTINCT <= arranged.size
        used = "multinomial" if few else "resample"
    else:
        used = method
    kernel: _Kernel
    if used == "multinomial":
        kernel = _CountsKernel(*distinct_runs(arranged))
    else:
        pairs = arranged.size <= _PAIR_MAX_VALUES and resamples >= _PAIR_MIN_RESAMPLES
        kernel = _BlockKernel(arranged, pairs=pairs)
    means = np.empty(resamples, dtype=np.float64)
    _run_chunks(kernel, means, _seed_sequence(seed), workers)
    return means, used


def random_sign_counts(
    nonzero: Floats,
    observed: float,
    *,
    resamples: int,
    seed: Seed,
    tolerance: float,
    workers: int | None = None,
) -> int:
    """How many of `resamples` random sign patterns reach |signed sum| ≥ observed − tolerance.

    Each value independently gets sign + or − with probability 1/2.

    Args:
        nonzero: The values to sign (the non-zero deltas; at least one).
        observed: The observed |sum| to reach.
        resamples: Number of random patterns (positive).
        seed: An int or a `SeedSequence`.
        tolerance: Slack for sums of the same values taken in another order.
        workers: Threads to use; the count does not depend on it.

    Returns:
        The number of patterns at least as extreme as the observed one.

    Raises:
        StatsError: On no values, a non-positive `resamples`, a bad seed or `workers`.
    """
    if nonzero.size == 0 or resamples <= 0:
        raise StatsError("random_sign_counts needs at least one value and one resample")
    extreme = np.empty(resamples, dtype=np.float64)
    _run_chunks(_SignKernel(nonzero, observed - tolerance), extreme, _seed_sequence(seed), workers)
    return int(np.count_nonzero(extreme))


class _Kernel:
    """Fills the output slices of a batch of chunks, each from its own chunk seed."""

    rows_per_chunk: int
    batch_rows: int

    def fill(self, jobs: Sequence[Job]) -> None:
        raise NotImplementedError


def _seed_sequence(seed: Seed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise StatsError(f"seed must be a non-negative integer or a SeedSequence (got {seed!r})")
    return np.random.SeedSequence(seed)


def _default_workers() -> int:
    """Threads for the idle cores: the available cores, less those other work keeps busy.

    The available cores are :func:`~groundkit.stats.kernels.available_cores` (the affinity,
    capped by the container's CPU quota).

    Measured here: with both cores busy with other programs, two threads were 40% slower
    than one (n = 1,000), so the one-minute load average is taken into account, much like
    OpenMP's dynamic thread adjustment. Results never depend on it.
    """
    cores = available_cores()
    try:
        busy = os.getloadavg()[0]
    except OSError:  # pragma: no cover - no load average on this platform
        busy = 0.0
    return max(1, min(_MAX_WORKERS, cores, round(cores - busy) + 1))


def _run_chunks(
    kernel: _Kernel, out: Floats, root: np.random.SeedSequence, workers: int | None
) -> None:
    """Fill `out` chunk by chunk; chunk i always gets child i of `root`, whoever runs it."""
    wanted = _default_workers() if workers is None else workers
    if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 1:
        raise StatsError(f"workers must be a positive integer (got {workers!r})")
    rows = kernel.rows_per_chunk
    starts = range(0, out.size, rows)
    children = root.spawn(len(starts))
    jobs = [
        (out[start : start + rows], child) for start, child in zip(starts, children, strict=True)
    ]
    count = min(wanted, len(jobs))
    spread = len(jobs) // (count * _BATCHES_PER_WORKER) if count > 1 else len(jobs)
    per_batch = max(1, min(spread, kernel.batch_rows // rows))
    batches = [jobs[i : i + per_batch] for i in range(0, len(jobs), per_batch)]

    def run(batch: Sequence[Job]) -> None:
        with borrowed_scratch():
            kernel.fill(batch)

    if count == 1:
        for batch in batches:
            run(batch)
        return
    with ThreadPoolExecutor(max_workers=count) as pool:
        list(pool.map(run, batches))  # list() re-raises the first error


def _generators(seed: np.random.SeedSequence) -> tuple[np.random.SFC64, np.random.Generator]:
    # SFC64: the fastest of numpy's bit generators here (1.7 ns per 64-bit word against 2.2
    # for PCG64), with good statistical quality; the Generator shares its state.
    bits = np.random.SFC64(seed)
    return bits, np.random.Generator(bits)


def _raw_lanes(bits: np.random.SFC64, count: int, lane: Lane) -> NDArray[np.unsignedinteger]:
    """`count` uniform lanes (uint8 or uint16) cut from raw 64-bit words."""
    per_word = 8 // np.dtype(lane).itemsize
    words = bits.random_raw(-(-count // per_word))
    return cast(NDArray[np.unsignedinteger], words.view(lane)[:count])


class _CountsKernel(_Kernel):
    """Multinomial counts of the distinct values; the mean is the count-weighted mean."""

    def __init__(self, values: Floats, counts: Ints) -> None:
        self._values = values
        self._size = int(counts.sum())
        self._shares = counts / self._size
        self.rows_per_chunk = max(_MIN_CHUNK_ROWS, _CHUNK_DRAWS // (16 * values.size))
        self.batch_rows = self.rows_per_chunk

    def fill(self, jobs: Sequence[Job]) -> None:
        for out, seed in jobs:
            _, rng = _generators(seed)
            drawn = rng.multinomial(self._size, self._shares, size=out.size)
            # Products then a row sum: a fixed order (BLAS kernels may depend on alignment),
            # so negated values give exactly negated sums.
            np.divide((drawn * self._values).sum(axis=1), self._size, out=out)


@dataclass(frozen=True)
class _Block:
    """A run of values picked from through a table indexed by uniform random indices.

    Attributes:
        start: First value of the block in the arrangement.
        size: Number of values.
        width: Picks per index: 2 when the table holds pair sums, else 1.
        cells: Indices below this are uniform cells: pairs `i * size + j` (sum v[i] + v[j])
            or single values. A pair table then holds the single values too, at
            `cells + k`, for the one single pick of an odd number of picks.
        table: The cell values (and, for pairs, the single values after them).
        lane: For a power-of-two number of cells, the lane type whose low bits index them;
            None otherwise: indices then come from `Generator.integers` (exact, slower).
    """

    start: int
    size: int
    width: int
    cells: int
    table: Floats
    lane: Lane | None


def _block(values: Floats, start: int, *, pairs: bool) -> _Block:
    cells = values.size * values.size if pairs else values.size
    table = values
    if pairs:  # built in place: one 512 KiB table, not an outer sum copied into another
        table = np.empty(cells + values.size, dtype=np.float64)
        np.add(
            values[:, None], values[None, :], out=table[:cells].reshape(values.size, values.size)
        )
        table[cells:] = values
    lane: Lane | None = None
    if cells & (cells - 1) == 0:
        lane = np.uint8 if cells <= 1 << 8 else np.uint16
    return _Block(start, values.size, 2 if pairs else 1, cells, table, lane)


def _single_block(size: int) -> int:
    """Power-of-two block size for single mode (at least 256)."""
    return 1 << min(_SINGLE_BLOCK_BITS, max(8, size.bit_length() - 1 - _SINGLE_BLOCKS_LOG))


class _BlockKernel(_Kernel):
    """Index resampling: multinomial picks per block, uniform picks inside each block."""

    def __init__(self, arranged: Floats, *, pairs: bool) -> None:
        size = arranged.size
        block = _PAIR_BLOCK if pairs else _single_block(size)
        self._blocks = [
            _block(arranged[i : i + block], i, pairs=pairs) for i in range(0, size, block)
        ]
        self._arranged = arranged
        self._size = size
        self._shares = np.array([b.size for b in self._blocks]) / size
        # Enough rows that one block's lanes fill a gather group, and a chunk ~_CHUNK_DRAWS.
        lanes_per_row = max(1, min(size, block) // (2 if pairs else 1))
        self.rows_per_chunk = max(
            _MIN_CHUNK_ROWS, -(-_CHUNK_DRAWS // size), -(-_GROUP_LANES // lanes_per_row)
        )
        # Batches keep each block's table in cache across chunks; one block stays there
        # anyway, so its batches are single chunks (no state held for the batch's rows).
        blocks = len(self._blocks)
        self.batch_rows = max(self.rows_per_chunk, _BATCH_CELLS // blocks if blocks > 1 else 0)

    def fill(self, jobs: Sequence[Job]) -> None:
        states = []
        for out, seed in jobs:
            bits, rng = _generators(seed)
            if len(self._blocks) == 1:
                picks = np.full((out.size, 1), self._size, dtype=np.int64)
            else:
                picks = rng.multinomial(self._size, self._shares, size=out.size)
            states.append((bits, rng, picks, np.zeros(out.size, dtype=np.float64)))
        # Block by block across the batch: each table is loaded into cache once per batch.
        for index, block in enumerate(self._blocks):
            for bits, rng, picks, totals in states:
                self._add_block_sums(block, picks[:, index], bits, rng, totals)
        for (out, _), (_, _, _, totals) in zip(jobs, states, strict=True):
            np.divide(totals, self._size, out=out)

    def _add_block_sums(
        self,
        block: _Block,
        picks: Ints,
        bits: np.random.SFC64,
        rng: np.random.Generator,
        totals: Floats,
    ) -> None:
        """Add to `totals` each row's sum of `picks` uniform picks from `block`.

        Pairs take one lane per two picks. The lanes of consecutive rows are drawn in groups
        of about _GROUP_LANES (the groups fix how random words are cut into lanes, so results
        depend on them), and each group's rows are summed in one fused gather-and-add pass
        (`row_sums`). Summing by group, not by chunk, bounds the index buffer and the
        kernel's weights by the group, whatever the chunk's size (a chunk of one small block
        holds 2**19 lanes); a row's sum is the same either way.
        """
        lanes = (picks + 1) >> 1 if block.width == 2 else picks
        ends = np.cumsum(lanes)
        rows, first = picks.size, 0
        while first < rows:
            base = int(ends[first] - lanes[first])
            last = int(np.searchsorted(ends, base + _GROUP_LANES, side="right"))
            last = min(rows, max(first + 1, last))
            group_ends = ends[first:last] - base
            where = index_scratch(int(group_ends[-1]))
            self._indices(block, where, bits, rng)
            if block.width == 2:
                # A row with an odd number of picks turns its last pair (i, j) into the
                # single pick j, whose value the table holds at cells + j: j is uniform.
                odd = group_ends[picks[first:last] & 1 == 1] - 1
                where[odd] = block.cells + where[odd] % block.size
            bounds = np.empty(last - first + 1, dtype=np.int32)
            bounds[0] = 0
            bounds[1:] = group_ends
            totals[first:last] += row_sums(block.table, where, bounds)
            first = last

    @staticmethod
    def _indices(
        block: _Block, where: Indices, bits: np.random.SFC64, rng: np.random.Generator
    ) -> None:
        """Uniform cell indices of `block` into `where`."""
        if block.lane is None:
            # int32 draws the very values of uint32 (numpy fills both with one routine) and
            # copies into the index buffer without a cast.
            kind = np.uint16 if block.cells <= _CHEAP_UINT16_BOUND else np.int32
            np.copyto(where, rng.integers(0, block.cells, size=where.size, dtype=kind))
        elif block.cells in (1 << 8, 1 << 16):  # the lane is the index
            np.copyto(where, _raw_lanes(bits, where.size, block.lane))
        else:
            np.bitwise_and(_raw_lanes(bits, where.size, block.lane), block.cells - 1, out=where)


class _SignKernel(_Kernel):
    """Random sign patterns: one random byte signs 8 values through a 256-entry table."""

    def __init__(self, nonzero: Floats, threshold: float) -> None:
        groups = -(-nonzero.size // _SIGN_GROUP)
        padded = np.zeros(groups * _SIGN_GROUP, dtype=np.float64)
        padded[: nonzero.size] = nonzero
        self._grouped = padded.reshape(groups, _SIGN_GROUP)
        self._groups = groups
        self._threshold = threshold
        small = groups * 256 * 8 <= _SIGN_TABLE_BYTES
        self._tables = self._build(0, groups) if small else None
        self.rows_per_chunk = max(256, _SIGN_LANES // min(groups, _SIGN_TABLES_PER_PASS))
        self.batch_rows = 1 << 20

    def _build(self, first: int, last: int) -> Floats:
        """tables[g, byte] = sum over k of (−1)^bit_k(byte) · value[8g + k].

        Built by doubling on bit k (the first half adds value k, the second subtracts it)
        rather than a BLAS product, whose threads keep spinning after the call and took a
        core from the resampling threads. Zero padding contributes nothing either way.
        """
        values = self._grouped[first:last]
        tables = values[:, :1].copy()
        tables = np.concatenate((tables, -tables), axis=1)
        for k in range(1, _SIGN_GROUP):
            column = values[:, k : k + 1]
            tables = np.concatenate((tables + column, tables - column), axis=1)
        return tables

    def fill(self, jobs: Sequence[Job]) -> None:
        states = [(_generators(seed)[0], np.zeros(out.size)) for out, seed in jobs]
        # Pass by pass across the batch: each pass's tables are loaded into cache once.
        for first in range(0, self._groups, _SIGN_TABLES_PER_PASS):
            last = min(self._groups, first + _SIGN_TABLES_PER_PASS)
            width = last - first
            tables = self._build(first, last) if self._tables is None else self._tables[first:last]
            offsets = np.arange(0, width * 256, 256, dtype=np.int64)
            for bits, sums in states:
                where, picked = scratch(sums.size * width)
                lanes = _raw_lanes(bits, sums.size * width, np.uint8).reshape(sums.size, width)
                np.add(lanes, offsets, out=where.reshape(sums.size, width))
                np.take(tables.ravel(), where, out=picked, mode="clip")
                sums += picked.reshape(sums.size, width).sum(axis=1)
        for (out, _), (_, sums) in zip(jobs, states, strict=True):
            # 1.0 marks a pattern at least as extreme; the caller counts them.
            np.greater_equal(np.abs(sums), self._threshold, out=out, casting="unsafe")
