"""The report contract: validation, round trip, forward-compatible reading, shipped schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from groundkit.judgments import SCHEMA_VERSION, EvalReport, ReportError, dump_report, load_report
from groundkit.judgments.report import (
    check_report,
    parse_report,
    report_json_schema,
    report_to_json,
)
from groundkit.judgments.report._io import shipped_report_schema


def _report_data() -> dict[str, Any]:
    hit = {"doc": "a.txt", "start": 0, "end": 40, "score": 2.5}
    return {
        "schema_version": SCHEMA_VERSION,
        "run": {
            "created_at": "2026-11-29T00:00:00Z",
            "package_versions": {"groundkit-core-judgments": "0.1.0"},
            "corpus_fingerprint": "c" * 64,
            "judgments_fingerprint": "j" * 64,
            "headline_metrics": ["recall@10"],
        },
        "queries": [
            {
                "query_id": "q-1",
                "query": "what is a?",
                "gold": [{"doc": "a.txt", "quote": "alpha", "spans": [[0, 5]], "method": "exact"}],
            },
            {"query_id": "q-2", "query": "nothing here", "category": "unanswerable"},
        ],
        "stages": [
            {
                "name": "bm25",
                "kind": "bm25",
                "baseline": True,
                "queries": [
                    {
                        "query_id": "q-1",
                        "scores": {"recall@10": 1.0},
                        "hits": [hit],
                        "evidence": [{"gold_index": 0, "first_rank": 1, "doc_indexed": True}],
                    }
                ],
                "aggregates": {
                    "recall@10": {"mean": 1.0, "low": 1.0, "high": 1.0, "query_count": 1}
                },
            },
            {
                "name": "dense",
                "kind": "dense",
                "queries": [{"query_id": "q-1", "scores": {"recall@10": 0.0}, "missing": True}],
                "comparisons": [
                    {
                        "metric": "recall@10",
                        "baseline": "bm25",
                        "candidate": "dense",
                        "effect": -1.0,
                        "low": -1.0,
                        "high": -1.0,
                        "p_value": 0.5,
                        "p_holm": 0.5,
                        "verdict": "inconclusive",
                    }
                ],
            },
        ],
        "notes": ["queries missing from a run score zero"],
    }


def test_valid_report_round_trips(tmp_path: Path) -> None:
    data = _report_data()
    assert check_report(data) == []
    report = parse_report(data)
    assert report.answerable_count == 1
    assert report.unanswerable_count == 1
    assert report.baseline.name == "bm25"
    path = tmp_path / "report.json"
    dump_report(report, path)
    again = load_report(path)
    assert again == report
    assert report_to_json(again) == path.read_text(encoding="utf-8")


def test_duplicate_stage_names_are_listed() -> None:
    data = _report_data()
    data["stages"][1]["name"] = "bm25"
    problems = check_report(data)
    assert any("bm25 repeated" in p for p in problems)


def test_baseline_must_be_first_and_named_bm25() -> None:
    data = _report_data()
    data["stages"].reverse()
    problems = " ".join(check_report(data))
    assert "baseline" in problems


def test_unknown_stage_is_named() -> None:
    report = parse_report(_report_data())
    with pytest.raises(ReportError, match=r"no stage named 'hybrid'.*bm25, dense"):
        report.stage("hybrid")


def test_stage_result_for_unknown_query_is_refused() -> None:
    data = _report_data()
    data["stages"][0]["queries"][0]["query_id"] = "q-2"
    assert any("not an answerable query" in p for p in check_report(data))


def test_non_finite_score_is_refused() -> None:
    data = _report_data()
    data["stages"][0]["queries"][0]["scores"]["recall@10"] = float("nan")
    assert any("non-finite" in p for p in check_report(data))


def test_later_minor_version_is_read_for_known_fields() -> None:
    data = _report_data()
    major, minor = SCHEMA_VERSION.split(".")
    data["schema_version"] = f"{major}.{int(minor) + 7}"
    data["future_top"] = {"x": 1}
    data["run"]["future_run_field"] = "y"
    data["stages"][0]["queries"][0]["hits"][0]["future_hit_field"] = 3
    report = parse_report(copy.deepcopy(data))
    assert report.stages[0].queries[0].hits[0].score == 2.5
    # check_report agrees with the reader: a later minor's fields are no problem...
    assert check_report(copy.deepcopy(data)) == []
    # ...but what is wrong with the known fields still is, in both.
    broken = copy.deepcopy(data)
    broken["stages"][0]["queries"][0]["query_id"] = "q-2"
    assert any("not an answerable query" in p for p in check_report(broken))
    with pytest.raises(ReportError):
        parse_report(broken)
    # Unknown fields are not accepted at this version's own minor number.
    data["schema_version"] = SCHEMA_VERSION
    assert any("future_top" in p for p in check_report(data))


def test_later_major_version_is_refused_with_advice() -> None:
    data = _report_data()
    later = f"{int(SCHEMA_VERSION.split('.')[0]) + 1}.0"
    data["schema_version"] = later
    with pytest.raises(ReportError, match="upgrade groundkit"):
        parse_report(data)
    problems = check_report(data)
    assert len(problems) == 1
    assert later in problems[0]


def test_every_1x_report_still_reads_under_2x() -> None:
    data = _report_data()  # hits and scores inside each query: the 1.x layout
    for version in ("1.0", "1.3"):
        data["schema_version"] = version
        assert parse_report(copy.deepcopy(data)).stages[0].queries[0].hits[0].score == 2.5
    data["schema_version"] = "1.9"  # a later 1.x minor: read for the fields 1.3 knew
    data["future_top"] = {"x": 1}
    assert parse_report(copy.deepcopy(data)).stages[0].queries[0].hits[0].score == 2.5


@pytest.mark.parametrize("version", [None, "1", "one.two", 1.0])
def test_malformed_version_is_refused(version: object) -> None:
    data = _report_data()
    data["schema_version"] = version
    with pytest.raises(ReportError, match="schema_version"):
        parse_report(data)


def test_load_report_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ReportError, match=r"nope\.json"):
        load_report(missing)
    broken = tmp_path / "broken.json"
    broken.write_text("{\n  not json", encoding="utf-8")
    with pytest.raises(ReportError, match=r"broken\.json:2"):
        load_report(broken)


def test_invalid_report_is_not_written(tmp_path: Path) -> None:
    report = parse_report(_report_data())
    broken = report.model_copy(update={"stages": []})
    target = tmp_path / "out.json"
    with pytest.raises(ReportError):
        dump_report(broken, target)
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_shipped_schema_matches_the_models() -> None:
    assert shipped_report_schema() == json.loads(json.dumps(report_json_schema()))


def test_dumped_report_satisfies_the_shipped_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    report = EvalReport.model_validate(_report_data())
    jsonschema.validate(json.loads(report_to_json(report)), shipped_report_schema())
