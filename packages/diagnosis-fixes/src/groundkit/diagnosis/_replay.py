"""Exact replays: fixes whose effect can be computed from the rankings a report holds.

Every replay re-scores recall with the core metric functions
(:func:`groundkit.judgments.metrics.score_table`) on the same gold and overlap rule as the report,
so its figure is what a re-run would measure on those rankings, not an estimate.

* raise-k: recall at the raised cutoff minus recall@k, on the recorded ranks.
* hybrid-fusion: core's reciprocal-rank fusion (``1 / (k + rank)`` summed over the two lists,
  the report's hybrid ``k`` or 60) of the stage's hits with another stage's; ties follow
  trec_eval's rule (document id, then offsets, descending), as the harness's hybrid stages.
* deduplicate: the hits marked as near-duplicates of an earlier hit are dropped and the rest
  move up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from groundkit.diagnosis._quotes import RankedSpan
from groundkit.judgments import RRF_K, fuse_ranks
from groundkit.judgments.metrics import GoldItem, score_table
from groundkit.judgments.report import ReportHit

__all__ = ["RRF_K", "FusedHit", "deduplicate", "mean_metric", "reciprocal_rank_fusion"]

Key = tuple[str, int, int]


class FusedHit(NamedTuple):
    """A hit of a replayed fusion: a plain tuple (a replay builds hundreds of thousands).

    Attributes:
        doc: Document id.
        start: Start offset.
        end: End offset (exclusive).
        score: The fused score.
    """

    doc: str
    start: int
    end: int
    score: float


def mean_metric(
    gold: Mapping[str, Sequence[GoldItem]],
    hits: Mapping[str, Sequence[RankedSpan]],
    metric: str,
    *,
    min_overlap_fraction: float,
) -> float:
    """Mean of ``metric`` over every query of ``gold`` (a query without hits scores 0)."""
    if not gold:
        return 0.0
    table = score_table(
        {query_id: list(items) for query_id, items in gold.items()},
        {query_id: list(hits[query_id]) for query_id in gold if query_id in hits},
        [metric],
        min_overlap_fraction=min_overlap_fraction,
    )
    return math.fsum(table.values[:, 0].tolist()) / len(table.query_ids)


def reciprocal_rank_fusion(
    first: Sequence[ReportHit],
    second: Sequence[ReportHit],
    *,
    depth: int,
    k: int = RRF_K,
) -> list[FusedHit]:
    """Fuse two ranked lists with core's :func:`~groundkit.judgments.fuse_ranks`.

    Args:
        first: The diagnosed stage's hits.
        second: The other stage's hits.
        depth: Hits kept.
        k: The fusion constant (a report's hybrid stage's own ``k`` when it has one).

    Returns:
        The fused list, best first, with the fused scores.
    """
    hits = [*first, *second]
    if not hits:
        return []
    # Document codes in sorted-id order, as the harness's corpus codes are.
    names, codes = np.unique(np.asarray([hit.doc for hit in hits]), return_inverse=True)
    keys = np.stack(
        [
            codes.reshape(-1).astype(np.int64),
            np.asarray([hit.start for hit in hits], dtype=np.int64),
            np.asarray([hit.end for hit in hits], dtype=np.int64),
        ],
        axis=1,
    )
    ranks = np.concatenate([np.arange(1, len(first) + 1), np.arange(1, len(second) + 1)]).astype(
        np.int64
    )
    chosen, scores = fuse_ranks(keys, ranks, k=k, depth=depth)
    return [
        FusedHit(str(names[doc]), start, end, score)
        for (doc, start, end), score in zip(chosen.tolist(), scores.tolist(), strict=True)
    ]


def deduplicate(hits: Sequence[ReportHit]) -> list[ReportHit]:
    """The hits without those marked as near-duplicates of an earlier hit."""
    return [hit for hit in hits if hit.duplicate_of is None]
