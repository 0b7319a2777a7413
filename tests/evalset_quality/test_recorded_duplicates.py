"""Recorded judge answers: a (query, passage) pair has one line; a second one is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundkit.evalset import EvalSetError, RecordedJudge
from groundkit.evalset.judge._cache import passage_hash


def _answers(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_later_conflicting_line_is_refused_naming_both_lines(tmp_path: Path) -> None:
    path = _answers(
        tmp_path / "answers.jsonl",
        [
            {"query": "q1", "passage": "The refund window is thirty days.", "grade": 3},
            {"query": "q1", "passage": "Another passage.", "grade": 0},
            {"query": "q1", "passage": "The refund window is thirty days.", "grade": 0},
        ],
    )
    with pytest.raises(EvalSetError) as info:
        RecordedJudge.from_file(path)
    message = str(info.value)
    assert message.startswith(
        f"{path}:3: duplicate of line 1 with other grades (query 'q1', passage sha256 "
    )
    assert passage_hash("The refund window is thirty days.")[:12] in message
    assert (info.value.path, info.value.line) == (str(path), 3)
    assert "\n" not in message


def test_text_and_digest_of_the_same_passage_are_the_same_pair(tmp_path: Path) -> None:
    digest = passage_hash("Some passage.")
    path = _answers(
        tmp_path / "answers.jsonl",
        [
            {"query": "q", "passage_sha256": digest, "grades": [1, 2]},
            {"query": "other", "passage": "Some passage.", "grade": 1},  # another query: fine
            {"query": "q", "passage": "Some passage.", "grades": [2, 1]},
        ],
    )
    with pytest.raises(EvalSetError, match=r"answers\.jsonl:3: duplicate of line 1 "):
        RecordedJudge.from_file(path)


def test_an_identical_copy_is_read_once_and_another_reason_is_refused(tmp_path: Path) -> None:
    row = {"query": "q", "passage": "p", "grade": 2, "reason": "same"}
    path = _answers(
        tmp_path / "answers.jsonl", [row, {"query": "q", "passage": "x", "grade": 1}, row]
    )
    judge = RecordedJudge.from_file(path)
    assert judge.answers[("q", passage_hash("p"))] == ([2], "same")
    other = {**row, "reason": "changed my mind"}
    path = _answers(tmp_path / "answers.jsonl", [row, other])
    with pytest.raises(EvalSetError, match=r"answers\.jsonl:2: duplicate of line 1 with other"):
        RecordedJudge.from_file(path)


def test_distinct_pairs_load_and_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    lines = [
        json.dumps({"query": "q", "passage": "a\u2028b", "grade": 1}, ensure_ascii=False),
        "",
        json.dumps({"query": "q", "passage": "c", "grade": 2}),
        json.dumps({"query": "q", "passage": "a\u2028b", "grade": 3}, ensure_ascii=False),
    ]
    path.write_text("\ufeff" + "\r\n".join(lines[:3]) + "\n", encoding="utf-8")
    judge = RecordedJudge.from_file(path)
    assert judge.answers[("q", passage_hash("a\u2028b"))] == ([1], "")
    assert judge.answers[("q", passage_hash("c"))] == ([2], "")
    # A raw U+2028 inside a JSON string does not end a line: the duplicate is on line 4.
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(EvalSetError, match=r"answers\.jsonl:4: duplicate of line 1"):
        RecordedJudge.from_file(path)


def test_a_query_with_control_characters_is_shown_escaped(tmp_path: Path) -> None:
    query = "q\u202e\x1b[2J"
    path = _answers(
        tmp_path / "answers.jsonl",
        [
            {"query": query, "passage": "p", "grade": 1},
            {"query": query, "passage": "p", "grade": 0},
        ],
    )
    with pytest.raises(EvalSetError) as info:
        RecordedJudge.from_file(path)
    message = str(info.value)
    assert "\u202e" not in message
    assert "\x1b" not in message
    assert "\\u202e" in message
    assert "\\x1b" in message
