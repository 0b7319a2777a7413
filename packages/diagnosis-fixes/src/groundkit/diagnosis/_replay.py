"""Exact replays: fixes whose effect can be computed from the rankings a report holds.

Every replay re-scores recall with the core metric functions
(:func:`groundkit.judgments.score_table`) on the same gold and overlap rule as the report, so
its figure is what a re-run would measure on those rankings, not an estimate.

* raise-k: recall at the raised cutoff minus recall@k, on the recorded ranks.
* hybrid-fusion: reciprocal-rank fusion (``1 / (60 + rank)`` summed over the two lists, hits
  identified by ``(doc, start, end)``) of the stage's hits with another stage's; ties go to
  the better best rank, then the diagnosed stage's hit, then document id and offsets.
* deduplicate: the hits marked as near-duplicates of an earlier hit are dropped and the rest
  move up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from groundkit.judgments import GoldItem, ReportHit, score_table

__all__ = ["RRF_K", "deduplicate", "mean_metric", "reciprocal_rank_fusion"]

RRF_K = 60
"""The fusion constant of the hybrid-fusion replay."""

Key = tuple[str, int, int]


def mean_metric(
    gold: Mapping[str, Sequence[GoldItem]],
    hits: Mapping[str, Sequence[ReportHit]],
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
) -> list[ReportHit]:
    """Fuse two ranked lists: a hit scores ``sum(1 / (k + rank))`` over the lists holding it.

    Args:
        first: The diagnosed stage's hits (wins ties).
        second: The other stage's hits.
        depth: Hits kept.
        k: The fusion constant.

    Returns:
        The fused list, best first, with the fused scores.
    """
    scores: dict[Key, float] = {}
    best_rank: dict[Key, int] = {}
    origin: dict[Key, int] = {}
    for position, hits in enumerate((first, second)):
        for rank, hit in enumerate(hits, start=1):
            key = (hit.doc, hit.start, hit.end)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
            best_rank[key] = min(best_rank.get(key, rank), rank)
            origin.setdefault(key, position)
    ordered = sorted(scores, key=lambda key: (-scores[key], best_rank[key], origin[key], key))
    return [
        ReportHit(doc=doc, start=start, end=end, score=scores[(doc, start, end)])
        for doc, start, end in ordered[:depth]
    ]


def deduplicate(hits: Sequence[ReportHit]) -> list[ReportHit]:
    """The hits without those marked as near-duplicates of an earlier hit."""
    return [hit for hit in hits if hit.duplicate_of is None]
