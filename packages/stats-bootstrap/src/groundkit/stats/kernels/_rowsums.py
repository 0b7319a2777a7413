"""Row sums of table lookups in one pass: gather and add fused, in a fixed order.

`np.take` followed by `np.add.reduceat` reads and writes every looked-up value twice (the
indices must also be 64-bit for `np.take`). scipy's CSR matrix-vector kernel does the same
work in one pass over 32-bit indices: a row's sum is `sum over k of 1.0 * table[index[k]]`,
added left to right from 0.0. Measured at n = 1,000 (pair tables of 65,536 sums): 1.1 ns a
lookup against 1.8 for take + reduceat (the 16-bit lane copy included in both).

Multiplying by 1.0 is exact and left-to-right addition is odd under negation, so negated
tables give exactly negated sums, and a row's sum depends only on its own lookups.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["row_sums"]

Floats = NDArray[np.float64]
Indices = NDArray[np.int32]
MatVec = Callable[[int, int, Indices, Indices, Floats, Floats, Floats], None]

_KERNEL: list[MatVec] = []
# Read-only weights of 1.0 shared by every thread, replaced (never written) when too short.
_ONES: list[Floats] = [np.ones(0)]
_LOCK = threading.Lock()


def _public_matvec(
    rows: int,
    columns: int,
    bounds: Indices,
    indices: Indices,
    weights: Floats,
    table: Floats,
    out: Floats,
) -> None:
    """The same kernel through scipy's public sparse matrix (slower: it checks its input)."""
    from scipy.sparse import csr_matrix

    matrix = csr_matrix((weights, indices, bounds), shape=(rows, columns), copy=False)
    out += matrix @ table


def _matvec() -> MatVec:
    """The C++ CSR matrix-vector product of scipy, or the public route to it if it moved."""
    if not _KERNEL:
        try:
            # Private, but its signature has been stable since scipy 0.7; the public
            # fallback below runs the same kernel, so results do not depend on which is used.
            from scipy.sparse._sparsetools import csr_matvec
        except ImportError:  # pragma: no cover - exercised by a test through _KERNEL
            _KERNEL.append(_public_matvec)
        else:
            _KERNEL.append(csr_matvec)
    return _KERNEL[0]


def _ones(count: int) -> Floats:
    ones = _ONES[0]
    if ones.size < count:
        with _LOCK:
            ones = _ONES[0]
            if ones.size < count:
                ones = np.ones(count)
                ones.flags.writeable = False
                _ONES[0] = ones
    return ones[:count]


def row_sums(table: Floats, indices: Indices, bounds: Indices) -> Floats:
    """Per-row sums of `table[indices]`, row r holding `indices[bounds[r]:bounds[r + 1]]`.

    Args:
        table: The looked-up values.
        indices: Positions in `table` (int32, each below `table.size`).
        bounds: Row boundaries (int32, non-decreasing, from 0 to `indices.size`).

    Returns:
        One float64 sum per row (0.0 for an empty row), added left to right.
    """
    rows = bounds.size - 1
    table = np.ascontiguousarray(table, dtype=np.float64)  # the kernel reads raw memory
    out = np.zeros(rows, dtype=np.float64)
    weights = _ones(indices.size)
    _matvec()(rows, table.size, bounds, indices, weights, table, out)
    return out
