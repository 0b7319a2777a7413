"""Reciprocal-rank fusion of earlier stages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from groundkit.harness.run._hits import PerQueryHits
from groundkit.harness.run._ranking import RankedRun
from groundkit.judgments import fuse_ranks

__all__ = ["reciprocal_rank_fusion"]


def _fuse_one(runs: Sequence[RankedRun], query: int, k: int, depth: int) -> PerQueryHits | None:
    pieces = []
    for run in runs:
        rows = run.rows(query)
        n = rows.stop - rows.start
        if n == 0:
            continue
        keys = np.stack([run.docs[rows], run.starts[rows], run.ends[rows]], axis=1)
        ranks = np.arange(1, n + 1, dtype=np.int64)
        pieces.append((keys, ranks))
    if not pieces:
        return None
    keys, ranks = (np.concatenate(p) for p in zip(*pieces, strict=True))
    chosen, scores = fuse_ranks(keys, ranks, k=k, depth=depth)
    return (
        chosen[:, 0].copy(),
        chosen[:, 1].copy(),
        chosen[:, 2].copy(),
        scores,
        np.full(len(scores), -1, dtype=np.int64),
    )


def reciprocal_rank_fusion(
    runs: Sequence[RankedRun],
    *,
    k: int,
    depth: int,
    chunk_lookup: Mapping[tuple[int, int, int], int] | None = None,
) -> RankedRun:
    """Fuse ranked runs: a hit's score is ``sum over runs of 1 / (k + rank)``.

    Hits are identified by ``(document, start, end)``; a hit missing from a run contributes
    nothing for that run. Ties are broken by trec_eval's rule (document code, then offsets,
    descending; see :func:`~groundkit.judgments.fuse_ranks`), at the cut too.

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
        columns = fused
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
