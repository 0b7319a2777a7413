"""Diagnosis reads a report stage's typed settings (schema 2.1), old reports unchanged."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from groundkit.diagnosis import diagnose, fixes
from groundkit.judgments import EvalReport
from groundkit.judgments.report import parse_report, report_to_json

SPAN = (100, 200)


def _report(helpers: Any, chunker: dict[str, Any], *extra: tuple[str, dict[str, Any]]) -> Any:
    b = helpers.ReportBuilder(depth=20)
    for i in range(10):
        b.query(f"q{i}", helpers.gold(f"d{i}", f"quote {i}", SPAN))
    b.stage("bm25", chunker=chunker, retriever={"k1": 1.2, "b": 0.75})
    b.stage("big", chunker={"kind": "chars", "size": 400, "overlap": 0})
    for name, retriever in extra:  # a stage that failed: only its settings are read
        b.stage(name, "hybrid", retriever=retriever, error="stopped")
        b.no_chunker(name)
    filler = [(f"f{j}", 0, 50) for j in range(20)]
    for i in range(10):
        found = i in (0, 1, 2, 8, 9)
        share = 0.2 if i in (6, 7, 8, 9) else 1.0
        hits = [(f"d{i}", 150, 160), *filler[:19]] if found else filler
        trace = helpers.trace(doc_indexed=True, best_chunk_share=share)
        b.result("bm25", f"q{i}", hits, [trace])
        other = [(f"g{j}", 0, 50) for j in range(5)]
        b.result("big", f"q{i}", [(f"d{i}", 100, 200)] if i == 6 else other)
    return b.build()


def _as_old_file(report: EvalReport, version: str, chunker: dict[str, Any]) -> EvalReport:
    """The report as an older file held it: the bm25 chunker partial, the old version."""
    data = json.loads(report_to_json(report))
    data["schema_version"] = version
    data["stages"][0]["chunker"] = chunker
    return parse_report(data)


def test_an_old_reports_diagnosis_config_hash_is_unchanged(helpers: Any) -> None:
    report = _as_old_file(
        _report(helpers, {"kind": "chars", "size": 200, "overlap": 0}),
        "2.0",
        {"kind": "chars", "size": 300},  # overlap left out: its default, 200
    )
    diagnosis = diagnose(report, "bm25", k=2)
    # The snapshot 2.0 hashed: the stage's settings exactly as the file held them.
    snapshot = {
        "kind": "bm25",
        "retriever": {"k1": 1.2, "b": 0.75},
        "chunker": {"kind": "chars", "size": 300},
        "encoder_max_tokens": None,
    }
    text = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert diagnosis.config.chunker == {"kind": "chars", "size": 300}
    assert diagnosis.config_hash == hashlib.sha256(text.encode("utf-8")).hexdigest()
    # the typed chunker carries the default the run used (overlap 200 on 300-character windows)
    assert report.stages[0].chunker is not None
    assert report.stages[0].chunker.model_dump() == {"kind": "chars", "size": 300, "overlap": 200}


def test_chunk_overlap_reads_the_typed_chunker(helpers: Any) -> None:
    # A partial chunker still offers chunk-overlap (chars has an overlap to turn); a
    # paragraphs chunker does not.
    report = _as_old_file(
        _report(helpers, {"kind": "chars", "size": 200, "overlap": 0}),
        "1.3",
        {"kind": "chars", "size": 300},
    )
    assert "chunk-overlap" in {e.fix for e in diagnose(report, "bm25", k=2).evidence}
    paragraphs = _report(helpers, {"kind": "paragraphs", "max_chars": 500})
    assert "chunk-overlap" not in {e.fix for e in diagnose(paragraphs, "bm25", k=2).evidence}


def test_the_fusion_replay_uses_the_reports_own_hybrid_k(helpers: Any) -> None:
    chunker = {"kind": "chars", "size": 200, "overlap": 0}
    own = _report(helpers, chunker, ("fused", {"stages": ["bm25", "big"], "k": 7}))
    default = _report(helpers, chunker)
    basis = {
        name: next(f.basis for f in fixes(diagnose(r, "bm25", k=2)) if f.name == "hybrid-fusion")
        for name, r in (("own", own), ("default", default))
    }
    assert "reciprocal-rank fusion (k=7) fusing bm25 with big" in basis["own"]
    assert "reciprocal-rank fusion (k=60) fusing bm25 with big" in basis["default"]
