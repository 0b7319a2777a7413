"""trec_eval's graded measures: ndcg with a gain map, G, ndcg_rel, Rndcg and rbp.

Each query's gains are set up as trec_eval sets them: one entry per ``level=gain`` parameter
(integer levels only), then one per relevance level from 0 to the highest judged level not
given a gain (gain = the level), each with the number of documents judged at that level. The
entries are sorted by gain with trec_eval's comparison (the difference of two gains truncated
to an integer) and glibc's merge sort, so gains less than 1 apart keep the order they were
given in, as in the binary. The ideal ranking takes the entries from the last one down, each
repeated as many times as it has documents, and stops at the first gain that is not positive
(``S`` below, ``T`` its length; nothing when the last entry's gain is not positive).

With ``g(i)`` the gain of the document at 0-based rank ``i`` (0 when not judged), ``D(i)``
the discounted gain summed to rank ``i`` and ``I(i)`` the same for ``S``:

* ``ndcg``: ``D(n-1) / I(T-1)``;
* ``G``: the sum over ranks with ``g(i) != 0`` of ``g(i) / log2(2 + C(i) - g(0..i))``, where
  ``C(i)`` adds ``S(k)`` for each ``k <= i`` with ``k < T`` and ``S(k) >= 1``, else 1; over the
  sum of ``S``;
* ``ndcg_rel``: the mean over the ``T`` ideal documents of ``D / I`` at each retrieved
  document with a positive gain, the unretrieved ones counting ``D(n-1) / I(T-1)``;
* ``Rndcg``: the mean of ``D / I`` taken just before each rank where the ideal gain changes,
  and at the end of the ranking when the ideal stopped before it; 0 without relevant
  documents;
* ``rbp``: ``(1 - p) * sum of g(i) * p**i`` (``p`` = 0.9 unless ``p=`` is given), the gains
  rescaled to [0, 1] by the smallest and largest gain when some lie outside it.

All sums are taken rank by rank, divisions by zero follow IEEE arithmetic as in C.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from groundkit.judgments.trec._arrays import _log2_table, _ratio, _row_sums
from groundkit.judgments.trec._measures import _BlockArrays, _ComputeMeasure, _Measure

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_Entry = tuple[int, float, int]  # relevance level, gain, documents judged at that level


def _c_compare(a: _Entry, b: _Entry) -> int:
    """trec_eval's gain comparison: the difference truncated to an integer."""
    return math.trunc(a[1] - b[1])


def _merge_sort(items: list[_Entry], compare: Callable[[_Entry, _Entry], int]) -> list[_Entry]:
    """Glibc's qsort for small arrays: a top-down merge sort, left first on ties."""
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = _merge_sort(items[:half], compare), _merge_sort(items[half:], compare)
    out: list[_Entry] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _entries(
    pairs: Sequence[tuple[str, float]], levels: IntArray, counts: IntArray
) -> list[_Entry]:
    given = [(int(name), value) for name, value in pairs if name != "p"]
    entries: list[list[float]] = [[level, gain, 0] for level, gain in given]
    per_level = dict(zip(levels.tolist(), counts.tolist(), strict=True))
    top = max((level for level, count in per_level.items() if count), default=-1)
    for level in range(top + 1):
        match = next((entry for entry in entries if entry[0] == level), None)
        if match is not None:
            match[2] = per_level.get(level, 0)
        else:
            entries.append([level, float(level), per_level.get(level, 0)])
    plain = [(int(e[0]), float(e[1]), int(e[2])) for e in entries]
    return _merge_sort(plain, _c_compare)


@dataclass(frozen=True)
class _GainRow:
    """One query's gains, rank by rank, and its ideal ranking."""

    codes: IntArray  # relevance code of each retrieved document
    gains: FloatArray  # g(i) of each retrieved document
    ideal: FloatArray  # S: the positive ideal gains, in order
    top: float  # the last entry's gain (trec_eval's starting ideal gain)
    following: float  # the ideal gain that ends S (0 past the judged documents)
    levels: list[_Entry]

    @property
    def active(self) -> bool:
        return self.top > 0.0


def _gain_row(
    codes: IntArray, pairs: Sequence[tuple[str, float]], judged: tuple[IntArray, IntArray]
) -> _GainRow:
    entries = _entries(pairs, *judged)
    gains = _lookup(codes, entries)
    sequence = [gain for _, gain, count in reversed(entries) for _ in range(count)]
    stop = next((k for k, gain in enumerate(sequence) if gain <= 0.0), len(sequence))
    top = entries[-1][1] if entries else 0.0
    if top <= 0.0:
        stop = 0
    following = sequence[stop] if stop < len(sequence) else 0.0
    return _GainRow(codes, gains, np.asarray(sequence[:stop], np.float64), top, following, entries)


def _lookup(codes: IntArray, entries: Sequence[_Entry]) -> FloatArray:
    """Each code's gain: the first entry of its level (a parameter may name a negative one)."""
    gain_of: dict[int, float] = {}
    for level, gain, _ in entries:
        gain_of.setdefault(level, gain)
    return np.array([gain_of.get(code, 0.0) for code in codes.tolist()], dtype=np.float64)


