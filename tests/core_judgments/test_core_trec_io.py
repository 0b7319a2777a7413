"""TREC qrels/run reading and writing, document-level evaluation edge cases and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundkit.judgments import JudgmentError, evaluate_trec, read_qrels, read_trec_run
from groundkit.judgments.trec import (
    TrecRun,
    format_trec_eval,
    qrels_text,
    trec_measure_names,
    trec_ranking,
    trec_run_text,
    write_qrels,
    write_trec_run,
)


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_read_qrels_variants(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "qrels",
        "# comment\n1 0 d1 1\n1\t0  d2\t2  \n\n2 Q0 d3 0\n2 0 d4 1.7\n2 0 d5 -1\n3 0 d#6 1",
    )
    assert read_qrels(path) == {
        "1": {"d1": 1, "d2": 2},
        "2": {"d3": 0, "d4": 1, "d5": -1},
        "3": {"d#6": 1},
    }


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("1 0 d1 1\n1 0 d2\n", 2, "expected 4 fields"),
        ("1 0 d1 1 extra\n", 1, "expected 4 fields"),
        ("1 0 d1 yes\n", 1, "relevance 'yes' is not a number"),
        ("1 0 d1 1e3\n", 1, "is not a number"),
        ("1 0 d1 1\n1 0 d1 0\n", 2, "judged twice"),
    ],
)
def test_read_qrels_errors_name_file_and_line(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    path = _write(tmp_path / "bad.qrels", text)
    with pytest.raises(JudgmentError) as info:
        read_qrels(path)
    assert info.value.line == line
    assert info.value.path == str(path)
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert "\n" not in str(info.value)


def test_read_qrels_rejects_invalid_utf8_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "bin.qrels"
    path.write_bytes(b"1 0 ok 1\n1 0 \xff\xfe 1\n")
    with pytest.raises(JudgmentError, match=r"bin\.qrels:2: .*UTF-8"):
        read_qrels(path)
    with pytest.raises(JudgmentError, match="cannot read file"):
        read_qrels(tmp_path / "missing")


def test_read_trec_run_variants(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "run",
        "# header\n  # indented comment\n\n"
        "1 Q0 a 1 2.5 first\n1\tQ0\tb\t2\t-1e-3\tsecond trailing junk\r\n2 Q0 c +1 1e3 last",
    )
    with pytest.raises(JudgmentError, match=r"run:5: expected at most 6 fields .*, got 8"):
        read_trec_run(path, extra_fields=False)
    run = read_trec_run(path)  # trec_eval ignores fields after the run id, and so do we
    assert isinstance(run, TrecRun)
    assert run == {"1": {"a": 2.5, "b": -0.001}, "2": {"c": 1000.0}}
    assert run.run_id == "last"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("1 Q0 a 1 2.5\n", 1, "at least 6 fields"),
        ("1 Q0 a 1 2.5 r\n1 Q0 b 2 high r\n", 2, "score 'high'"),
        ("1 Q0 a 1 nan r\n", 1, "score 'nan'"),
        ("1 Q0 a 1 1_0 r\n", 1, "score '1_0'"),
        ("1 Q0 a 1 2 r\n1 Q0 a 2 1 r\n", 2, "retrieved twice"),
    ],
)
def test_read_trec_run_errors_name_file_and_line(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    path = _write(tmp_path / "bad.run", text)
    with pytest.raises(JudgmentError) as info:
        read_trec_run(path)
    assert info.value.line == line
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_round_trip_through_files(tmp_path: Path) -> None:
    qrels = {"q2": {"b": 0, "a": 2}, "q1": {"x": 1}}
    run = {"q1": {"x": 0.5, "y": 0.5, "z": 1e-5}, "q2": {"a": -3.25}}
    write_qrels(qrels, tmp_path / "qrels")
    write_trec_run(run, tmp_path / "run", run_id="sys1")
    assert read_qrels(tmp_path / "qrels") == qrels
    back = read_trec_run(tmp_path / "run")
    assert back == run
    assert back.run_id == "sys1"
    lines = (tmp_path / "run").read_text(encoding="utf-8").splitlines()
    # trec_eval order: score descending, then document id descending; ranks from 1.
    assert lines[:3] == ["q1 Q0 y 1 0.5 sys1", "q1 Q0 x 2 0.5 sys1", "q1 Q0 z 3 1e-05 sys1"]
    assert (tmp_path / "qrels").read_text(encoding="utf-8") == "q1 0 x 1\nq2 0 a 2\nq2 0 b 0\n"
    # The writers write exactly the texts the text functions give (one TREC writer).
    assert (tmp_path / "run").read_text(encoding="utf-8") == trec_run_text(run, run_id="sys1")
    assert (tmp_path / "qrels").read_text(encoding="utf-8") == qrels_text(qrels)
    assert trec_run_text({"q": {"d": 1.0}}).endswith(" groundkit\n")


@pytest.mark.parametrize(
    ("qrels", "run", "run_id"),
    [
        ({"q 1": {"a": 1}}, {}, None),
        ({"q": {"a b": 1}}, {}, None),
        ({"q": {"#a": 1}}, {}, None),
        ({"q": {"a": 1.5}}, {}, None),
        ({}, {"q": {"a": float("nan")}}, None),
        ({}, {"q": {"a": 1.0}}, "two words"),
    ],
)
def test_writers_refuse_unwritable_values_and_leave_no_file(
    tmp_path: Path,
    qrels: dict[str, dict[str, float]],
    run: dict[str, dict[str, float]],
    run_id: str | None,
) -> None:
    target = tmp_path / "out"
    if qrels:
        with pytest.raises(JudgmentError):
            write_qrels(qrels, target)  # type: ignore[arg-type]
    else:
        with pytest.raises(JudgmentError):
            write_trec_run(run, target, run_id=run_id)
    assert list(tmp_path.iterdir()) == []


def test_trec_ranking_order() -> None:
    assert trec_ranking({"a": 1.0, "b": 2.0, "c": 1.0}) == [("b", 2.0), ("c", 1.0), ("a", 1.0)]


def test_evaluate_trec_errors() -> None:
    with pytest.raises(JudgmentError, match="unknown or unsupported trec_eval measure 'yaap'"):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["yaap"])
    with pytest.raises(JudgmentError, match="bad parameter"):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P.x"])
    with pytest.raises(JudgmentError, match="takes no parameters"):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map.5"])
    with pytest.raises(JudgmentError, match="cutoffs must be positive"):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P.0"])
    with pytest.raises(JudgmentError, match="no query has both"):
        evaluate_trec({"q": {"a": 1}}, {"other": {"a": 1.0}})
    with pytest.raises(JudgmentError, match="NaN"):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": float("nan")}})
    with pytest.raises(JudgmentError, match="relevance_level"):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, relevance_level=-1)
    with pytest.raises(JudgmentError, match="max_per_query"):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, max_per_query=-1)


def test_evaluate_trec_small_hand_checked_case() -> None:
    qrels = {"q": {"a": 2, "b": 1, "c": 0, "d": 1}}
    run = {"q": {"a": 0.1, "b": 0.9, "c": 0.8, "x": 0.7}}  # ranking b c x a
    result = evaluate_trec(
        qrels,
        run,
        ["map", "recip_rank", "P_1", "recall.4", "ndcg_cut.2", "Rprec", "bpref", "success_1"],
    )
    values = result.per_query["q"]
    assert values["map"] == pytest.approx((1 / 1 + 2 / 4) / 3)
    assert values["recip_rank"] == 1.0
    assert values["P_1"] == 1.0
    assert values["recall_4"] == pytest.approx(2 / 3)
    ideal2 = 2 + 1 / 1.584962500721156
    assert values["ndcg_cut_2"] == pytest.approx(1 / ideal2)
    assert values["Rprec"] == pytest.approx(1 / 3)
    # b before any judged non-relevant: 1; a after one (c): 1 - 1/min(1, 3) = 0.
    assert values["bpref"] == pytest.approx(1 / 3)
    assert values["success_1"] == 1.0
    text = format_trec_eval(result, per_query=True)
    assert text.splitlines()[0] == "map                   \tq\t0.5000"
    assert "runid" not in text


def test_measure_names_are_listed_in_trec_eval_order() -> None:
    names = trec_measure_names()
    assert names[:5] == ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret")
    assert "ndcg_cut" in names
