"""Schema 1.4: a stage's hits and scores written as columns, read back exactly; 1.3 still reads."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.judgments import (
    SCHEMA_VERSION,
    EvalReport,
    QueryResult,
    ReportError,
    StageReport,
    dump_report,
    load_report,
)
from groundkit.judgments.report import (
    GoldEvidence,
    QueryInfo,
    ReportHit,
    RunInfo,
    check_report,
    parse_report,
    report_to_json,
)

METRICS = ("recall@10", "ndcg@10", "mrr")


def _run() -> RunInfo:
    return RunInfo(
        created_at="2026-12-01T00:00:00Z",
        package_versions={"groundkit-core-judgments": "0.1.0"},
        corpus_fingerprint="c" * 64,
        judgments_fingerprint="j" * 64,
    )


def _report(
    hits: list[list[ReportHit]], scores: list[dict[str, float]] | None = None
) -> EvalReport:
    ids = [f"q{i}" for i in range(len(hits))]
    rows = scores or [dict.fromkeys(METRICS, 0.5) for _ in ids]
    queries = [
        QueryInfo(query_id=q, query=f"question {q}", gold=[GoldEvidence(doc="d0", quote="x")])
        for q in ids
    ]
    results = [
        QueryResult(query_id=q, scores=row, hits=found)
        for q, row, found in zip(ids, rows, hits, strict=True)
    ]
    stage = StageReport(name="bm25", kind="bm25", baseline=True, queries=results)
    return EvalReport(run=_run(), queries=queries, stages=[stage])


def _hits(
    rng: np.random.Generator, queries: int, depth: int, *, f32: bool
) -> list[list[ReportHit]]:
    out = []
    for _ in range(queries):
        scores = np.sort(rng.random(depth))[::-1]
        if f32:
            scores = scores.astype(np.float32).astype(np.float64)
        out.append(
            [
                ReportHit(
                    doc=f"d{int(rng.integers(20))}",
                    start=int(start),
                    end=int(start) + 100,
                    score=float(score),
                    duplicate_of=1 if rank == 3 else None,
                    adjudicated_grade=2 if rank == 5 else None,
                )
                for rank, (start, score) in enumerate(
                    zip(rng.integers(0, 5000, depth), scores, strict=True), start=1
                )
            ]
        )
    return out


def _old_text(report: EvalReport, version: str = "1.3") -> str:
    """The report as groundkit wrote it before 1.4: one object per hit, indented."""
    data = json.loads(report.model_dump_json())
    data["schema_version"] = version
    for stage in data["stages"]:
        del stage["hit_columns"], stage["score_columns"]
    return json.dumps(data, indent=1)


@pytest.mark.parametrize("f32", [True, False])
def test_columns_round_trip_every_hit_exactly(f32: bool) -> None:
    report = _report(_hits(np.random.default_rng(7), 30, 40, f32=f32))
    text = report_to_json(report)
    stage = json.loads(text)["stages"][0]
    assert stage["hit_columns"]["score"]["dtype"] == ("<f4" if f32 else "<f8")
    assert stage["hit_columns"]["chunk"]["dtype"] == "<u2"
    assert all("hits" not in q and "scores" not in q for q in stage["queries"])
    again = EvalReport.model_validate_json(text)
    assert again == report
    assert again.stages[0].hit_columns is None
    assert [h.score for h in again.stages[0].queries[3].hits] == [
        h.score for h in report.stages[0].queries[3].hits
    ]
    assert report_to_json(again) == text


def test_one_score_off_float32_keeps_every_score_as_float64() -> None:
    hits = _hits(np.random.default_rng(1), 3, 5, f32=True)
    hits[2][4] = hits[2][4].model_copy(update={"score": 0.1})  # 0.1 is no float32
    text = report_to_json(_report(hits))
    assert json.loads(text)["stages"][0]["hit_columns"]["score"]["dtype"] == "<f8"
    assert EvalReport.model_validate_json(text).stages[0].queries[2].hits[4].score == 0.1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["a", "b", "é/ü"]),
                st.integers(0, 10**9),
                st.floats(allow_nan=False, allow_infinity=False),
                st.none() | st.integers(1, 50),
            ),
            max_size=6,
        ),
        min_size=1,
        max_size=5,
    )
)
def test_any_hits_survive_the_columns(raw: list[list[tuple[str, int, float, int | None]]]) -> None:
    hits = [
        [ReportHit(doc=d, start=s, end=s + 1, score=x, duplicate_of=dup) for d, s, x, dup in q]
        for q in raw
    ]
    report = _report(hits)
    assert EvalReport.model_validate_json(report_to_json(report)) == report


def test_many_chunks_use_32_bit_indices() -> None:
    hits = [[ReportHit(doc="d", start=i, end=i + 1, score=1.0) for i in range(70_000)]]
    text = report_to_json(_report(hits))
    assert json.loads(text)["stages"][0]["hit_columns"]["chunk"]["dtype"] == "<u4"
    assert EvalReport.model_validate_json(text).stages[0].queries[0].hits[-1].start == 69_999


def test_queries_with_different_metrics_keep_their_scores_per_query() -> None:
    hits: list[list[ReportHit]] = [[], []]
    scores = [{"recall@10": 1.0, "mrr": 0.5}, {"mrr": 0.25, "recall@10": 0.0}]
    report = _report(hits, scores)
    stage = json.loads(report_to_json(report))["stages"][0]
    assert "score_columns" not in stage or stage["score_columns"] is None
    assert [q["scores"] for q in stage["queries"]] == scores
    assert EvalReport.model_validate_json(report_to_json(report)) == report


@pytest.mark.parametrize("version", ["1.0", "1.1", "1.2", "1.3"])
def test_a_report_written_before_columns_still_reads(tmp_path: Path, version: str) -> None:
    report = _report(_hits(np.random.default_rng(3), 5, 8, f32=False))
    path = tmp_path / "old.json"
    path.write_text(_old_text(report, version), encoding="utf-8")
    found = load_report(path)
    assert found.stages[0].queries == report.stages[0].queries
    dump_report(found, tmp_path / "new.json")  # rewritten as 1.4, the same results
    again = load_report(tmp_path / "new.json")
    assert again.schema_version == SCHEMA_VERSION == "2.4"  # 2.3: a repeated quote counts once
    assert again.stages == found.stages


def test_columns_are_a_fraction_of_one_object_per_hit() -> None:
    report = _report(_hits(np.random.default_rng(5), 100, 100, f32=True))
    old, new = len(_old_text(report)), len(report_to_json(report))
    assert new * 5 < old, (new, old)


def _columns_data() -> dict[str, Any]:
    report = _report(_hits(np.random.default_rng(2), 3, 4, f32=True))
    data: dict[str, Any] = json.loads(report_to_json(report))
    return data


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["hit_columns"].update(counts=[4, 4]), "counts has 2 entries for 3"),
        (lambda c: c["hit_columns"].update(counts=[4, 4, 3]), "disagree on the number of hits"),
        (lambda c: c["hit_columns"].update(chunk_start=[0]), "not in the chunk lists"),
        (lambda c: c["hit_columns"].update(docs=[]), "not in docs"),
        (lambda c: c["hit_columns"]["score"].update(data="not base64!"), "hit_columns"),
        (lambda c: c["hit_columns"]["score"].update(dtype="<i8"), "dtype"),
        (lambda c: c["score_columns"]["values"].pop(), "2 rows for 3 queries"),
        (lambda c: c["score_columns"]["values"][0].pop(), "one value per metric"),
    ],
)
def test_broken_columns_are_refused_with_a_message(edit: Any, message: str) -> None:
    data = _columns_data()
    edit(data["stages"][0])
    problems = check_report(data)
    assert problems
    assert any(message in p for p in problems), problems
    with pytest.raises(ReportError):
        parse_report(data)


def test_packed_bytes_are_little_endian_float32() -> None:
    data = _columns_data()
    packed = data["stages"][0]["hit_columns"]["score"]
    values = np.frombuffer(base64.b64decode(packed["data"]), dtype="<f4")
    report = parse_report(data)
    assert values.astype(float).tolist() == [
        h.score for q in report.stages[0].queries for h in q.hits
    ]
