"""Every trec_eval measure of one block of queries, as a table from family to computation.

A block is a padded ``(queries, depth)`` matrix of relevance codes. The arrays several
measures share (cumulative relevant counts, precision at each rank) are built once per block;
the costlier ones (interpolated precision, discounted gains) only when a measure asks for
them. Each entry of :data:`_FAMILY_VALUES` reproduces trec_eval's arithmetic for one family
(see :mod:`groundkit.judgments.trec._eval` for the definitions).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from groundkit.judgments.trec._arrays import (
    _at,
    _iprec,
    _log2_table,
    _ratio,
    _relevant_ranks,
    _row_sums,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_MIN_GEO_MEAN = 0.00001
_INFAP_EPSILON = 0.00001
_NONPOOL_CODE = -1  # retrieved, not in the qrels
_UNJUDGED_CODE = -2  # in the qrels with a negative relevance: pooled, not judged
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_GEOMETRIC = {"gm_map": "map", "gm_bpref": "bpref"}


@dataclass(frozen=True)
class _Measure:
    family: str
    name: str  # printed name
    param: float | None = None  # cutoff of a "long"/"float" family, relstring's length
    values: tuple[float, ...] = ()  # parameters of a "floats" family (utility, 11pt_avg)
    pairs: tuple[tuple[str, float], ...] = ()  # parameters of a "pairs" family (ndcg, rbp...)


@dataclass(frozen=True)
class _BlockInput:
    """One block of queries and the per-query counts its measures need."""

    codes: IntArray  # (queries, depth) relevance codes, padded
    lengths: IntArray  # ranked documents per query
    level: int  # relevance level
    n_rel: IntArray  # relevant documents per query
    n_nonrel: IntArray  # judged non-relevant documents per query
    ideal: Mapping[int, FloatArray]  # IDCG per cutoff (0 = none), rows of this block
    # Judged (relevance >= 0) levels of each query and how many documents each has.
    level_counts: Sequence[tuple[IntArray, IntArray]] = ()


class _BlockArrays:
    """The arrays shared by the measures of one block, each built at most once."""

    def __init__(self, block: _BlockInput) -> None:
        self.block = block
        self.codes = block.codes
        self.lengths = block.lengths
        self.n_rel = block.n_rel
        self.n_queries, self.depth = block.codes.shape
        self.relevant = block.codes >= block.level
        self.cum: IntArray = np.cumsum(self.relevant, axis=1, dtype=np.int64)
        self.rel_ret: IntArray = (
            self.cum[:, -1] if self.depth else np.zeros(self.n_queries, np.int64)
        )

    def cutoff(self, param: float | None) -> IntArray:
        return np.full(self.n_queries, int(param or 0), dtype=np.int64)

    @cached_property
    def precision(self) -> FloatArray:
        return self.cum / np.arange(1, self.depth + 1, dtype=np.float64)

    @cached_property
    def precision_at_rel(self) -> FloatArray:
        return np.where(self.relevant, self.precision, 0.0)

    @cached_property
    def nonrel(self) -> npt.NDArray[np.bool_]:
        return (self.codes >= 0) & (self.codes < self.block.level)

    @cached_property
    def precision_after(self) -> FloatArray:
        return np.maximum.accumulate(self.precision[:, ::-1], axis=1)[:, ::-1]

    @cached_property
    def relevant_ranks(self) -> tuple[IntArray, IntArray]:
        return _relevant_ranks(self.relevant, self.rel_ret)

    @cached_property
    def discounted(self) -> FloatArray:
        gains = np.maximum(self.codes, 0).astype(np.float64)
        return gains / _log2_table(self.depth)[None, :]


def _map(a: _BlockArrays, _: float | None) -> FloatArray:
    return _ratio(_row_sums(a.precision_at_rel), a.n_rel)


def _bpref(a: _BlockArrays, _: float | None) -> FloatArray:
    nonrel = a.nonrel
    before: IntArray = np.cumsum(nonrel, axis=1, dtype=np.int64) - nonrel
    bound = np.minimum(a.block.n_nonrel, a.n_rel)[:, None]
    term = np.where(before > 0, 1.0 - _ratio(np.minimum(before, a.n_rel[:, None]), bound), 1.0)
    return _ratio(_row_sums(np.where(a.relevant, term, 0.0)), a.n_rel)


def _recip_rank(a: _BlockArrays, _: float | None) -> FloatArray:
    first = a.relevant.argmax(axis=1) if a.depth else np.zeros(a.n_queries, np.int64)
    return np.where(a.relevant.any(axis=1), 1.0 / (first + 1.0), 0.0)


def _interpolated(a: _BlockArrays, points: Sequence[float]) -> FloatArray:
    # trec_eval adds the points' interpolated precisions from the last point to the first.
    total = np.zeros(a.n_queries)
    for point in reversed(points):
        total = total + _iprec(a.precision_after, a.relevant_ranks, a.n_rel, a.rel_ret, point)
    return np.where(a.lengths > 0, total / len(points), 0.0)


def _rprec_mult(a: _BlockArrays, param: float | None) -> FloatArray:
    mult_cut = np.floor(float(param or 0.0) * a.n_rel + 0.9).astype(np.int64)
    return _ratio(_at(a.cum, a.lengths, mult_cut), mult_cut)


def _ndcg_cut(a: _BlockArrays, param: float | None) -> FloatArray:
    top = int(param or 0)
    return _ratio(_row_sums(a.discounted[:, :top]), a.block.ideal[top])


def _map_cut(a: _BlockArrays, param: float | None) -> FloatArray:
    return _ratio(_row_sums(a.precision_at_rel[:, : int(param or 0)]), a.n_rel)


def _infap(a: _BlockArrays, _: float | None) -> FloatArray:
    """Inferred AP (Yilmaz and Aslam): judged documents above each relevant one, sampled."""
    rel = a.relevant
    nonrel = a.nonrel
    unjudged = a.codes == _UNJUDGED_CODE
    rel_before = (a.cum - rel).astype(np.float64)
    nonrel_before = (np.cumsum(nonrel, axis=1, dtype=np.int64) - nonrel).astype(np.float64)
    unjudged_before = np.cumsum(unjudged, axis=1, dtype=np.int64) - unjudged
    rank = np.arange(a.depth, dtype=np.float64)[None, :]  # 0-based, as trec_eval's j
    with np.errstate(divide="ignore", invalid="ignore"):
        above = (rel_before + nonrel_before + unjudged_before) / rank
        sampled = (rel_before + _INFAP_EPSILON) / (rel_before + nonrel_before + 2 * _INFAP_EPSILON)
        term = 1.0 / (rank + 1.0) + (rank / (rank + 1.0)) * above * sampled
    term[:, :1] = 1.0
    return _ratio(_row_sums(np.where(rel, term, 0.0)), a.n_rel)


def _bin_g(a: _BlockArrays, _: float | None) -> FloatArray:
    """binG: each relevant document counts 1 / log2(2 + non-relevant ones above it)."""
    nonrel_above = np.arange(a.depth)[None, :] - (a.cum - 1)
    table = _log2_table(a.depth + 1)
    term = np.where(a.relevant, 1.0 / table[np.clip(nonrel_above, 0, a.depth)], 0.0)
    return np.where(a.rel_ret > 0, _ratio(_row_sums(term), a.n_rel), 0.0)


def _unjudged(a: _BlockArrays, param: float | None) -> FloatArray:
    """unj_k: documents in the top k that are not judged, over k."""
    missing = np.cumsum((a.codes == _NONPOOL_CODE) | (a.codes == _UNJUDGED_CODE), axis=1)
    return _at(missing.astype(np.int64), a.lengths, a.cutoff(param)) / float(param or 1)


def _persistence(measure: _Measure) -> float:
    return dict(measure.pairs).get("p", 0.9)


def _powers(a: _BlockArrays, p: float) -> FloatArray:
    """``p**i`` for each 0-based rank, by repeated multiplication as trec_eval does."""
    powers = np.full(a.depth + 1, p, dtype=np.float64)
    powers[0] = 1.0
    return np.cumprod(powers, dtype=np.float64)


def _rbp_resid(a: _BlockArrays, measure: _Measure) -> FloatArray:
    """RBP residual: the weight of the unjudged documents plus that past the ranking."""
    p = _persistence(measure)
    powers = _powers(a, p)
    unjudged = (a.codes == _NONPOOL_CODE) | (a.codes == _UNJUDGED_CODE)
    total = _row_sums(np.where(unjudged, powers[None, : a.depth], 0.0))
    tail = powers[a.lengths]
    return np.where(unjudged.any(axis=1), tail + (1 - p) * total, 0.0)


def _utility(a: _BlockArrays, measure: _Measure) -> FloatArray:
    """A * rel_ret + b * nonrel_ret + c * rel_not_ret + d * nonrel_not_ret (no collection size)."""
    w_rel, w_nonrel, w_missed, w_rest = measure.values
    rel_ret = a.rel_ret.astype(np.float64)
    lengths = a.lengths.astype(np.float64)
    n_rel = a.n_rel.astype(np.float64)
    value: FloatArray = (
        w_rel * rel_ret
        + w_nonrel * (lengths - rel_ret)
        + w_missed * (n_rel - rel_ret)
        + w_rest * (0.0 + rel_ret - lengths - n_rel)
    )
    return value


def _set_f(a: _BlockArrays, _: float | None) -> FloatArray:
    set_p = _ratio(a.rel_ret, a.lengths)
    set_r = _ratio(a.rel_ret, a.n_rel)
    return _ratio(2.0 * set_p * set_r, set_p + set_r)


_Compute = Callable[[_BlockArrays, float | None], FloatArray]
_ComputeMeasure = Callable[[_BlockArrays, _Measure], FloatArray]

# One computation per family; families without one here (runid, num_q, relstring) are
# handled outside the block.
_FAMILY_VALUES: dict[str, _Compute] = {
    "num_ret": lambda a, _: a.lengths.astype(np.float64),
    "num_rel": lambda a, _: a.n_rel.astype(np.float64),
    "num_rel_ret": lambda a, _: a.rel_ret.astype(np.float64),
    "map": _map,
    "gm_map": _map,
    "Rprec": lambda a, _: _ratio(_at(a.cum, a.lengths, a.n_rel), a.n_rel),
    "bpref": _bpref,
    "gm_bpref": _bpref,
    "recip_rank": _recip_rank,
    "iprec_at_recall": lambda a, p: _interpolated(a, (float(p or 0.0),)),
    "P": lambda a, p: _at(a.cum, a.lengths, a.cutoff(p)) / float(p or 1),
    "recall": lambda a, p: _ratio(_at(a.cum, a.lengths, a.cutoff(p)), a.n_rel),
    "Rprec_mult": _rprec_mult,
    "infAP": _infap,
    "binG": _bin_g,
    "unj": _unjudged,
    "ndcg_cut": _ndcg_cut,
    "map_cut": _map_cut,
    "relative_P": lambda a, p: _ratio(
        _at(a.cum, a.lengths, a.cutoff(p)), np.minimum(a.cutoff(p), a.n_rel)
    ),
    "success": lambda a, p: (_at(a.cum, a.lengths, a.cutoff(p)) > 0).astype(np.float64),
    "set_P": lambda a, _: _ratio(a.rel_ret, a.lengths),
    "set_relative_P": lambda a, _: _ratio(a.rel_ret, np.minimum(a.lengths, a.n_rel)),
    "set_recall": lambda a, _: _ratio(a.rel_ret, a.n_rel),
    "set_map": lambda a, _: _ratio(a.rel_ret.astype(np.float64) ** 2, a.lengths * a.n_rel),
    "set_F": _set_f,
    "num_nonrel_judged_ret": lambda a, _: a.nonrel.sum(axis=1).astype(np.float64),
}


# Families computed from the whole measure (its list or pairs of parameters).
_MEASURE_VALUES: dict[str, _ComputeMeasure] = {
    "utility": _utility,
    "11pt_avg": lambda a, m: _interpolated(a, m.values),
    "rbp_resid": _rbp_resid,
}


def _block(
    block: _BlockInput,
    measures: Sequence[_Measure],
    extra: Mapping[str, _ComputeMeasure] | None = None,
) -> dict[str, FloatArray]:
    """``{printed name: value per query}`` of every measure computed in a block.

    ``extra`` adds computations by family (the graded measures of another module).
    """
    arrays = _BlockArrays(block)
    whole = {**_MEASURE_VALUES, **(extra or {})}
    out: dict[str, FloatArray] = {}
    for measure in measures:
        by_measure = whole.get(measure.family)
        compute = _FAMILY_VALUES.get(measure.family)
        if by_measure is not None:
            value = by_measure(arrays, measure)
        elif compute is not None:
            value = compute(arrays, measure.param)
        else:
            continue
        if measure.family in _GEOMETRIC:
            # Logs from the C library, one by one, as trec_eval takes them.
            floored = np.maximum(value, _MIN_GEO_MEAN)
            value = np.fromiter((math.log(v) for v in floored.tolist()), np.float64, len(floored))
        out[measure.name] = value
    return out
