"""Kinds that read earlier stages: ``hybrid`` (reciprocal-rank fusion) and ``rerank``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groundkit.harness._errors import StageFailed
from groundkit.harness.dense._loading import resolve_device, resolve_precision
from groundkit.harness.dense._rerank import make_scorer
from groundkit.harness.retrievers._builtin import HybridRetriever, RerankRetriever
from groundkit.harness.retrievers._fusion import reciprocal_rank_fusion
from groundkit.harness.retrievers._protocol import ChunkSet, Query, StageContext, UpstreamStage
from groundkit.harness.run._context import PreparedRun
from groundkit.harness.run._ranking import ChunkTable

__all__ = ["HybridStage", "RerankStage"]

Span = tuple[str, int, int, float]


def _upstream(context: StageContext, name: str, verb: str) -> UpstreamStage:
    found = context.upstream(name)
    if found.error is not None:
        raise StageFailed(context.stage, f"it {verb} stage {name!r}, which failed")
    return found


class HybridStage:
    """Reciprocal-rank fusion of earlier stages over their union of chunks.

    Args:
        settings: The fusion settings.
        context: The stage's context.
    """

    def __init__(self, settings: HybridRetriever, context: StageContext) -> None:
        self.settings = settings
        self.context = context
        self.inputs = [_upstream(context, name, "fuses") for name in settings.stages]

    def passages(self) -> ChunkSet | None:
        """The fused stages' chunks (their union), when every one has a chunk list."""
        sets = [stage.passages for stage in self.inputs]
        first = sets[0]
        if first is None or any(s is None for s in sets):
            return None
        if all(s is first for s in sets):
            return first
        keys = np.concatenate(
            [np.stack([s.doc_codes, s.starts, s.ends], axis=1) for s in sets if s is not None]
        )
        unique = np.unique(keys, axis=0)
        table = ChunkTable(
            docs=unique[:, 0].astype(np.int64),
            starts=unique[:, 1].astype(np.int64),
            ends=unique[:, 2].astype(np.int64),
        )
        return self.context.run.chunk_set(table)

    def search(self, queries: Sequence[Query], depth: int) -> PreparedRun:
        """``score = sum over the fused stages of 1 / (k + rank)``."""
        runs = [stage.outcome.run for stage in self.inputs]
        assert all(run is not None for run in runs)
        return PreparedRun(
            reciprocal_rank_fusion(
                [run for run in runs if run is not None], k=self.settings.k, depth=depth
            )
        )


class RerankStage:
    """The top hits of an earlier stage re-scored and re-ordered; the rest keep their order.

    Args:
        settings: The rerank settings.
        context: The stage's context.
    """

    def __init__(self, settings: RerankRetriever, context: StageContext) -> None:
        self.settings = settings
        self.context = context
        self.input = _upstream(context, settings.stage, "re-orders")
        self.device = resolve_device(settings.device) if settings.model is not None else None
        self.precision = (
            None
            if self.device is None
            else resolve_precision(settings.precision, self.device, stage=context.stage)
        )
        self.scorer = make_scorer(
            settings,
            stage=context.stage,
            cache_dir=context.cache_dir,
            device=self.device or "cpu",
            precision=self.precision or "fp32",
            progress=context.progress,
        )
        self.pairs_scored = 0

    def run_info(self) -> dict[str, str]:
        """The torch device and precision of the scoring model (nothing for a function)."""
        if self.device is None or self.precision is None:
            return {}
        return {"device_used": self.device, "precision_used": self.precision}

    def usage(self) -> dict[str, int]:
        """Query-passage pairs given to the scorer (one model call each)."""
        return {"model_calls": self.pairs_scored}

    def passages(self) -> ChunkSet | None:
        """The re-ordered stage's chunks: reranking keeps its chunks."""
        return self.input.passages

    def search(self, queries: Sequence[Query], depth: int) -> list[list[Span] | None]:
        """Each query's top ``top`` hits sorted by the scorer (ties keep the earlier order)."""
        corpus = self.context.corpus
        lists = [self.input.hits(number) for number in range(len(queries))]
        batch = [
            (
                query.text,
                [corpus[doc][start:end] for doc, start, end, _ in hits[: self.settings.top]],
            )
            for query, hits in zip(queries, lists, strict=True)
            if hits is not None
        ]
        self.context.progress("rerank", 0, len(batch))
        self.pairs_scored += sum(len(candidates) for _, candidates in batch)
        scores = iter(self.scorer(batch))
        self.context.progress("rerank", len(batch), len(batch))
        out: list[list[Span] | None] = []
        for hits in lists:
            if hits is None:
                out.append(None)
                continue
            head, tail = hits[: self.settings.top], hits[self.settings.top :]
            values = next(scores)
            order = sorted(range(len(head)), key=lambda i: (-values[i], i))
            ranked = [(head[i][0], head[i][1], head[i][2], values[i]) for i in order]
            out.append((ranked + tail)[:depth])
        return out
