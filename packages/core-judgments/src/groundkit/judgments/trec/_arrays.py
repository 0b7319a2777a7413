"""Array helpers of the trec_eval measures: each reproduces trec_eval's arithmetic exactly."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _at(cum: IntArray, lengths: IntArray, cutoff: IntArray) -> IntArray:
    """``cum[q, min(cutoff, length) - 1]`` per query, 0 when that is before rank 1."""
    top = np.minimum(cutoff, lengths)
    picked = (
        cum[np.arange(cum.shape[0]), np.maximum(top - 1, 0)]
        if cum.shape[1]
        else np.zeros(len(top), np.int64)
    )
    return np.where(top > 0, picked, 0)


def _log2_table(size: int) -> FloatArray:
    """``log2(i + 2)`` for ``i < size`` from the C library, as trec_eval computes its discounts.

    numpy's vectorised ``log2`` may differ from the C library's in the last bit on some
    processors; a value printed to four decimals would then differ on a rounding boundary.
    """
    return np.fromiter((math.log2(i + 2) for i in range(size)), np.float64, size)


def _row_sums(values: FloatArray) -> FloatArray:
    """Sums along each row, added left to right as trec_eval adds them.

    ``ndarray.sum`` adds in pairs (more exact, but not what trec_eval does), which can change
    the last bit and so the printed fourth decimal of a value lying on a rounding boundary.
    """
    if values.shape[1] == 0:
        return np.zeros(values.shape[0], dtype=np.float64)
    return np.cumsum(values, axis=1)[:, -1]


def _sequential_sum(values: FloatArray) -> float:
    total = 0.0
    for value in values.tolist():
        total += value
    return total


def _ratio(numerator: npt.ArrayLike, denominator: npt.ArrayLike) -> FloatArray:
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)


def _relevant_ranks(
    relevant: npt.NDArray[np.bool_], rel_ret: IntArray
) -> tuple[IntArray, IntArray]:
    """0-based ranks of every relevant document, row after row, and where each row's start."""
    depth = relevant.shape[1]
    ranks = np.flatnonzero(relevant) % depth if depth else np.zeros(0, np.int64)
    return ranks.astype(np.int64), np.cumsum(rel_ret) - rel_ret


def _iprec(
    precision_after: FloatArray,
    relevant_ranks: tuple[IntArray, IntArray],
    n_rel: IntArray,
    rel_ret: IntArray,
    point: float,
) -> FloatArray:
    """Interpolated precision at a recall point (trec_eval's loop, vectorised)."""
    # lround: half away from zero.
    cut = np.floor(point * n_rel + 0.5).astype(np.int64)
    depth = precision_after.shape[1]
    # 0-based rank of the cut-th relevant document (of the first when cut is 0; past the end
    # when there are fewer).
    ranks, row_start = relevant_ranks
    need = np.maximum(cut, 1)
    has = need <= rel_ret
    picked = ranks[np.where(has, row_start + need - 1, 0)] if ranks.size else np.zeros(len(cut))
    rank_index = np.where(has, picked, depth).astype(np.int64)
    value = (
        precision_after[np.arange(len(cut)), np.minimum(rank_index, max(depth - 1, 0))]
        if depth
        else np.zeros(len(cut))
    )
    return np.where(cut <= rel_ret, value, 0.0)
