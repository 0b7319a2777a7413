"""Diagnosing every stage of a report scores each recorded ranking once (issue 25, item 8).

The HTML page diagnoses each stage in turn. A stage's mean recall@k on its recorded ranking is
the ``before`` of its own diagnosis and the ``measured`` gain of the others' (a dense, rerank
or hybrid stage already applies a fix); removing near-duplicates from a ranking that has none
leaves the recorded ranking. Each recorded ranking is scored once, and the diagnoses are the
ones each stage gets alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import groundkit.diagnosis._evidence as evidence
from groundkit.diagnosis import diagnose, fixes
from groundkit.diagnosis._quotes import RankedSpan
from groundkit.judgments import EvalReport

STAGES = (("bm25", "bm25"), ("dense", "dense"), ("rerank", "rerank"), ("hybrid", "hybrid"))


def _report(helpers: Any) -> EvalReport:
    builder = helpers.ReportBuilder(depth=30)
    for name, kind in STAGES:
        builder.stage(name, kind)
    for q in range(12):
        builder.query(f"q{q}", helpers.gold(f"d{q}", "the quote", (100, 200)))
    for position, (name, _) in enumerate(STAGES):
        for q in range(12):
            rank = (q + 3 * position) % 25  # each stage finds each quote at its own rank
            hits: list[Any] = list(helpers.fillers(rank, prefix=f"{name}-{q}-"))
            hits.append((f"d{q}", 120, 180))
            if name == "dense" and q % 4 == 0:  # near-duplicates in one stage only
                hits.insert(0, (f"{name}-{q}-twin", 0, 50, 0))
            builder.result(name, f"q{q}", hits + helpers.fillers(4, prefix=f"{name}-{q}-z"))
    return builder.build()


def _key(hits: Mapping[str, Sequence[RankedSpan]], metric: str) -> tuple[Any, ...]:
    return (
        metric,
        tuple(
            sorted(
                (q, tuple((h.doc, h.start, h.end) for h in ranked)) for q, ranked in hits.items()
            )
        ),
    )


def test_each_ranking_is_scored_once_and_the_diagnoses_stand_alone(
    helpers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _report(helpers)
    scored: list[tuple[Any, ...]] = []
    real = evidence.mean_metric

    def counted(
        gold: Any, hits: Mapping[str, Sequence[RankedSpan]], metric: str, **options: Any
    ) -> float:
        scored.append(_key(hits, metric))
        return real(gold, hits, metric, **options)

    monkeypatch.setattr(evidence, "mean_metric", counted)
    together = {name: diagnose(report, name, k=5) for name, _ in STAGES}
    recorded = {
        _key({r.query_id: r.hits for r in stage.queries}, "recall@5") for stage in report.stages
    }
    assert recorded <= set(scored)
    assert sorted(scored.count(ranking) for ranking in recorded) == [1] * len(STAGES)
    assert any(
        e.measured is not None for d in together.values() for e in d.evidence
    )  # the shared means were used

    monkeypatch.setattr(evidence, "mean_metric", real)
    for name, shared in together.items():
        alone = diagnose(report.model_copy(deep=True), name, k=5)  # another report object
        assert shared.model_dump() == alone.model_dump()
        assert [f.model_dump() for f in fixes(shared)] == [f.model_dump() for f in fixes(alone)]
