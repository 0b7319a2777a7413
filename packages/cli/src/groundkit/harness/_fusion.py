"""Reciprocal-rank fusion of earlier stages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from groundkit.harness._hits import PerQueryHits
from groundkit.harness._ranking import RankedRun

__all__ = ["reciprocal_rank_fusion"]


def _fuse_one(
    runs: Sequence[RankedRun], query: int, k: int, depth: int
) -> tuple[PerQueryHits, np.ndarray] | None:
    pieces = []
    for stage_index, run in enumerate(runs):
        rows = run.rows(query)
        n = rows.stop - rows.start
        if n == 0:
            continue
        ranks = np.arange(1, n + 1, dtype=np.int64)
        pieces.append(
            (
                run.docs[rows],
                run.starts[rows],
                run.ends[rows],
                ranks,
                np.full(n, stage_index, dtype=np.int64),
            )
        )
    if not pieces:
        return None
    docs, starts, ends, ranks, stages = (np.concatenate(p) for p in zip(*pieces, strict=True))
    keys = np.stack([docs, starts, ends], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    # Add each hit's terms in rank order, not run order: floating-point sums depend on the
    # order, and equal rank multisets must give equal scores for the tie rule below to apply.
    canonical = np.lexsort((ranks, inverse))
    scores = np.bincount(
        inverse[canonical], weights=1.0 / (k + ranks[canonical]), minlength=len(unique)
    )
    best_rank = np.full(len(unique), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best_rank, inverse, ranks)
    first_stage = np.full(len(unique), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_stage, inverse, stages)
    # Higher fused score first; then the better best rank, the earlier input stage, and
    # finally document and offsets, so equal scores always come out in the same order.
    order = np.lexsort((unique[:, 2], unique[:, 1], unique[:, 0], first_stage, best_rank, -scores))[
        :depth
    ]
    chosen = unique[order]
    columns: PerQueryHits = (
        chosen[:, 0].astype(np.int64),
        chosen[:, 1].astype(np.int64),
        chosen[:, 2].astype(np.int64),
        scores[order].astype(np.float64),
        np.full(len(order), -1, dtype=np.int64),
    )
    return columns, order


def reciprocal_rank_fusion(
    runs: Sequence[RankedRun],
    *,
    k: int,
    depth: int,
    chunk_lookup: Mapping[tuple[int, int, int], int] | None = None,
) -> RankedRun:
    """Fuse ranked runs: a hit's score is ``sum over runs of 1 / (k + rank)``.

    Hits are identified by ``(document, start, end)``; a hit missing from a run contributes
    nothing for that run. Ties are broken by the best rank the hit had in any run, then by the
    earlier run, then by document code and offsets.

    Args:
        runs: The runs to fuse, over the same queries in the same order.
        k: The fusion constant.
        depth: Hits kept per query.
        chunk_lookup: ``(doc code, start, end) -> chunk id`` of the fused stage's chunk table.

    Returns:
        The fused run (a query counts as returned when any input returned it).
    """
    query_ids = runs[0].query_ids
    per_query: list[PerQueryHits | None] = []
    for query in range(len(query_ids)):
        fused = _fuse_one(runs, query, k, depth)
        if fused is None:
            returned = any(bool(run.returned[query]) for run in runs)
            empty = np.zeros(0, dtype=np.int64)
            per_query.append(
                (empty, empty, empty, np.zeros(0, dtype=np.float64), empty) if returned else None
            )
            continue
        columns, _ = fused
        if chunk_lookup is not None:
            ids = np.fromiter(
                (
                    chunk_lookup.get((int(d), int(s), int(e)), -1)
                    for d, s, e in zip(columns[0], columns[1], columns[2], strict=True)
                ),
                np.int64,
                columns[0].size,
            )
            columns = (columns[0], columns[1], columns[2], columns[3], ids)
        per_query.append(columns)
    return RankedRun.from_lists(query_ids, per_query)
