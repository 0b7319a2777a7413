"""Schema 2.1: a stage's chunker typed by ChunkerConfig, its retriever a RetrieverRecord.

Older reports (1.x, 2.0) hold the chunker as whatever mapping was written, possibly partial:
they still read, the typed chunker gets the model's defaults, and what the report recorded
(and every hash over it) is unchanged. A new run's file keeps the 2.0 shape.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.core_judgments.test_core_report import _report_data

from groundkit.judgments import (
    SCHEMA_VERSION,
    CharsChunker,
    ParagraphsChunker,
    ReportError,
    StageReport,
    config_hash,
    dump_report,
    load_report,
)
from groundkit.judgments.report import RetrieverRecord, parse_report, report_to_json

# What a report written by hand or by another tool may hold: a partial chunker (the defaults
# of the time left out: overlap 200) and settings beside the kind.
_PARTIAL_CHUNKER = {"kind": "chars", "size": 500}
_SETTINGS = {"k1": 1.2, "b": 0.75, "device_used": "cpu"}

# sha256 of the canonical JSON of {"name": "bm25", "retriever": {"kind": "bm25", **_SETTINGS},
# "chunker": _PARTIAL_CHUNKER}, computed once when 2.0 was current: an old report's stage
# hash must stay this value whatever the reader does with the chunker.
_OLD_STAGE_HASH = "3c36a0eb61d3c734478fbbf2a4aab4ee1beff637618b2ca8637b89a77aab31dc"


def _old_report(version: str, chunker: Any = _PARTIAL_CHUNKER) -> dict[str, Any]:
    data = _report_data()  # the 1.x layout: hits and scores inside each query
    data["schema_version"] = version
    baseline = {**data["stages"][0], "retriever": dict(_SETTINGS), "chunker": chunker}
    data["stages"] = [baseline]
    return data


def _independent_hash(config: Any) -> str:
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("version", ["1.0", "1.3", "2.0", "2.1", "2.2"])
def test_an_older_partial_chunker_reads_typed_with_the_defaults(version: str) -> None:
    stage = parse_report(_old_report(version)).stages[0]
    assert stage.chunker == CharsChunker(size=500, overlap=200)
    assert isinstance(stage.chunker, CharsChunker)
    assert stage.chunker.overlap == 200  # the default the run used
    assert stage.chunker_record == _PARTIAL_CHUNKER  # what the file said, no more


@pytest.mark.parametrize("version", ["1.0", "1.3", "2.0"])
def test_an_old_reports_stage_hash_is_unchanged(version: str) -> None:
    stage = parse_report(_old_report(version)).stages[0]
    recorded = {
        "name": "bm25",
        "retriever": {"kind": "bm25", **_SETTINGS},
        "chunker": _PARTIAL_CHUNKER,
    }
    assert stage.config_record() == recorded
    assert config_hash(stage.config_record()) == _independent_hash(recorded) == _OLD_STAGE_HASH


def test_rewriting_an_old_report_keeps_what_it_recorded(tmp_path: Path) -> None:
    source = tmp_path / "old.json"
    source.write_text(json.dumps(_old_report("2.0")), encoding="utf-8")
    before = source.read_bytes()
    target = tmp_path / "new.json"
    dump_report(load_report(source), target)
    assert source.read_bytes() == before
    written = json.loads(target.read_text(encoding="utf-8"))
    assert written["schema_version"] == SCHEMA_VERSION == "2.4"  # 2.3: a repeated quote counts once
    assert written["stages"][0]["chunker"] == _PARTIAL_CHUNKER
    assert written["stages"][0]["retriever"] == _SETTINGS
    again = load_report(target).stages[0]
    assert config_hash(again.config_record()) == _OLD_STAGE_HASH


def test_a_new_stage_is_written_in_full_in_the_2_0_shape() -> None:
    # The harness gives the config object: it is recorded with every field, as 2.0 wrote it.
    typed = StageReport(
        name="bm25",
        kind="bm25",
        baseline=True,
        chunker=CharsChunker(size=500),
        retriever=RetrieverRecord.from_settings(CharsChunker(size=300), device_used="cpu"),
    )
    data = typed.model_dump(mode="json")
    assert data["chunker"] == {"kind": "chars", "size": 500, "overlap": 200}
    assert list(data["chunker"]) == ["kind", "size", "overlap"]  # 2.0's key order
    assert data["retriever"] == {"size": 300, "overlap": 200, "device_used": "cpu"}
    assert typed.chunker_record == data["chunker"]
    # a 2.0 stage given the same settings as plain mappings writes the same bytes
    plain = StageReport(
        name="bm25",
        kind="bm25",
        baseline=True,
        chunker={"kind": "chars", "size": 500, "overlap": 200},
        retriever={"size": 300, "overlap": 200, "device_used": "cpu"},
    )
    assert plain.model_dump_json() == typed.model_dump_json()


def test_a_new_report_round_trips_to_the_same_text() -> None:
    data = _old_report(SCHEMA_VERSION, {"kind": "paragraphs", "max_chars": 1000})
    report = parse_report(data)
    text = report_to_json(report)
    assert report_to_json(parse_report(json.loads(text))) == text
    assert report.stages[0].chunker == ParagraphsChunker()


def test_no_chunker_stays_none_and_is_left_out_of_a_sparse_dump() -> None:
    stage = StageReport(name="own", kind="predictions")
    assert stage.chunker is None
    assert stage.chunker_record is None
    assert stage.config_record()["chunker"] is None
    assert stage.model_dump(mode="json", exclude_defaults=True) == {
        "name": "own",
        "kind": "predictions",
    }


@pytest.mark.parametrize(
    ("chunker", "expected"),
    [
        ({"kind": "semantic"}, r"stages\.0\.chunker"),
        ({"kind": "chars", "size": 500, "windw": 3}, r"windw"),
        # partial, and the defaults make it impossible: no run can have used it
        ({"kind": "chars", "size": 100}, r"overlap \(200\) must be smaller than size \(100\)"),
        ("chars:500", r"stages\.0\.chunker"),
    ],
)
def test_a_chunker_no_run_can_have_used_is_refused_naming_it(
    tmp_path: Path, chunker: Any, expected: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_old_report("2.0", chunker)), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(ReportError, match=expected) as caught:
        load_report(path)
    assert "\n" not in str(caught.value)
    assert "bad.json" in str(caught.value)
    assert path.read_bytes() == before


def test_the_retriever_record_is_a_read_only_mapping_of_json_values() -> None:
    record = RetrieverRecord({"stages": ["bm25", "dense"], "k": 60, "nested": {"a": None}})
    assert record["k"] == 60
    assert record.get("missing") is None
    assert record.get("x", 1) == 1
    assert list(record) == ["stages", "k", "nested"]
    assert len(record) == 3
    assert "k" in record
    assert record == {"stages": ["bm25", "dense"], "k": 60, "nested": {"a": None}}
    assert record != {"k": 60}
    assert {"kind": "hybrid", **record}["stages"] == ["bm25", "dense"]
    copied = record.as_dict()
    copied["k"] = 1
    assert record["k"] == 60  # a copy: the record is not changed through it
    with pytest.raises(ValidationError):
        record.root = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(record)
    with pytest.raises(ValidationError):
        RetrieverRecord({"path": Path("x")})  # not a JSON value: it would not survive the file
    with pytest.raises(ValidationError):
        StageReport(name="s", kind="bm25", retriever={"device": object()})


def test_from_settings_leaves_the_kind_to_the_stage() -> None:
    record = RetrieverRecord.from_settings(ParagraphsChunker(max_chars=10), executor="local")
    assert record == {"max_chars": 10, "executor": "local"}


def test_version_2_0_and_2_1_read_and_a_later_minor_drops_what_it_adds() -> None:
    for version in ("2.0", "2.1"):
        assert parse_report(_old_report(version)).stages[0].chunker_record == _PARTIAL_CHUNKER
    later = _old_report("2.9")
    later["stages"][0]["future"] = 1
    assert parse_report(copy.deepcopy(later)).stages[0].chunker == CharsChunker(size=500)
    with pytest.raises(ReportError, match="upgrade groundkit"):
        parse_report(_old_report("3.0"))
