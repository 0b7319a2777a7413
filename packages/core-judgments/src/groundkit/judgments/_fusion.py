"""Reciprocal-rank fusion: the one definition the harness's hybrid stages and diagnosis use.

A hit's fused score is ``sum over the ranked lists holding it of 1 / (k + rank)``; hits are
identified by ``(document, start, end)``. Equal scores follow trec_eval's tie rule, the
harness's one: the higher key first (document id descending, then offsets descending), so the
order, and which hits a tie at ``depth`` keeps, never depends on input order.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["RRF_K", "fuse_ranks"]

RRF_K = 60
"""The fusion constant of Cormack et al. (2009), the default of every hybrid stage."""

IntArray = npt.NDArray[np.int64]


def fuse_ranks(
    keys: IntArray, ranks: IntArray, *, k: int, depth: int
) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """Fuse hits given as rows: which distinct hits come first, and their fused scores.

    Args:
        keys: ``(m, 3)`` integer rows ``(document code, start, end)``; document codes must
            sort as the document ids do for the tie rule to follow the ids.
        ranks: The 1-based rank of each row in its list.
        k: The fusion constant (positive).
        depth: Hits kept.

    Returns:
        The fused hits' keys ``(n, 3)``, best first (``n <= depth``), and their scores.
    """
    if keys.shape[0] == 0:
        return keys.reshape(0, 3).astype(np.int64), np.zeros(0, dtype=np.float64)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    # Add each hit's terms in rank order, not list order: floating-point sums depend on the
    # order, and equal rank multisets must give equal scores for the tie rule to apply.
    canonical = np.lexsort((ranks, inverse))
    scores = np.bincount(
        inverse[canonical], weights=1.0 / (k + ranks[canonical]), minlength=len(unique)
    )
    order = np.lexsort((-unique[:, 2], -unique[:, 1], -unique[:, 0], -scores))
    chosen = order[:depth]
    return unique[chosen].astype(np.int64), scores[chosen].astype(np.float64)
