"""Hostile items files and reports, read by compare, diagnose, report and track-record."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.integration.hostile.conftest import Tally, check_case


def _items_lines(old_run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (old_run / "run.items.jsonl").read_text().splitlines()]


def _dump(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _score(value: Any) -> Callable[[list[dict[str, Any]]], str]:
    def edit(records: list[dict[str, Any]]) -> str:
        row = records[1]
        metric = next(iter(row["scores"]))
        row["scores"][metric] = value
        return _dump(records)

    return edit


ITEMS_CASES: dict[str, tuple[Callable[[list[dict[str, Any]]], str | bytes], list[str]]] = {
    "score 1e308": (_score(1e308), ["b.items.jsonl:2", "outside [0, 1]"]),
    "score -3": (_score(-3), ["b.items.jsonl:2", "outside [0, 1]"]),
    "score 5.0": (_score(5.0), ["b.items.jsonl:2", "outside [0, 1]"]),
    "score string": (_score("0.5"), ["b.items.jsonl:2", "finite number"]),
    "score bool": (_score(True), ["b.items.jsonl:2", "finite number"]),
    "score null": (_score(None), ["b.items.jsonl:2"]),
    "not json": (lambda r: _dump(r) + "{oops\n", ["b.items.jsonl:"]),
    "empty file": (lambda r: "", ["b.items.jsonl"]),
    "binary": (lambda r: b"\x00\x01\x02", ["b.items.jsonl"]),
    "judgments instead": (
        lambda r: '{"query_id": "a", "query": "q", "gold": []}\n',
        ["b.items.jsonl:1"],
    ),
    "row before header": (lambda r: _dump([r[1], r[0], *r[2:]]), ["b.items.jsonl:1"]),
    "duplicate row": (lambda r: _dump([*r, r[1]]), ["b.items.jsonl:"]),
    "nan literal": (
        lambda r: _dump(r).replace('"recall@1": 1.0', '"recall@1": NaN', 1),
        ["b.items.jsonl:"],
    ),
    "lone surrogate": (
        lambda r: _dump(r).replace('"refund-window"', '"refund-window\\ud800"', 1),
        ["b.items.jsonl", "refund-window\\ud800"],
    ),
}


@pytest.fixture
def items_pair(tmp_path: Path, old_run: Path) -> tuple[Path, Path, list[dict[str, Any]]]:
    a = tmp_path / "a.items.jsonl"
    shutil.copy(old_run / "run.items.jsonl", a)
    return a, tmp_path / "b.items.jsonl", _items_lines(old_run)


@pytest.mark.parametrize("case", sorted(ITEMS_CASES))
def test_hostile_items_in_compare(
    case: str, items_pair: tuple[Path, Path, list[dict[str, Any]]], tally: Tally
) -> None:
    a, b, records = items_pair
    edit, places = ITEMS_CASES[case]
    content = edit(records)
    b.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    record = a.with_name("record.jsonl")
    check_case(
        tally,
        "items",
        ["eval", "compare", a, b, "--track-record", record],
        inputs=[a, b],
        outputs=[record],
        place=places,
    )


def _report(old_run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((old_run / "run.json").read_text())
    return data


def _reversed_span(data: dict[str, Any]) -> str:
    data["queries"][0]["gold"][0]["spans"] = [[42, 9]]
    return json.dumps(data)


REPORT_CASES: dict[str, tuple[Callable[[dict[str, Any]], str | bytes], list[str]]] = {
    "reversed gold span": (_reversed_span, ["in.json", "queries.0.gold.0.spans", "[42, 9)"]),
    "not json": (lambda d: "{oops", ["in.json:1", "not JSON", "column"]),
    "truncated": (lambda d: json.dumps(d, indent=1)[:5000], ["in.json:", "not JSON"]),
    "empty": (lambda d: "", ["in.json", "empty"]),
    "array": (lambda d: "[]", ["in.json", "JSON object"]),
    "major version 9": (
        lambda d: json.dumps({**d, "schema_version": "9.0"}),
        ["in.json", "not readable"],
    ),
    "bad version": (
        lambda d: json.dumps({**d, "schema_version": "one"}),
        ["in.json", "schema_version"],
    ),
    "no stages": (
        lambda d: json.dumps({k: v for k, v in d.items() if k != "stages"}),
        ["in.json", "stages"],
    ),
    "judgments instead": (lambda d: '{"query_id": "a", "query": "q", "gold": []}', ["in.json"]),
    "not utf-8": (
        lambda d: json.dumps(d).encode().replace(b'"bm25"', b'"bm\xff25"', 1),
        ["in.json", "UTF-8"],
    ),
    "nan literal": (
        lambda d: json.dumps({**d, "timings": {"load": float("nan")}}),
        ["in.json", "NaN"],
    ),
    "chunker of no kind": (
        lambda d: _chunker(d, {"kind": "semantic", "size": 10}),
        ["in.json", "stages.0.chunker"],
    ),
    "chunker no run used": (
        lambda d: _chunker(d, {"kind": "chars", "size": 100}),
        ["in.json", "overlap (200) must be smaller than size (100)"],
    ),
}


def _chunker(data: dict[str, Any], chunker: Any, version: str = "2.0") -> str:
    data["schema_version"] = version
    data["stages"][0]["chunker"] = chunker
    return json.dumps(data)


READERS = {
    "eval report --html": lambda r, t: ["eval", "report", r, "--html", t / "page.html"],
    "eval diagnose": lambda r, t: ["eval", "diagnose", r, "--track-record", t / "record.jsonl"],
    "eval compare (report)": lambda r, t: ["eval", "compare", r],
    "evalset assess --report": lambda r, t: ["evalset", "assess", t / "j.jsonl", "--report", r],
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("case", sorted(REPORT_CASES))
def test_hostile_reports(
    case: str, reader: str, tmp_path: Path, old_run: Path, tally: Tally
) -> None:
    edit, places = REPORT_CASES[case]
    report = tmp_path / "in.json"
    content = edit(_report(old_run))
    report.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    judgments = tmp_path / "j.jsonl"
    judgments.write_text(
        '{"query_id": "a", "query": "How long?", "gold": [], "category": "unanswerable"}\n'
    )
    check_case(
        tally,
        "reports",
        READERS[reader](report, tmp_path),
        inputs=[report, judgments],
        outputs=[tmp_path / "page.html", tmp_path / "record.jsonl"],
        place=places,
    )


@pytest.mark.parametrize("reader", sorted(READERS))
def test_report_that_is_a_pipe(reader: str, tmp_path: Path, tally: Tally) -> None:
    report = tmp_path / "in.json"
    os.mkfifo(report)
    judgments = tmp_path / "j.jsonl"
    judgments.write_text(
        '{"query_id": "a", "query": "How long?", "gold": [], "category": "unanswerable"}\n'
    )
    check_case(
        tally,
        "reports",
        READERS[reader](report, tmp_path),
        inputs=[judgments],
        outputs=[tmp_path / "page.html", tmp_path / "record.jsonl"],
        place=["in.json"],
    )


@pytest.mark.parametrize(
    ("content", "places"),
    [
        ('{"record": "prediction"}\n{oops\n', []),  # cautions only: readable lines are kept
        (b"\xff\xfe\n", []),
    ],
)
def test_track_record_with_bad_lines_is_read_with_cautions(
    content: str | bytes, places: list[str], tmp_path: Path, tally: Tally
) -> None:
    record = tmp_path / "record.jsonl"
    record.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = check_case(
        tally, "reports", ["eval", "track-record", record], inputs=[record], exit_code=0
    )
    assert "CAUTION" in result.output


@pytest.mark.parametrize("kind", ["fifo", "folder", "missing"])
def test_track_record_that_is_not_a_file(kind: str, tmp_path: Path, tally: Tally) -> None:
    record = tmp_path / "record.jsonl"
    if kind == "fifo":
        os.mkfifo(record)
    elif kind == "folder":
        record.mkdir()
    check_case(tally, "reports", ["eval", "track-record", record], place=["record.jsonl"])


def test_later_minor_report_is_read(tmp_path: Path, old_run: Path, tally: Tally) -> None:
    data = _report(old_run)
    major, _ = data["schema_version"].split(".")
    data["schema_version"] = f"{major}.99"
    data["future_field"] = {"anything": True}
    report = tmp_path / "in.json"
    report.write_text(json.dumps(data))
    check_case(tally, "reports", ["eval", "diagnose", report], inputs=[report], exit_code=0)


# compare asks for a second stage this one-stage run lacks (whatever its chunker)
@pytest.mark.parametrize("reader", sorted(set(READERS) - {"eval compare (report)"}))
def test_an_older_report_with_a_partial_chunker_is_read(
    reader: str, tmp_path: Path, old_run: Path, tally: Tally
) -> None:
    # A 2.0 report whose chunker leaves its defaults out (written by hand or another tool).
    report = tmp_path / "in.json"
    report.write_text(_chunker(_report(old_run), {"kind": "paragraphs"}), encoding="utf-8")
    judgments = tmp_path / "j.jsonl"
    judgments.write_text(
        '{"query_id": "a", "query": "How long?", "gold": [], "category": "unanswerable"}\n'
    )
    check_case(tally, "reports", READERS[reader](report, tmp_path), inputs=[report], exit_code=0)
    if reader == "eval report --html":  # the page shows the settings the run used
        page = (tmp_path / "page.html").read_text(encoding="utf-8")
        assert "<strong>paragraphs</strong> " in page
        assert "max_chars=1000" in page
