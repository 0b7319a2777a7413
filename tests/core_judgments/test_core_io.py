"""Strict JSONL judgments: load errors, round trips, atomic dumps and fingerprints."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from groundkit.judgments import GoldQuote, Judgment, JudgmentError, dump_judgments, load_judgments
from groundkit.judgments.gold import judgments_fingerprint

GOOD = {
    "query_id": "leave-days",
    "query": "How many days?",
    "gold": [{"doc": "a.txt", "quote": "25"}],
}


def _write(path: Path, *lines: str | dict[str, Any]) -> Path:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path) -> JudgmentError:
    with pytest.raises(JudgmentError) as caught:
        load_judgments(path)
    assert "\n" not in str(caught.value)
    return caught.value


def _sample() -> list[Judgment]:
    return [
        Judgment(
            query_id="z-last",
            query="Où est « le café » ?",
            gold=[GoldQuote(doc="docs/café.md", quote="le café\u00a0est là", grade=2)],
            answer="là",
            qtype="factoid",
            meta={"source": "pilot", "pages": [1, 2]},
        ),
        Judgment(query_id="a-first", query="Unknowable?", category="unanswerable"),
        Judgment(
            query_id="m-mid",
            query="Two quotes",
            category="multi-hop",
            gold=[GoldQuote(doc="a.txt", quote="one"), GoldQuote(doc="b.txt", quote="two")],
        ),
    ]


# Loading errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message", "item_id"),
    [
        ("{not json", "invalid JSON", None),
        ("[1, 2]", "expected a JSON object, got an array", None),
        ('"text"', "expected a JSON object, got a string", None),
        ('{"query_id": "a", "query_id": "b", "query": "x"}', "appears twice", None),
        (
            '{"query_id": "q", "query": "x", "category": "unanswerable", "meta": {"x": NaN}}',
            "NaN",
            None,
        ),
        (GOOD | {"extra": 1}, "unknown field 'extra'", "leave-days"),
        (GOOD | {"query_id": "Leave Days"}, "not lowercase kebab-case", "Leave Days"),
        (GOOD | {"gold": []}, "must have category 'unanswerable'", "leave-days"),
        (GOOD | {"category": "unanswerable"}, "must have no gold", "leave-days"),
        (GOOD | {"gold": [{"doc": "/abs", "quote": "q"}]}, "gold.0.doc", "leave-days"),
        ({"query": "no id"}, "missing required field 'query_id'", None),
        (GOOD | {"query_id": 7}, "query_id", None),
    ],
)
def test_bad_line_names_file_line_and_id(
    tmp_path: Path, line: str | dict[str, Any], message: str, item_id: str | None
) -> None:
    path = _write(tmp_path / "judgments.jsonl", GOOD | {"query_id": "first"}, "", line)
    error = _error(path)
    assert error.path == str(path)
    assert error.line == 3
    assert error.item_id == item_id
    assert message in error.message
    assert str(error).startswith(f"{path}:3: ")


def test_duplicate_query_id_names_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "j.jsonl", GOOD, GOOD | {"query": "again"})
    error = _error(path)
    assert (error.line, error.item_id) == (2, "leave-days")
    assert "duplicate query id (first defined on line 1)" in str(error)


def test_non_utf8_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + '{"query": "café"}\n'.encode("latin-1"))
    error = _error(path)
    assert error.line == 2
    assert "not valid UTF-8 (byte 0xe9" in str(error)


def test_missing_file_is_a_judgment_error(tmp_path: Path) -> None:
    error = _error(tmp_path / "absent.jsonl")
    assert error.path == str(tmp_path / "absent.jsonl")
    assert "cannot read file" in str(error)


def test_blank_lines_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\r\n\r\n  \n")
    assert [judgment.query_id for judgment in load_judgments(path)] == ["leave-days"]


def test_empty_file_is_refused_naming_it(tmp_path: Path) -> None:
    # An empty set would fail later with no file named ("no answerable query").
    for content in ("", "\n\n  \n"):
        path = tmp_path / "empty.jsonl"
        path.write_text(content, encoding="utf-8")
        with pytest.raises(JudgmentError, match=r"empty\.jsonl: no judgments in file"):
            load_judgments(path)


def test_json_line_separators_inside_strings_do_not_split_lines(tmp_path: Path) -> None:
    record = GOOD | {"query": "a\u2028b\u0085c"}
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    assert load_judgments(path)[0].query == "a\u2028b\u0085c"


# Round trip and format -----------------------------------------------------------------------


def test_round_trip_sorted_by_query_id(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    dump_judgments(_sample(), path)
    loaded = load_judgments(path)
    assert [judgment.query_id for judgment in loaded] == ["a-first", "m-mid", "z-last"]
    assert loaded == sorted(_sample(), key=lambda judgment: judgment.query_id)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {
        "query_id": "a-first",
        "query": "Unknowable?",
        "category": "unanswerable",
    }
    assert "« le café »" in lines[2]  # written as readable UTF-8, not \u escapes
    dump_judgments(loaded, tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_bytes() == path.read_bytes()


def test_dump_refuses_duplicate_ids_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    with pytest.raises(JudgmentError, match="duplicate query id") as caught:
        dump_judgments([*_sample(), _sample()[0]], path)
    assert caught.value.item_id == "z-last"
    assert list(tmp_path.iterdir()) == []


def test_failed_serialisation_leaves_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    dump_judgments(_sample(), path)
    before = path.read_bytes()
    # model_construct skips validation: the only way to get a judgment that cannot serialise.
    broken = Judgment.model_construct(
        query_id="b-broken", query="x", category="unanswerable", gold=(), meta={"x": object()}
    )
    with pytest.raises(Exception, match=r"serialize|JSON"):
        dump_judgments([*_sample()[:1], broken], path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_failed_rename_leaves_previous_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "out.jsonl"
    dump_judgments(_sample()[:1], path)
    before = path.read_bytes()

    def failing_replace(*args: object, **kwargs: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk on fire"):
        dump_judgments(_sample(), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


# Fingerprint ---------------------------------------------------------------------------------


def test_fingerprint_ignores_order_and_formatting(tmp_path: Path) -> None:
    sample = _sample()
    fingerprint = judgments_fingerprint(sample)
    assert len(fingerprint) == 64
    assert int(fingerprint, 16) >= 0
    assert judgments_fingerprint(reversed(sample)) == fingerprint
    # Same content written with other key order and spacing.
    path = tmp_path / "hand.jsonl"
    records = [judgment.model_dump(mode="json") for judgment in sample]
    _write(path, *(json.dumps(dict(reversed(record.items())), indent=None) for record in records))
    assert judgments_fingerprint(load_judgments(path)) == fingerprint


def test_fingerprint_changes_with_content() -> None:
    sample = _sample()
    changed = [sample[0].model_copy(update={"query": "Other?"}), *sample[1:]]
    assert judgments_fingerprint(changed) != judgments_fingerprint(sample)
    with pytest.raises(JudgmentError, match="duplicate"):
        judgments_fingerprint([sample[0], sample[0]])
