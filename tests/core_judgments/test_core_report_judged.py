"""judged@k (schema 1.3): hand values, the caution, and 1.2 reports still read."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.judgments import StageReport
from groundkit.judgments.report import (
    JUDGED_CAUTION_BELOW,
    NoteCode,
    QueryInfo,
    ReportHit,
    hit_touches_gold,
    judged_at,
    judged_notes,
    parse_report,
)

QUERIES = [
    QueryInfo.model_validate(
        {"query_id": "q1", "query": "a?", "gold": [{"doc": "d", "quote": "x", "spans": [[10, 20]]}]}
    ),
    QueryInfo.model_validate(
        {"query_id": "q2", "query": "b?", "gold": [{"doc": "e", "quote": "y", "spans": [[0, 5]]}]}
    ),
]


def _hit(doc: str, start: int, end: int, grade: int | None = None) -> dict[str, Any]:
    return {"doc": doc, "start": start, "end": end, "score": 1.0, "adjudicated_grade": grade}


def _stage() -> StageReport:
    return StageReport.model_validate(
        {
            "name": "bm25",
            "kind": "bm25",
            "baseline": True,
            "queries": [
                # touches gold, touches nothing, adjudicated, other document
                {"query_id": "q1", "scores": {}, "hits": [
                    _hit("d", 15, 30), _hit("d", 20, 40), _hit("d", 40, 50, 0), _hit("e", 0, 5)
                ]},
                {"query_id": "q2", "scores": {}, "hits": [_hit("e", 4, 9)]},
            ],
        }
    )  # fmt: skip


def test_judged_at_hand_values() -> None:
    shares = judged_at(_stage(), QUERIES, [1, 2, 3, 10])
    # k=1: q1 hit 1 judged, q2 hit 1 judged -> 2/2; k=2: 2/3; k=3: 3/4; k=10: 3/5
    assert shares == {"judged@1": 1.0, "judged@2": 2 / 3, "judged@3": 3 / 4, "judged@10": 3 / 5}
    # covering the whole span is required: [15, 30) holds 5 of [10, 20)'s 10 characters and
    # [4, 9) 1 of [0, 5)'s 5; [20, 40) starts where the half-open span ends
    assert judged_at(_stage(), QUERIES, [2], min_overlap_fraction=1.0) == {"judged@2": 0.0}
    # at document level any hit of a gold document is judged
    assert judged_at(_stage(), QUERIES, [10], level="document") == {"judged@10": 4 / 5}


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["d", "e", "f"]),
                st.integers(0, 40),
                st.integers(1, 20),
                st.none() | st.integers(0, 3),
            ),
            max_size=12,
        ),
        min_size=1,
        max_size=4,
    ),
    st.lists(st.integers(1, 15), max_size=5),
    st.sampled_from(["chunk", "document"]),
    st.sampled_from([0.0, 0.5, 1.0]),
)
def test_judged_at_is_the_share_counted_cutoff_by_cutoff(
    hit_lists: list[list[tuple[str, int, int, int | None]]],
    cutoffs: list[int],
    level: str,
    fraction: float,
) -> None:
    # Each hit is judged once for the deepest cutoff; every cutoff's share is the one its own
    # count over each query's first k hits gives (the definition, counted here directly).
    queries = [q.model_copy(update={"query_id": f"q{i}"}) for i, q in enumerate(QUERIES * 2)]
    stage = StageReport.model_validate(
        {
            "name": "s", "kind": "bm25", "baseline": True,
            "queries": [
                {"query_id": f"q{i}", "scores": {},
                 "hits": [_hit(doc, a, a + n, grade) for doc, a, n, grade in hits]}
                for i, hits in enumerate(hit_lists)
            ],
        }
    )  # fmt: skip
    by_id = {q.query_id: q for q in queries}
    expected = {}
    for k in sorted(set(cutoffs)):
        flags = [
            hit.adjudicated_grade is not None
            or hit_touches_gold(hit, by_id[r.query_id], level=level, min_overlap_fraction=fraction)
            for r in stage.queries
            for hit in r.hits[:k]
        ]
        if flags:
            expected[f"judged@{k}"] = sum(flags) / len(flags)
    got = judged_at(stage, queries, cutoffs, level=level, min_overlap_fraction=fraction)
    assert got == expected


def test_caution_names_stages_below_the_threshold() -> None:
    stage = _stage().model_copy(update={"judged": {"judged@10": JUDGED_CAUTION_BELOW - 0.01}})
    fine = stage.model_copy(update={"name": "other", "judged": {"judged@10": 0.9}})
    notes = judged_notes([stage, fine])
    assert [(n.code, n.level) for n in notes] == [(NoteCode.LOW_JUDGED, "caution")]
    assert "bm25 49%" in notes[0].text
    assert "other" not in notes[0].text
    assert "Unjudged is not irrelevant" in notes[0].text
    assert judged_notes([fine]) == []


REPORT_1_2: dict[str, Any] = {
    "schema_version": "1.2",
    "run": {
        "created_at": "2026-11-29T00:00:00Z",
        "package_versions": {},
        "corpus_fingerprint": "c" * 64,
        "judgments_fingerprint": "j" * 64,
    },
    "queries": [
        {"query_id": "q", "query": "a?", "gold": [{"doc": "a", "quote": "x", "spans": [[0, 5]]}]}
    ],
    "stages": [
        {
            "name": "bm25",
            "kind": "bm25",
            "baseline": True,
            "queries": [
                {
                    "query_id": "q",
                    "scores": {"recall@10": 1.0},
                    "hits": [{"doc": "a", "start": 0, "end": 5, "score": 1.0}],
                }
            ],
        }
    ],
    "note_records": [{"code": "chunk-level", "text": "chunk level"}],
}


def test_a_1_2_report_without_the_new_fields_reads() -> None:
    report = parse_report(copy.deepcopy(REPORT_1_2))
    assert report.stages[0].judged == {}
    assert report.stages[0].adjudicated is None
    assert report.adjudication is None
    assert report.stages[0].queries[0].hits[0] == ReportHit(doc="a", start=0, end=5, score=1.0)
