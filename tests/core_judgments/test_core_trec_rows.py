"""Malformed TREC rows are refused with FILE:LINE; harmless variants read as trec_eval reads them.

Each malformed run is checked through both readers: the mapping reader (``read_trec_run``)
and the vectorised file evaluator (``evaluate_trec_files``), which must give the same error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from groundkit.judgments import JudgmentError, read_qrels, read_trec_run
from groundkit.judgments.trec import evaluate_trec_files, format_trec_eval

GOOD = "q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 1.0 r\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\n"


def _second_row(row: str) -> str:
    return GOOD.splitlines()[0] + "\n" + row + "\n"


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        (
            "q1 Q0 d2 2 1.0",
            "expected at least 6 fields (query iteration document rank score run_id), got 5",
        ),
        ("q1", "got 1"),
        ("q1 Q0 d2 2  r", "got 5"),  # an empty score is a missing field
        ("q1 Q0 d2 -1 1.0 r", "rank must be a whole number >= 0, got '-1'"),
        ("q1 Q0 d2 two 1.0 r", "rank must be a whole number >= 0, got 'two'"),
        ("q1 Q0 d2 2.5 1.0 r", "rank must be a whole number >= 0, got '2.5'"),
        ("q1 Q0 d2 -0 1.0 r", "got '-0'"),
        ("q1 Q0 d2 2 nan r", "score 'nan' is not a finite number"),
        ("q1 Q0 d2 2 inf r", "score 'inf' is not a finite number"),
        ("q1 Q0 d2 2 -inf r", "score '-inf' is not a finite number"),
        ("q1 Q0 d2 2 Infinity r", "score 'Infinity' is not a finite number"),
        ("q1 Q0 d2 2 1e400 r", "score '1e400' is not a finite number"),
        ("q1 Q0 d2 2 -1e400 r", "score '-1e400' is not a finite number"),
        ("q1 Q0 d2 2 high r", "score 'high' is not a finite number"),
        ("q1 Q0 d2 2 0x10 r", "score '0x10' is not a finite number"),
    ],
)
def test_malformed_run_rows_name_file_and_line(tmp_path: Path, row: str, fragment: str) -> None:
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels"
    run.write_text(_second_row(row), encoding="utf-8")
    qrels.write_text(QRELS, encoding="utf-8")
    for read in (lambda: read_trec_run(run), lambda: evaluate_trec_files(qrels, run)):
        with pytest.raises(JudgmentError) as info:
            read()
        message = str(info.value)
        assert message.startswith(f"{run}:2: "), message
        assert fragment in message
        assert "\n" not in message


@pytest.mark.parametrize(
    ("rank", "score", "expected"),
    [("0", "1", 1.0), ("+3", "-2e-3", -0.002), ("1" + "0" * 30, "1e308", 1e308), ("7", ".5", 0.5)],
)
def test_valid_ranks_and_scores_are_read(
    tmp_path: Path, rank: str, score: str, expected: float
) -> None:
    run = tmp_path / "run"
    run.write_text(f"q1 Q0 d1 {rank} {score} r\n", encoding="utf-8")
    assert read_trec_run(run) == {"q1": {"d1": expected}}


def test_extra_fields_are_ignored_as_trec_eval_ignores_them(tmp_path: Path) -> None:
    run, qrels = tmp_path / "run", tmp_path / "qrels"
    run.write_text("q1 Q0 d1 1 2.5 r junk at end\nq1 Q0 d2 2 1.0 r\n", encoding="utf-8")
    qrels.write_text(QRELS, encoding="utf-8")
    with pytest.raises(JudgmentError, match=r"run:1: expected at most 6 fields .*got 9"):
        read_trec_run(run, extra_fields=False)
    assert read_trec_run(run) == {"q1": {"d1": 2.5, "d2": 1.0}}
    result = evaluate_trec_files(qrels, run, ["map"])
    assert result.summary["map"] == 1.0


def _evaluated(qrels: Path, run: Path) -> str:
    return format_trec_eval(evaluate_trec_files(qrels, run), per_query=True)


@pytest.mark.parametrize(
    "variant",
    [
        lambda text: text.replace(" ", "\t"),
        lambda text: text.replace("\n", "\r\n"),
        lambda text: text.rstrip("\n"),
        lambda text: "\ufeff" + text,
        lambda text: "\ufeff" + text.replace("\n", "\r\n").rstrip("\r\n"),
    ],
    ids=["tabs", "crlf", "no final newline", "bom", "bom crlf no final newline"],
)
def test_harmless_variants_read_like_the_plain_files(
    tmp_path: Path, variant: Callable[[str], str]
) -> None:
    plain_run, plain_qrels = tmp_path / "run", tmp_path / "qrels"
    plain_run.write_text(GOOD, encoding="utf-8")
    plain_qrels.write_text(QRELS, encoding="utf-8")
    run, qrels = tmp_path / "run.variant", tmp_path / "qrels.variant"
    run.write_bytes(variant(GOOD).encode("utf-8"))
    qrels.write_bytes(variant(QRELS).encode("utf-8"))
    assert read_trec_run(run) == read_trec_run(plain_run)
    assert read_trec_run(run).run_id == "r"
    assert read_qrels(qrels) == read_qrels(plain_qrels)
    assert _evaluated(qrels, run) == _evaluated(plain_qrels, plain_run)


def test_a_bom_is_only_skipped_at_the_start(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.write_text(GOOD + "\ufeffq2 Q0 d1 1 1 r\n", encoding="utf-8")
    assert "\ufeffq2" in read_trec_run(run)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("q1 0 d1\n", 1, "expected 4 fields"),
        ("q1 0 d1 1\nq1 0 d2 1 x\n", 2, "expected 4 fields"),
        ("q1 0 d1 nan\n", 1, "relevance 'nan' is not a number"),
        ("q1 0 d1 99999999999999999999999\n", 1, "out of range"),
    ],
)
def test_malformed_qrels_rows_name_file_and_line(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run"
    qrels.write_text(text, encoding="utf-8")
    run.write_text(GOOD, encoding="utf-8")
    for read in (lambda: read_qrels(qrels), lambda: evaluate_trec_files(qrels, run)):
        with pytest.raises(JudgmentError) as info:
            read()
        assert str(info.value).startswith(f"{qrels}:{line}: ")
        assert fragment in str(info.value)


def test_ids_with_control_and_bidi_characters_are_shown_escaped(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.write_text("q\u202e1 Q0 d\u200b1 1 1 r\nq\u202e1 Q0 d\u200b1 2 0 r\n", encoding="utf-8")
    with pytest.raises(JudgmentError) as info:
        read_trec_run(run)
    message = str(info.value)
    assert "retrieved twice" in message
    for raw, shown in (("\u202e", "\\u202e"), ("\u200b", "\\u200b")):
        assert raw not in message
        assert shown in message
