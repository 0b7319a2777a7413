"""Chunk-level metrics against quote-anchored gold: names, tables, hits, fusion and scores."""

from typing import TYPE_CHECKING

from groundkit.judgments.lazy import lazy_exports

if TYPE_CHECKING:
    from groundkit.judgments._fusion import RRF_K, fuse_ranks
    from groundkit.judgments.metrics._budgets import HitTokens
    from groundkit.judgments.metrics._hits import Hit, overlaps
    from groundkit.judgments.metrics._scores import (
        MetricTable,
        mean_scores,
        score_queries,
        score_table,
    )
    from groundkit.judgments.metrics._spec import METRIC_KINDS, MetricSpec, parse_metric
    from groundkit.judgments.metrics._tables import (
        ChunkSpans,
        GoldItem,
        GoldTable,
        HitTable,
        gold_items_from_resolved,
        split_occurrences,
    )

_EXPORTS: dict[str, str] = {
    "METRIC_KINDS": "groundkit.judgments.metrics._spec",
    "RRF_K": "groundkit.judgments._fusion",
    "ChunkSpans": "groundkit.judgments.metrics._tables",
    "GoldItem": "groundkit.judgments.metrics._tables",
    "GoldTable": "groundkit.judgments.metrics._tables",
    "Hit": "groundkit.judgments.metrics._hits",
    "HitTable": "groundkit.judgments.metrics._tables",
    "HitTokens": "groundkit.judgments.metrics._budgets",
    "MetricSpec": "groundkit.judgments.metrics._spec",
    "MetricTable": "groundkit.judgments.metrics._scores",
    "fuse_ranks": "groundkit.judgments._fusion",
    "gold_items_from_resolved": "groundkit.judgments.metrics._tables",
    "mean_scores": "groundkit.judgments.metrics._scores",
    "overlaps": "groundkit.judgments.metrics._hits",
    "parse_metric": "groundkit.judgments.metrics._spec",
    "score_queries": "groundkit.judgments.metrics._scores",
    "score_table": "groundkit.judgments.metrics._scores",
    "split_occurrences": "groundkit.judgments.metrics._tables",
}

__all__ = [
    "METRIC_KINDS",
    "RRF_K",
    "ChunkSpans",
    "GoldItem",
    "GoldTable",
    "Hit",
    "HitTable",
    "HitTokens",
    "MetricSpec",
    "MetricTable",
    "fuse_ranks",
    "gold_items_from_resolved",
    "mean_scores",
    "overlaps",
    "parse_metric",
    "score_queries",
    "score_table",
    "split_occurrences",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
