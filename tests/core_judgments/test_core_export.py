"""Exporting a report stage as a run and qrels: ids, relevance, order, and what agrees."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.judgments import (
    SCHEMA_VERSION,
    EvalReport,
    Hit,
    JudgmentError,
    ReportError,
    evaluate_trec,
    export_stage,
    score_queries,
)
from groundkit.judgments.metrics import GoldItem
from groundkit.judgments.report import parse_report
from groundkit.judgments.trec import chunk_id, parse_chunk_id, trec_ranking
from groundkit.judgments.trec._export import strict_scores

DOCS = ("a.txt", "b/c.txt")


def _report(
    queries: list[dict[str, Any]],
    stages: list[dict[str, Any]],
    *,
    level: str = "chunk",
    fraction: float = 0.0,
) -> EvalReport:
    return parse_report(
        {
            "schema_version": SCHEMA_VERSION,
            "run": {
                "created_at": "2026-12-01T00:00:00Z",
                "package_versions": {},
                "corpus_fingerprint": "c" * 64,
                "judgments_fingerprint": "j" * 64,
                "level": level,
                "min_overlap_fraction": fraction,
            },
            "queries": queries,
            "stages": stages,
        }
    )


def _stage(name: str, results: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": "bm25" if name == "bm25" else "predictions", **extra} | {
        "baseline": name == "bm25",
        "queries": results,
    }


def _hit(doc: str, start: int, end: int, score: float) -> dict[str, Any]:
    return {"doc": doc, "start": start, "end": end, "score": score}


GOLD_QUERIES = [
    {
        "query_id": "q-1",
        "query": "one",
        "gold": [
            {"doc": "a.txt", "quote": "x", "grade": 1, "spans": [[10, 20]]},
            {"doc": "a.txt", "quote": "y", "grade": 3, "spans": [[15, 30], [80, 90]]},
            {"doc": "b/c.txt", "quote": "z", "grade": 2, "spans": []},  # unresolved
        ],
    },
    {
        "query_id": "q-2",
        "query": "two",
        "gold": [{"doc": "b/c.txt", "quote": "w", "spans": [[0, 4]]}],
    },
    {"query_id": "q-3", "query": "none", "category": "unanswerable"},
]


def test_chunk_ids_round_trip() -> None:
    assert chunk_id("a.txt", 0, 12) == "a.txt#0-12"
    assert parse_chunk_id("notes/#1.md#7-9") == ("notes/#1.md", 7, 9)
    for bad in ("a.txt", "a.txt#1", "#1-2", "a.txt#x-2", "a.txt#1-"):
        with pytest.raises(JudgmentError, match="is not a chunk id"):
            parse_chunk_id(bad)


def test_chunk_level_relevance_is_the_reports_overlap_rule() -> None:
    hits = [
        _hit("a.txt", 25, 40, 5.0),  # touches y (grade 3)
        _hit("a.txt", 0, 12, 5.0),  # touches x by two characters
        _hit("b/c.txt", 0, 50, 1.0),  # z is unresolved: nothing to touch
        _hit("a.txt", 25, 40, 0.5),  # the first hit again: left out
        _hit("a.txt", 12, 16, 0.2),  # touches x and y: the larger grade
    ]
    report = _report(
        GOLD_QUERIES,
        [_stage("bm25", [{"query_id": "q-1", "scores": {}, "hits": hits}])],
    )
    export = export_stage(report, "bm25")
    assert export.level == "chunk"
    assert export.repeated == 1
    assert list(export.run["q-1"]) == ["a.txt#25-40", "a.txt#0-12", "b/c.txt#0-50", "a.txt#12-16"]
    assert export.qrels == {
        "q-1": {"a.txt#25-40": 3, "a.txt#0-12": 1, "b/c.txt#0-50": 0, "a.txt#12-16": 3}
    }
    # The tie at 5.0 is broken so that the recorded order survives trec_eval's sort.
    assert [doc for doc, _ in trec_ranking(export.run["q-1"])] == list(export.run["q-1"])
    assert export.adjusted == 1
    assert export.run["q-1"]["a.txt#25-40"] == 5.0
    assert export.run["q-1"]["a.txt#0-12"] == float(np.nextafter(np.float32(5.0), np.float32(0)))
    assert export.query_count == 2
    assert export.missing == ("q-2",)  # answerable, without hits

    strict = _report(
        GOLD_QUERIES,
        [_stage("bm25", [{"query_id": "q-1", "scores": {}, "hits": hits}])],
        fraction=0.5,
    )
    # With half of a span to cover: [0, 12) holds 2 of x's 10 characters, so it is not relevant.
    assert export_stage(strict, "bm25").qrels["q-1"]["a.txt#0-12"] == 0


def test_document_level_qrels_are_the_gold_documents() -> None:
    report = _report(
        GOLD_QUERIES,
        [
            _stage(
                "bm25",
                [
                    {"query_id": "q-1", "scores": {}, "hits": [_hit("b/c.txt", 0, 70, 2.0)]},
                    {"query_id": "q-2", "scores": {}, "hits": [], "missing": True},
                ],
            )
        ],
        level="document",
    )
    export = export_stage(report, "bm25")
    assert export.level == "document"
    assert export.qrels == {"q-1": {"a.txt": 3, "b/c.txt": 2}, "q-2": {"b/c.txt": 1}}
    assert dict(export.run) == {"q-1": {"b/c.txt": 2.0}}
    assert export.run.run_id == "bm25"
    assert export.missing == ("q-2",)
    with pytest.raises(ReportError, match="export it at document level"):
        export_stage(report, "bm25", level="chunk")


def test_chunk_report_collapsed_to_documents() -> None:
    hits = [_hit("a.txt", 50, 60, 3.0), _hit("b/c.txt", 0, 4, 2.0), _hit("a.txt", 10, 20, 1.0)]
    report = _report(
        GOLD_QUERIES, [_stage("bm25", [{"query_id": "q-1", "scores": {}, "hits": hits}])]
    )
    export = export_stage(report, "bm25", level="document")
    assert dict(export.run) == {"q-1": {"a.txt": 3.0, "b/c.txt": 2.0}}
    assert export.repeated == 0  # later chunks of a listed document are not repeats
    assert export.qrels["q-1"] == {"a.txt": 3, "b/c.txt": 2}


def test_refusals() -> None:
    hit = [_hit("a.txt", 0, 5, 1.0)]
    report = _report(
        GOLD_QUERIES,
        [
            _stage("bm25", [{"query_id": "q-1", "scores": {}, "hits": hit}]),
            _stage("broken", [], error="stage 'broken': the command exited with status 1"),
            _stage("empty", [{"query_id": "q-1", "scores": {}, "missing": True}]),
        ],
    )
    with pytest.raises(ReportError, match=r"no stage named 'dense' .*stages: bm25, broken, empty"):
        export_stage(report, "dense")
    with pytest.raises(ReportError, match=r"stage 'broken' failed in this report.*status 1"):
        export_stage(report, "broken")
    with pytest.raises(ReportError, match="stage 'empty' has no hits in the report"):
        export_stage(report, "empty")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.floats(-1e6, 1e6, allow_nan=False, width=32) | st.sampled_from([0.0, 1.0, 2.0]),
        max_size=30,
    )
)
def test_strict_scores_keep_the_order_in_single_and_double_precision(scores: list[float]) -> None:
    out, adjusted = strict_scores(scores)
    assert len(out) == len(scores)
    single = np.asarray(out, dtype=np.float32)
    assert all(a > b for a, b in itertools.pairwise(out))
    assert bool(np.all(single[1:] < single[:-1]))
    assert adjusted == sum(1 for a, b in zip(scores, out, strict=True) if a != b)
    original = np.asarray(scores, dtype=np.float32)
    if bool(np.all(original[1:] < original[:-1])):
        assert out == scores
        assert adjusted == 0


def test_strict_scores_fall_back_to_ranks_past_single_precision() -> None:
    assert strict_scores([1e300, 1.0]) == ([2.0, 1.0], 2)
    assert strict_scores([]) == ([], 0)


# Random gold and hits: a chunk is relevant in the exported qrels exactly when the report's
# own scoring counts it as touching a quote, so trec_eval's P, success and recip_rank equal
# the report's precision, hit and mrr on every query.
_span = st.tuples(st.sampled_from(DOCS), st.integers(0, 60), st.integers(1, 30)).map(
    lambda t: (t[0], t[1], t[1] + t[2])
)
_quote = st.tuples(st.integers(1, 3), st.lists(_span, max_size=2))


@settings(max_examples=150, deadline=None)
@given(
    gold=st.lists(_quote, min_size=1, max_size=4),
    spans=st.lists(_span, min_size=1, max_size=12, unique=True),
    scores=st.lists(st.sampled_from([3.0, 2.0, 1.0, 0.5]), min_size=12, max_size=12),
    fraction=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_chunk_qrels_agree_with_the_reports_scoring(
    gold: list[tuple[int, list[tuple[str, int, int]]]],
    spans: list[tuple[str, int, int]],
    scores: list[float],
    fraction: float,
) -> None:
    ordered = sorted(scores[: len(spans)], reverse=True)  # ties included
    hits = [
        Hit(doc=d, start=s, end=e, score=x) for (d, s, e), x in zip(spans, ordered, strict=True)
    ]
    # A quote's spans lie in its own document, as the report records them.
    report_gold = [
        {
            "doc": where[0][0] if where else DOCS[0],
            "quote": f"quote {index}",
            "grade": grade,
            "spans": [[s, e] for d, s, e in where if d == (where[0][0] if where else DOCS[0])],
        }
        for index, (grade, where) in enumerate(gold)
    ]
    metrics = ["precision@1", "precision@5", "hit@3", "mrr"]
    items = [
        GoldItem(grade=q["grade"], spans=tuple((q["doc"], s, e) for s, e in q["spans"]))
        for q in report_gold
    ]
    values = score_queries({"q-1": items}, {"q-1": hits}, metrics, min_overlap_fraction=fraction)
    report = _report(
        [{"query_id": "q-1", "query": "q", "gold": report_gold}],
        [
            _stage(
                "bm25",
                [
                    {
                        "query_id": "q-1",
                        "scores": values["q-1"],
                        "hits": [h.model_dump() for h in hits],
                    }
                ],
            )
        ],
        fraction=fraction,
    )
    export = export_stage(report, "bm25")
    assert [doc for doc, _ in trec_ranking(export.run["q-1"])] == [
        chunk_id(h.doc, h.start, h.end) for h in hits
    ]
    result = evaluate_trec(export.qrels, export.run, ["P.1,5", "success.3", "recip_rank"])
    trec = result.per_query["q-1"]
    for ours, theirs in (
        ("precision@1", "P_1"),
        ("precision@5", "P_5"),
        ("hit@3", "success_3"),
        ("mrr", "recip_rank"),
    ):
        assert math.isclose(values["q-1"][ours], trec[theirs], abs_tol=1e-12), (ours, trec)
