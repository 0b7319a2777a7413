"""The track record: hashing, atomic appends, corrupt lines, matching, inference, summary."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from groundkit.diagnosis import (
    DiagnosisError,
    Prediction,
    append_record_line,
    diagnose,
    fixes,
    infer_applied_fix,
    items_hash,
    read_track_record,
    record_measurement,
    record_prediction,
    summarise_track_record,
)
from groundkit.judgments import EvalReport
from groundkit.stats import compare_items

SPAN = (100, 200)
K = 2


def _report(helpers: Any) -> EvalReport:
    """Twelve queries; bm25 finds 4 at rank 1, 4 more at ranks 3-5, misses 4 entirely."""
    b = helpers.ReportBuilder(depth=20, metrics=["recall@2", "recall@10", "ndcg@10"])
    for i in range(12):
        b.query(f"q{i:02d}", helpers.gold(f"d{i}", f"quote {i}", SPAN))
    b.stage("bm25", chunker={"kind": "chars", "size": 200, "overlap": 0})
    fill = helpers.fillers(10)
    for i in range(12):
        hit = (f"d{i}", 120, 140)
        if i < 4:
            hits = [hit, *fill]
        elif i < 8:
            hits = [*fill[: i - 2], hit]
        else:
            hits = fill
        share = 0.3 if i >= 10 else 1.0
        b.result(
            "bm25", f"q{i:02d}", hits, [helpers.trace(doc_indexed=True, best_chunk_share=share)]
        )
    return b.build()


def _rows(report: EvalReport, stage: str = "bm25") -> dict[str, dict[str, float]]:
    return {r.query_id: dict(r.scores) for r in report.stage(stage).queries}


def _improved(rows: dict[str, dict[str, float]], ids: list[str]) -> dict[str, dict[str, float]]:
    out = {q: dict(row) for q, row in rows.items()}
    for q in ids:
        out[q]["recall@2"] = 1.0
    return out


def test_items_hash_is_canonical() -> None:
    a = items_hash({"b": 1, "a": 0.5}, "recall@10")
    assert a == items_hash({"a": 0.5, "b": 1.0}, "recall@10")
    assert a != items_hash({"a": 0.5, "b": 1.0}, "recall@20")
    assert a != items_hash({"a": 0.5, "b": 0.0}, "recall@10")
    with pytest.raises(DiagnosisError, match="not finite"):
        items_hash({"a": float("nan")}, "recall@10")
    with pytest.raises(DiagnosisError, match="not a number"):
        items_hash({"a": True}, "recall@10")  # type: ignore[dict-item]


def test_report_and_items_rows_hash_equally(helpers: Any) -> None:
    report = _report(helpers)
    diagnosis = diagnose(report, k=K)
    rows = json.loads(json.dumps(_rows(report)))  # as an items file would give them back
    assert diagnosis.items_hash == items_hash(
        {q: row["recall@2"] for q, row in rows.items()}, "recall@2"
    )


def test_prediction_round_trip(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "sub" / "record.jsonl"
    record.parent.mkdir()
    diagnosis = diagnose(_report(helpers), k=K)
    prediction = record_prediction(record, diagnosis, created_at="2024-05-01T00:00:00+00:00")
    text = record.read_text("utf-8")
    assert text.endswith("\n")
    assert text.count("\n") == 1
    read = read_track_record(record)
    assert read.predictions == [prediction]
    assert read.cautions == []
    assert [f.name for f in prediction.fixes] == [f.name for f in fixes(diagnosis)]
    assert prediction.fix("raise-k") is not None
    assert prediction.fix("raise-k").new_k == 10  # type: ignore[union-attr]


def test_corrupt_lines_are_reported_with_their_numbers(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    diagnosis = diagnose(_report(helpers), k=K)
    record_prediction(record, diagnosis)
    with record.open("ab") as handle:
        handle.write(b"{not json}\n")
        handle.write(b'{"record": "prediction", "id": "x"}\n')
        handle.write(b"\n")
        handle.write(b"\xff\xfe\n")
        handle.write(b'{"record": "measurement"')  # cut mid-line, no newline
    record_prediction(record, diagnosis)  # starts on a fresh line
    read = read_track_record(record)
    assert len(read.predictions) == 2
    assert [(c.line, c.reason.split(" ")[0]) for c in read.cautions] == [
        (2, "not"),
        (3, "not"),
        (5, "not"),
        (6, "not"),
    ]
    assert "not JSON" in read.cautions[0].reason
    assert "not a valid track-record line" in read.cautions[1].reason
    assert read.cautions[2].reason == "not UTF-8"
    assert read.cautions[3].message.startswith(f"CAUTION: {record}:6: not JSON")
    assert read.cautions[3].message.endswith("; line skipped")


def test_missing_record(tmp_path: Path) -> None:
    with pytest.raises(DiagnosisError, match="track record not found"):
        read_track_record(tmp_path / "none.jsonl")
    assert read_track_record(tmp_path / "none.jsonl", missing_ok=True).predictions == []


def test_concurrent_appends_never_interleave(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    prediction = record_prediction(record, diagnose(_report(helpers), k=K))
    record.unlink()

    def writer() -> None:
        for _ in range(15):
            append_record_line(record, prediction)

    threads = [threading.Thread(target=writer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    read = read_track_record(record)
    assert read.cautions == []
    assert len(read.predictions) == 90


def test_named_measurement_is_recorded(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    report = _report(helpers)
    prediction = record_prediction(record, diagnose(report, k=K))
    rows_a = _rows(report)
    rows_b = _improved(rows_a, ["q04", "q05", "q06"])
    outcome = record_measurement(
        record,
        rows_a,
        rows_b,
        None,
        applied="rerank",
        path_a="a.items.jsonl",
        path_b="b.items.jsonl",
        stage_a="bm25",
        stage_b="bm25",
        created_at="2024-05-02T00:00:00+00:00",
    )
    assert outcome.status == "recorded", outcome.message
    m = outcome.measurement
    assert m is not None
    expected = compare_items(
        {q: r["recall@2"] for q, r in rows_a.items()},
        {q: r["recall@2"] for q, r in rows_b.items()},
        metric="recall@2",
    )
    assert m.measured == pytest.approx(3 / 12)
    assert (m.low, m.high, m.verdict) == (
        expected.confidence_interval_low,
        expected.confidence_interval_high,
        expected.verdict,
    )
    assert m.prediction_id == prediction.id
    assert m.how == "named"
    assert m.predicted == prediction.fix("rerank")
    assert "rerank (named): B measured +0.250" in outcome.message
    assert read_track_record(record).measurements == [m]


def test_comparison_on_the_same_metric_is_reused(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    report = _report(helpers)
    record_prediction(record, diagnose(report, k=K))
    rows_a = _rows(report)
    rows_b = _improved(rows_a, ["q04"])
    given = compare_items(rows_a, rows_b, metric="recall@2", resamples=300, seed=4)
    outcome = record_measurement(record, rows_a, rows_b, given, applied="rerank")
    assert outcome.measurement is not None
    assert outcome.measurement.low == given.confidence_interval_low
    other = compare_items(rows_a, rows_b, metric="ndcg@10", resamples=300, seed=4)
    outcome = record_measurement(record, rows_a, rows_b, other, applied="rerank")
    assert outcome.measurement is not None
    assert outcome.measurement.a.metric == "recall@2"  # recomputed on the prediction's metric


def test_raise_k_is_measured_at_the_raised_cutoff(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    report = _report(helpers)
    record_prediction(record, diagnose(report, k=K))
    rows = _rows(report)
    outcome = record_measurement(record, rows, rows, None, applied="raise-k")
    m = outcome.measurement
    assert m is not None
    assert (m.a.metric, m.b.metric) == ("recall@2", "recall@10")
    assert m.measured == pytest.approx(4 / 12)
    assert m.predicted.expected == pytest.approx(4 / 12)  # exact replay, measured the same
    assert m.inside


def test_unmatched_unpredicted_and_undetermined(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    report = _report(helpers)
    rows = _rows(report)
    outcome = record_measurement(record, rows, rows, None, applied="rerank")
    assert outcome.status == "no-prediction"
    assert not record.exists()
    record_prediction(record, diagnose(report, k=K))
    other = _improved(rows, ["q11"])
    assert record_measurement(record, other, rows, None, applied="rerank").status == "no-prediction"
    assert record_measurement(record, rows, rows, None).status == "undetermined"
    config_a = {"name": "bm25", "retriever": {"kind": "bm25", "k1": 1.5}, "chunker": None}
    config_b = {"name": "bm25", "retriever": {"kind": "bm25", "k1": 0.9}, "chunker": None}
    outcome = record_measurement(record, rows, rows, None, config_a=config_a, config_b=config_b)
    assert outcome.status == "undetermined"
    assert "retriever.k1" in outcome.message
    with pytest.raises(DiagnosisError, match="unknown fix 'bigger'"):
        record_measurement(record, rows, rows, None, applied="bigger")
    assert read_track_record(record).measurements == []


def test_fix_not_predicted_for_the_stage(helpers: Any, tmp_path: Path) -> None:
    b = helpers.ReportBuilder()
    b.query("q1", helpers.gold("d1", "quote", SPAN))
    b.query("q2", helpers.gold("d2", "quote", SPAN))
    b.stage("bm25", chunker={"kind": "paragraphs", "max_chars": 500})
    b.result("bm25", "q1", [("d1", 100, 200)])
    b.result("bm25", "q2", [])
    report = b.build()
    record = tmp_path / "record.jsonl"
    record_prediction(record, diagnose(report, k=K))
    rows = _rows(report)
    # a paragraphs chunker has no overlap: chunk-overlap is never predicted for it
    outcome = record_measurement(record, rows, rows, None, applied="chunk-overlap")
    assert outcome.status == "not-predicted"


def test_inferred_chunk_overlap(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    report = _report(helpers)
    record_prediction(record, diagnose(report, k=K))
    rows_a = _rows(report)
    rows_b = _improved(rows_a, ["q10"])
    chunker = {"kind": "chars", "size": 200, "overlap": 0}
    config_a = {"name": "bm25", "retriever": {"kind": "bm25"}, "chunker": chunker}
    config_b = {
        "name": "bm25-o",
        "retriever": {"kind": "bm25"},
        "chunker": {**chunker, "overlap": 100},
    }
    outcome = record_measurement(
        record, rows_a, rows_b, None, config_a=config_a, config_b=config_b, stage_a="bm25"
    )
    assert outcome.status == "recorded", outcome.message
    assert outcome.measurement is not None
    assert outcome.measurement.fix == "chunk-overlap"
    assert outcome.measurement.how == "inferred"
    assert outcome.measurement.b.config == config_b


def test_infer_applied_fix_rules() -> None:
    every = [
        "chunk-overlap",
        "larger-chunks",
        "smaller-chunks",
        "hybrid-fusion",
        "dense",
        "rerank",
    ]

    def config(kind: str = "bm25", **chunker: Any) -> dict[str, Any]:
        return {
            "name": "s",
            "retriever": {"kind": kind},
            "chunker": {"kind": "chars", "size": 400, "overlap": 50, **chunker},
        }

    assert infer_applied_fix(config(), config(size=800), every) == ["larger-chunks"]
    assert infer_applied_fix(config(), config(size=800, overlap=100), every) == ["larger-chunks"]
    assert infer_applied_fix(config(), config(size=200), every) == ["smaller-chunks"]
    assert infer_applied_fix(config(), config(overlap=100), every) == ["chunk-overlap"]
    assert infer_applied_fix(config(), config(overlap=10), every) == []
    assert infer_applied_fix(config(), config("dense"), every) == ["dense"]
    assert infer_applied_fix(config(), config("dense", size=800), every) == []
    assert infer_applied_fix(config(), config(), every) == []
    assert infer_applied_fix(config(), config(size=800), ["rerank"]) == []
    hybrid = {
        "name": "h",
        "retriever": {"kind": "hybrid", "stages": ["s", "d"], "k": 60},
        "chunker": None,
    }
    assert infer_applied_fix(config(), hybrid, every, stage_a="s") == ["hybrid-fusion"]
    assert infer_applied_fix(config(), hybrid, every, stage_a="x") == []


def test_summary_pairs_predictions_and_measurements(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    report = _report(helpers)
    prediction = record_prediction(record, diagnose(report, k=K))
    rows = _rows(report)
    record_measurement(record, rows, rows, None, applied="raise-k", stage_a="bm25", stage_b="k10")
    record_measurement(record, rows, _improved(rows, ["q04"]), None, applied="rerank")
    with record.open("a", encoding="utf-8") as handle:
        handle.write("oops\n")
    summary = summarise_track_record(read_track_record(record))
    assert summary.tried == 2
    assert summary.predictions == 1
    assert [row.fix for row in summary.rows] == ["raise-k", "rerank"]
    raise_row, rerank_row = summary.rows
    assert raise_row.error == pytest.approx(0.0, abs=1e-12)
    assert raise_row.stage == "bm25"
    assert raise_row.metric == "recall@10 − recall@2"
    rerank_expected = prediction.fix("rerank").expected  # type: ignore[union-attr]
    assert rerank_row.error == pytest.approx(1 / 12 - rerank_expected)
    positive = [f for f in prediction.fixes if f.expected is not None and f.expected > 0]
    assert summary.predicted_fixes == len(positive)
    assert summary.untried == len(positive) - 2
    assert summary.mean_absolute_error == pytest.approx(abs(1 / 12 - rerank_expected) / 2)
    assert [c.line for c in summary.cautions] == [4]
    assert isinstance(Prediction.model_validate(prediction.model_dump()), Prediction)


def _fusion_report(helpers: Any) -> EvalReport:
    """bm25 finds 2 of 6 queries at rank 1, dense 4 (the best partner), big 3."""
    b = helpers.ReportBuilder(depth=20, metrics=["recall@2", "recall@10"])
    for i in range(6):
        b.query(f"q{i}", helpers.gold(f"d{i}", f"quote {i}", SPAN))
    b.stage("bm25", chunker={"kind": "chars", "size": 200, "overlap": 0})
    b.stage("dense", "dense", chunker={"kind": "chars", "size": 200, "overlap": 0})
    b.stage("big", chunker={"kind": "chars", "size": 400, "overlap": 0})
    fill = helpers.fillers(5)
    for stage, found in (("bm25", 2), ("dense", 4), ("big", 3)):
        for i in range(6):
            hits = [(f"d{i}", 100, 200), *fill] if i < found else fill
            b.result(stage, f"q{i}", hits)
    report: EvalReport = b.build()
    return report


def _stage_config(name: str, kind: str = "bm25") -> dict[str, Any]:
    return {
        "name": name,
        "retriever": {"kind": kind},
        "chunker": {"kind": "chars", "size": 200, "overlap": 0},
    }


def _hybrid_config(*stages: str) -> dict[str, Any]:
    return {
        "name": "h",
        "retriever": {"kind": "hybrid", "stages": list(stages), "k": 60},
        "chunker": None,
    }


def test_prediction_names_the_fusion_partner(helpers: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    diagnosis = diagnose(_fusion_report(helpers), "bm25", k=K)
    ranked = {f.name: f for f in fixes(diagnosis)}
    assert "fusing bm25 with dense" in ranked["hybrid-fusion"].basis
    prediction = record_prediction(record, diagnosis)
    predicted = prediction.fix("hybrid-fusion")
    assert predicted is not None
    assert predicted.partner == "dense"
    assert "fusing bm25 with dense" in predicted.basis
    assert prediction.fix("raise-k").partner is None  # type: ignore[union-attr]
    assert read_track_record(record).predictions == [prediction]
    # a line written before the partner was recorded still loads, without one
    line = json.loads(record.read_text("utf-8"))
    for fix in line["fixes"]:
        del fix["partner"]
    older = tmp_path / "older.jsonl"
    older.write_text(json.dumps(line) + "\n", encoding="utf-8")
    read = read_track_record(older)
    assert read.cautions == []
    assert read.predictions[0].fix("hybrid-fusion").partner is None  # type: ignore[union-attr]


def test_infer_hybrid_fusion_needs_the_predicted_partner() -> None:
    a = _stage_config("bm25")
    every = ["hybrid-fusion", "rerank"]
    assert infer_applied_fix(
        a, _hybrid_config("bm25", "dense"), every, stage_a="bm25", partner="dense"
    ) == ["hybrid-fusion"]
    assert infer_applied_fix(
        a, _hybrid_config("dense", "bm25"), every, stage_a="bm25", partner="dense"
    ) == ["hybrid-fusion"]
    assert (
        infer_applied_fix(a, _hybrid_config("bm25", "big"), every, stage_a="bm25", partner="dense")
        == []
    )
    assert (
        infer_applied_fix(
            a, _hybrid_config("bm25", "dense", "big"), every, stage_a="bm25", partner="dense"
        )
        == []
    )
    # without a recorded partner (older predictions) any hybrid fusing A's stage fits
    assert infer_applied_fix(a, _hybrid_config("bm25", "big"), every, stage_a="bm25") == [
        "hybrid-fusion"
    ]


def test_measurement_of_a_fusion_with_another_partner_is_refused(
    helpers: Any, tmp_path: Path
) -> None:
    record = tmp_path / "record.jsonl"
    report = _fusion_report(helpers)
    prediction = record_prediction(record, diagnose(report, "bm25", k=K))
    rows_a = _rows(report, "bm25")
    rows_b = _improved(rows_a, ["q2", "q3"])
    config_a = _stage_config("bm25")
    wrong = _hybrid_config("bm25", "big")
    for applied in (None, "hybrid-fusion"):
        outcome = record_measurement(
            record, rows_a, rows_b, None, applied=applied,
            stage_a="bm25", stage_b="h", config_a=config_a, config_b=wrong,
        )  # fmt: skip
        assert outcome.status == "not-predicted", outcome.message
        assert "not the predicted fix" in outcome.message
        assert "fuses bm25, big" in outcome.message
        assert "fusing bm25 with dense" in outcome.message
    assert read_track_record(record).measurements == []
    right = _hybrid_config("dense", "bm25")
    outcome = record_measurement(
        record, rows_a, rows_b, None, stage_a="bm25", stage_b="h", config_a=config_a, config_b=right
    )
    assert outcome.status == "recorded", outcome.message
    m = outcome.measurement
    assert m is not None
    assert (m.fix, m.how) == ("hybrid-fusion", "inferred")
    assert m.predicted == prediction.fix("hybrid-fusion")
    assert m.predicted.partner == "dense"
    assert "fusing bm25 with dense" in outcome.message
    assert m.measured == pytest.approx(2 / 6)
