"""Builders shared by the eval-set quality tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from groundkit.judgments import EvalReport, GoldQuote, Judgment, QueryResult, StageReport
from groundkit.judgments.report import GoldEvidence, QueryInfo, RunInfo

MakeJudgment = Callable[..., Judgment]


def _judgment(
    query_id: str,
    query: str,
    *,
    doc: str = "doc.md",
    quote: str | None = "the evidence",
    answer: str | None = None,
    qtype: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Judgment:
    gold = () if quote is None else (GoldQuote(doc=doc, quote=quote),)
    return Judgment(
        query_id=query_id,
        query=query,
        category="normal" if gold else "unanswerable",
        gold=gold,
        answer=answer,
        qtype=qtype,
        meta=dict(meta or {}),
    )


@pytest.fixture(scope="session")
def make_judgment() -> MakeJudgment:
    """Build a judgment with one gold quote (``quote=None``: unanswerable)."""
    return _judgment


def build_report(
    judgments: Sequence[Judgment], stages: Mapping[str, Mapping[str, float]], metric: str
) -> EvalReport:
    """A minimal valid report: the first stage of ``stages`` is the baseline ``bm25``."""
    queries = [
        QueryInfo(
            query_id=j.query_id,
            query=j.query,
            category=j.category,
            gold=[GoldEvidence(doc=g.doc, quote=g.quote, spans=[(0, 1)]) for g in j.gold],
        )
        for j in judgments
    ]
    stage_reports = [
        StageReport(
            name=name,
            kind="bm25" if index == 0 else "dense",
            baseline=index == 0,
            queries=[QueryResult(query_id=q, scores={metric: s}) for q, s in scores.items()],
        )
        for index, (name, scores) in enumerate(stages.items())
    ]
    run = RunInfo(
        created_at="2024-01-01T00:00:00Z",
        package_versions={},
        corpus_fingerprint="0" * 64,
        judgments_fingerprint="0" * 64,
        headline_metrics=[metric],
    )
    return EvalReport(run=run, queries=queries, stages=stage_reports)


@pytest.fixture(scope="session")
def make_report() -> Callable[..., EvalReport]:
    """Build a minimal report (see :func:`build_report`)."""
    return build_report
