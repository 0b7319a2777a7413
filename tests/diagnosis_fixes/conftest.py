"""Hand-built reports for the diagnosis tests (EvalReport objects constructed directly)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from groundkit.judgments import EvalReport, QueryResult, StageReport, score_queries
from groundkit.judgments.metrics import GoldItem
from groundkit.judgments.report import EvidenceTrace, GoldEvidence, QueryInfo, ReportHit, RunInfo

HitSpec = tuple[str, int, int] | tuple[str, int, int, int | None]


@dataclass
class _Stage:
    name: str
    kind: str
    chunker: dict[str, Any] | None
    encoder_max_tokens: int | None
    error: str | None
    retriever: dict[str, Any]
    results: dict[str, tuple[list[ReportHit], list[EvidenceTrace]]] = field(default_factory=dict)


class ReportBuilder:
    """Builds a valid EvalReport: queries, stages, hits and traces; scores are computed."""

    def __init__(self, *, depth: int = 20, metrics: Sequence[str] = ("recall@2", "recall@10")):
        self.depth = depth
        self.metrics = list(metrics)
        self.queries: list[QueryInfo] = []
        self.stages: list[_Stage] = []

    def query(self, query_id: str, *gold: GoldEvidence, text: str | None = None) -> None:
        self.queries.append(
            QueryInfo(query_id=query_id, query=text or f"question {query_id}", gold=list(gold))
        )

    def stage(
        self,
        name: str,
        kind: str = "bm25",
        *,
        chunker: dict[str, Any] | None = None,
        encoder_max_tokens: int | None = None,
        error: str | None = None,
        retriever: dict[str, Any] | None = None,
    ) -> None:
        self.stages.append(
            _Stage(
                name,
                kind,
                {"kind": "chars", "size": 200, "overlap": 0} if chunker is None else chunker,
                encoder_max_tokens,
                error,
                retriever or {},
            )
        )

    def no_chunker(self, name: str) -> None:
        for stage in self.stages:
            if stage.name == name:
                stage.chunker = None

    def result(
        self,
        stage: str,
        query_id: str,
        hits: Sequence[HitSpec],
        traces: Sequence[EvidenceTrace] = (),
    ) -> None:
        built = []
        for spec in hits:
            doc, start, end = spec[0], spec[1], spec[2]
            dup = spec[3] if len(spec) == 4 else None
            built.append(
                ReportHit(
                    doc=doc, start=start, end=end, score=1.0 / (len(built) + 1), duplicate_of=dup
                )
            )
        target = next(s for s in self.stages if s.name == stage)
        target.results[query_id] = (built, list(traces))

    def build(self, **run: Any) -> EvalReport:
        gold = {
            q.query_id: [
                GoldItem(grade=g.grade, spans=tuple((g.doc, s, e) for s, e in g.spans))
                for g in q.gold
            ]
            for q in self.queries
            if q.answerable
        }
        stages = []
        for index, stage in enumerate(self.stages):
            results = []
            if stage.error is None:
                hits = {qid: self_hits for qid, (self_hits, _) in stage.results.items()}
                scores = score_queries(
                    gold,
                    hits,
                    self.metrics,
                    min_overlap_fraction=run.get("min_overlap_fraction", 0.0),
                )
                for query in self.queries:
                    if not query.answerable:
                        continue
                    qid = query.query_id
                    query_hits, traces = stage.results.get(qid, ([], []))
                    results.append(
                        QueryResult(
                            query_id=qid,
                            scores=scores[qid],
                            hits=query_hits,
                            evidence=traces,
                            missing=not query_hits,
                        )
                    )
            stages.append(
                StageReport(
                    name=stage.name,
                    kind=stage.kind,
                    baseline=index == 0,
                    retriever=stage.retriever,
                    chunker=stage.chunker,
                    encoder_max_tokens=stage.encoder_max_tokens,
                    queries=results,
                    error=stage.error,
                )
            )
        info = RunInfo(
            created_at="2024-01-01T00:00:00+00:00",
            package_versions={},
            corpus_fingerprint="0" * 64,
            judgments_fingerprint="0" * 64,
            depth=run.pop("depth", self.depth),
            **run,
        )
        return EvalReport(run=info, queries=self.queries, stages=stages)


def gold(doc: str, quote: str, *spans: tuple[int, int]) -> GoldEvidence:
    """A gold quote with its spans (none: unresolved)."""
    return GoldEvidence(doc=doc, quote=quote, spans=list(spans), method="exact" if spans else None)


def trace(index: int = 0, **fields: Any) -> EvidenceTrace:
    """An evidence trace."""
    return EvidenceTrace(gold_index=index, **fields)


def fillers(count: int, prefix: str = "f") -> list[tuple[str, int, int]]:
    """Hits that touch no gold."""
    return [(f"{prefix}{i}", 0, 50) for i in range(count)]


@pytest.fixture
def builder() -> ReportBuilder:
    return ReportBuilder()


@pytest.fixture
def helpers() -> Any:
    import types

    return types.SimpleNamespace(
        gold=gold, trace=trace, fillers=fillers, ReportBuilder=ReportBuilder
    )
