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
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_GEOMETRIC = {"gm_map": "map", "gm_bpref": "bpref"}


@dataclass(frozen=True)
class _Measure:
    family: str
    name: str  # printed name
    param: float | None = None


@dataclass(frozen=True)
class _BlockInput:
    """One block of queries and the per-query counts its measures need."""

    codes: IntArray  # (queries, depth) relevance codes, padded
    lengths: IntArray  # ranked documents per query
    level: int  # relevance level
    n_rel: IntArray  # relevant documents per query
    n_nonrel: IntArray  # judged non-relevant documents per query
    ideal: Mapping[int, FloatArray]  # IDCG per cutoff (0 = none), rows of this block


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


def _interpolated(a: _BlockArrays, points: Sequence[float | None]) -> FloatArray:
    value = np.mean(
        [
            _iprec(a.precision_after, a.relevant_ranks, a.n_rel, a.rel_ret, float(p or 0.0))
            for p in points
        ],
        axis=0,
    )
    return np.where(a.lengths > 0, value, 0.0)


def _rprec_mult(a: _BlockArrays, param: float | None) -> FloatArray:
    mult_cut = np.floor(float(param or 0.0) * a.n_rel + 0.9).astype(np.int64)
    return _ratio(_at(a.cum, a.lengths, mult_cut), mult_cut)


def _ndcg_cut(a: _BlockArrays, param: float | None) -> FloatArray:
    top = int(param or 0)
    return _ratio(_row_sums(a.discounted[:, :top]), a.block.ideal[top])


def _map_cut(a: _BlockArrays, param: float | None) -> FloatArray:
    return _ratio(_row_sums(a.precision_at_rel[:, : int(param or 0)]), a.n_rel)


def _set_f(a: _BlockArrays, _: float | None) -> FloatArray:
    set_p = _ratio(a.rel_ret, a.lengths)
    set_r = _ratio(a.rel_ret, a.n_rel)
    return _ratio(2.0 * set_p * set_r, set_p + set_r)


_Compute = Callable[[_BlockArrays, float | None], FloatArray]

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
    "iprec_at_recall": lambda a, p: _interpolated(a, (p,)),
    "11pt_avg": lambda a, _: _interpolated(a, _RECALL_POINTS),
    "P": lambda a, p: _at(a.cum, a.lengths, a.cutoff(p)) / float(p or 1),
    "recall": lambda a, p: _ratio(_at(a.cum, a.lengths, a.cutoff(p)), a.n_rel),
    "Rprec_mult": _rprec_mult,
    "utility": lambda a, _: (2 * a.rel_ret - a.lengths).astype(np.float64),
    "ndcg": lambda a, _: _ratio(_row_sums(a.discounted), a.block.ideal[0]),
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


def _block(block: _BlockInput, measures: Sequence[_Measure]) -> dict[str, FloatArray]:
    """``{printed name: value per query}`` of every measure computed in a block."""
    arrays = _BlockArrays(block)
    out: dict[str, FloatArray] = {}
    for measure in measures:
        compute = _FAMILY_VALUES.get(measure.family)
        if compute is None:
            continue
        value = compute(arrays, measure.param)
        if measure.family in _GEOMETRIC:
            # Logs from the C library, one by one, as trec_eval takes them.
            floored = np.maximum(value, _MIN_GEO_MEAN)
            value = np.fromiter((math.log(v) for v in floored.tolist()), np.float64, len(floored))
        out[measure.name] = value
    return out