def _cumulative(values: FloatArray) -> FloatArray:
    return np.cumsum(values) if values.size else np.zeros(0)


def _last(values: FloatArray) -> float:
    return float(values[-1]) if values.size else 0.0


def _div(numerator: float, denominator: float) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(numerator) / np.float64(denominator))


def _ndcg(row: _GainRow) -> float:
    n, t = len(row.gains), len(row.ideal)
    dcg = _last(_cumulative(row.gains / _log2_table(n)))
    ideal = _last(_cumulative(row.ideal / _log2_table(t)))
    return dcg / ideal if ideal > 0.0 else 0.0


def _g(row: _GainRow) -> float:
    n, t = len(row.gains), len(row.ideal)
    cost = np.ones(n)
    within = min(n, t)
    cost[:within] = np.where(row.ideal[:within] >= 1.0, row.ideal[:within], 1.0)
    spent = _cumulative(cost)
    gained = _cumulative(row.gains)
    total = 0.0
    for i in np.flatnonzero(row.gains != 0.0).tolist():
        base = (2 + float(spent[i])) - float(gained[i])
        log = math.log2(base) if base > 0 else (-math.inf if base == 0 else math.nan)
        total += _div(float(row.gains[i]), log)
    ideal = _last(_cumulative(row.ideal))
    return total / ideal if ideal > 0.0 else 0.0


def _ndcg_rel(row: _GainRow) -> float:
    n, t = len(row.gains), len(row.ideal)
    dcg = _cumulative(row.gains / _log2_table(n))
    ideal = _cumulative(row.ideal / _log2_table(t))
    total = 0.0
    positive = np.flatnonzero(row.gains > 0.0).tolist()
    for i in positive:
        at = float(ideal[min(i, t - 1)]) if t else 0.0
        total += _div(float(dcg[i]), at)
    total += _div(float(t - len(positive)) * _last(dcg), _last(ideal))
    return _div(total, float(t)) if total > 0.0 else 0.0


def _rndcg(row: _GainRow, n_rel: int) -> float:
    if n_rel == 0:
        return 0.0
    n, t = len(row.gains), len(row.ideal)
    dcg = _cumulative(row.gains / _log2_table(n))
    ideal = _cumulative(row.ideal / _log2_table(t))
    total, changes = 0.0, 0
    if row.active:
        sequence = [*row.ideal.tolist(), row.following]
        previous = row.top
        for step, gain in enumerate(sequence):  # steps 0..T, where S changes value
            if gain == previous:
                continue
            previous = gain
            before = float(ideal[step - 1]) if step else 0.0
            if before > 0.0:
                done = min(step, n)
                total += float(dcg[done - 1]) / before if done else 0.0
                changes += 1
    stopped = t + 1 if row.active else 0
    if stopped < n and _last(ideal) > 0.0:
        total += _last(dcg) / _last(ideal)
        changes += 1
    return _div(total, float(changes))


def _rbp(row: _GainRow, p: float) -> float:
    gains = row.gains
    values = [gain for _, gain, _ in row.levels]
    low, high = min(values, default=0.0), max(values, default=0.0)
    if low < 0 or high > 1:
        scaled = [(level, _div(gain - low, high - low), n) for level, gain, n in row.levels]
        gains = _lookup(row.codes, scaled)
    powers = np.full(len(gains), p)
    if len(gains):
        powers[0] = 1.0
    weights = np.cumprod(powers)
    return (1.0 - p) * _last(_cumulative(np.where(gains != 0.0, gains * weights, 0.0)))


def _per_row(compute: Callable[[_GainRow, _BlockArrays, int, _Measure], float]) -> _ComputeMeasure:
    def run(a: _BlockArrays, measure: _Measure) -> FloatArray:
        out = np.zeros(a.n_queries)
        for row in range(a.n_queries):
            codes = a.codes[row, : int(a.lengths[row])]
            gains = _gain_row(codes, measure.pairs, a.block.level_counts[row])
            out[row] = compute(gains, a, row, measure)
        return out

    return run


def _ndcg_any(a: _BlockArrays, measure: _Measure) -> FloatArray:
    if not measure.pairs:  # gains = relevance levels: the vectorised ndcg of the block
        return _ratio(_row_sums(a.discounted), a.block.ideal[0])
    return _per_row(lambda g, a, row, m: _ndcg(g))(a, measure)


_GRADED: dict[str, _ComputeMeasure] = {
    "ndcg": _ndcg_any,
    "G": _per_row(lambda g, a, row, m: _g(g)),
    "ndcg_rel": _per_row(lambda g, a, row, m: _ndcg_rel(g)),
    "Rndcg": _per_row(lambda g, a, row, m: _rndcg(g, int(a.n_rel[row]))),
    "rbp": _per_row(lambda g, a, row, m: _rbp(g, dict(m.pairs).get("p", 0.9))),
}
