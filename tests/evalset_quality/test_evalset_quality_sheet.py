"""Sheets for people: equal draws per stratum, CSV/JSONL round trips, precision by hand."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from groundkit.evalset import EvalSetError, draw_sheet, read_sheet, sheet_precision
from groundkit.evalset.review import SheetCandidate, SheetMark, sheet_csv, sheet_jsonl
from groundkit.stats import stratified_wilson_interval, wilson_interval


def _candidates(sizes: dict[str, int]) -> list[SheetCandidate]:
    return [
        SheetCandidate(stratum=name, kind="miss", stage="bm25", query_id=f"{name}-{i}",
                       query=f"q {i}", doc="d", start=i, end=i + 1, text=f"quote, \"{i}\"\n")
        for name, size in sizes.items()
        for i in range(size)
    ]  # fmt: skip


def test_draws_equally_per_stratum_and_records_sizes() -> None:
    rows = draw_sheet(_candidates({"a": 40, "b": 5, "c": 20}), 30, seed=3)
    by = {name: [r for r in rows if r.stratum == name] for name in "abc"}
    assert [len(by[n]) for n in "abc"] == [13, 5, 12]
    assert {r.stratum_size for r in by["a"]} == {40}
    assert [r.row for r in rows] == list(range(1, 31))
    assert draw_sheet(_candidates({"a": 40, "b": 5, "c": 20}), 30, seed=3) == rows


def _marked(path: Path, marks: list[str]) -> list[dict[str, str]]:
    records = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    for record, mark in zip(records, marks, strict=True):
        record["mark"] = mark
    return records


def _write(path: Path, records: list[dict[str, str]], extra: str | None = None) -> None:
    names = list(records[0]) + ([extra] if extra else [])
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=names)
        writer.writeheader()
        for record in records:
            writer.writerow({**record, **({extra: "note"} if extra else {})})


def test_precision_per_stratum_and_weighted_overall_by_hand(tmp_path: Path) -> None:
    rows = draw_sheet(_candidates({"a": 40, "b": 10}), 8, seed=0)  # 4 rows each
    sheet = tmp_path / "s.csv"
    sheet.write_text(sheet_csv(rows), encoding="utf-8")
    # a: right, right, wrong (judge), unsure -> 2 of 3; b: right, gold wrong, right, empty -> 2 of 3
    marks = ["judge right", "Judge_Right", "judge wrong", "unsure",
             "JUDGE RIGHT", "gold-wrong", "judge right", ""]  # fmt: skip
    _write(sheet, _marked(sheet, marks), extra="my notes")  # a column the person added
    read = read_sheet(sheet)
    assert [r.mark for r in read][:4] == [SheetMark.JUDGE_RIGHT] * 2 + [
        SheetMark.JUDGE_WRONG, SheetMark.UNSURE]  # fmt: skip
    assert read[0].text == rows[0].text  # commas, quotes and newlines survive the CSV
    result = sheet_precision(read)
    a, b = result.strata
    assert (a.right, a.judge_wrong, a.unsure, b.gold_wrong, b.unmarked) == (2, 1, 1, 1, 1)
    assert a.precision == wilson_interval(2, 3)
    # Overall: 40/50 * 2/3 + 10/50 * 2/3 = 2/3, from the stratified Wilson interval.
    assert result.overall == stratified_wilson_interval([(2, 3, 40), (2, 3, 10)])
    assert result.overall is not None
    assert result.overall.estimate == pytest.approx(2 / 3)


def test_jsonl_round_trip(tmp_path: Path) -> None:
    rows = draw_sheet(_candidates({"a": 3}), 3, seed=0)
    path = tmp_path / "s.jsonl"
    path.write_text(sheet_jsonl(rows), encoding="utf-8")
    assert read_sheet(path) == rows


def test_unknown_mark_names_file_line_and_value(tmp_path: Path) -> None:
    rows = draw_sheet(_candidates({"a": 3}), 3, seed=0)
    sheet = tmp_path / "s.csv"
    sheet.write_text(sheet_csv(rows), encoding="utf-8")
    _write(sheet, _marked(sheet, ["judge right", "maybe", ""]))
    # Each row's text ends in a newline, so row 2 starts on line 4 (header, row 1 on 2-3).
    with pytest.raises(EvalSetError, match=r"s\.csv: line 4: unknown mark 'maybe'"):
        read_sheet(sheet)
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text(sheet_jsonl(rows).replace('"mark":null', '"mark":"perhaps"', 1))
    with pytest.raises(EvalSetError, match=r"s\.jsonl: line 1: unknown mark 'perhaps'"):
        read_sheet(jsonl)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("x.csv", "a,b\n1,2\n", "line 1: not a sample sheet"),
        ("x.jsonl", "{not json\n", "line 1: not JSON"),
        ("x.jsonl", '{"sheet": "other"}\n', "line 1: not a sample sheet row"),
        ("x.jsonl", "", "the sheet has no rows"),
    ],
)
def test_bad_sheets(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(EvalSetError, match=message):
        read_sheet(path)


def test_unreadable_sheet(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(EvalSetError, match="cannot read sheet"):
        read_sheet(path)
