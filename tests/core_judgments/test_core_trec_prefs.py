"""trec_eval's other judgment formats and z-scores: readers, bad input, small hand-checked cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundkit.judgments import JudgmentError
from groundkit.judgments.trec import evaluate_trec, format_trec_eval
from groundkit.judgments.trec._prefs import evaluate_trec_prefs
from groundkit.judgments.trec._prefs_io import read_prefs, read_qrels_jg
from groundkit.judgments.trec._qrels_jg import evaluate_trec_qrels_jg
from groundkit.judgments.trec._zscores import read_zscores

RUN = "q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 c 3 1.0 r\n"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_prefs_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    prefs = _write(tmp_path, "prefs.test", "# comment\nq1 g s a 2\nq1 g s b\n")
    with pytest.raises(JudgmentError, match=r"prefs.test:3: expected 5 fields"):
        read_prefs(prefs)


def test_prefs_level_must_be_a_number(tmp_path: Path) -> None:
    prefs = _write(tmp_path, "prefs.test", "q1 g s a high\n")
    with pytest.raises(JudgmentError, match=r"prefs.test:1: level 'high' is not a number"):
        read_prefs(prefs)


def test_prefs_document_twice_in_a_sub_group(tmp_path: Path) -> None:
    prefs = _write(tmp_path, "prefs.test", "q1 g s a 2\nq1 g s a 1\n")
    with pytest.raises(JudgmentError, match=r"prefs.test:2: .*listed twice.*first on line 1"):
        read_prefs(prefs)


def test_qrels_jg_document_twice_in_a_group(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.jg", "q1 1 a 1\nq1 2 a 0\nq1 1 a 0\n")
    with pytest.raises(JudgmentError, match=r"qrels.jg:3: .*judged twice"):
        read_qrels_jg(qrels)


def test_zscores_non_number_names_file_and_line(tmp_path: Path) -> None:
    zscores = _write(tmp_path, "zscores", "q1 map 0.2 0.1\nq1 P_5 abc 0.1\n")
    with pytest.raises(JudgmentError, match=r"zscores:2: mean 'abc' is not a number"):
        read_zscores(zscores)


def test_zscores_wrong_field_count(tmp_path: Path) -> None:
    zscores = _write(tmp_path, "zscores", "q1 map 0.2\n")
    with pytest.raises(JudgmentError, match=r"zscores:1: expected 4 fields"):
        read_zscores(zscores)


def test_prefs_counts_by_hand(tmp_path: Path) -> None:
    # One group, one sub-group: a > b > c. The ranking a, b, c fulfils all three; d (judged
    # 0, not retrieved) adds a, b, c > d, fulfilled as implied preferences.
    prefs = _write(tmp_path, "prefs", "q1 g s a 3\nq1 g s b 2\nq1 g s c 1\nq1 g s d 0\n")
    run = _write(tmp_path, "run", RUN)
    result = evaluate_trec_prefs(prefs, run, ["all_prefs"])
    values = result.per_query["q1"]
    assert values["prefs_num_prefs_poss"] == 6
    assert values["prefs_num_prefs_ful"] == 6
    assert values["prefs_num_prefs_ful_ret"] == 3
    assert values["prefs_simp"] == 1.0
    assert values["prefs_pair_ret"] == 1.0


def test_prefs_sub_groups_join_by_transitivity(tmp_path: Path) -> None:
    # a > b in one sub-group, b > c in another: a > c too; the ranking c, b, a fulfils none.
    prefs = _write(tmp_path, "prefs", "q1 g s1 a 2\nq1 g s1 b 1\nq1 g s2 b 2\nq1 g s2 c 1\n")
    run = _write(tmp_path, "run", "q1 Q0 c 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 a 3 1.0 r\n")
    values = evaluate_trec_prefs(prefs, run, ["prefs_num_prefs_poss", "prefs_simp"])
    assert values.per_query["q1"] == {"prefs_num_prefs_poss": 3.0, "prefs_simp": 0.0}


def test_contradicting_sub_groups_are_refused(tmp_path: Path) -> None:
    prefs = _write(tmp_path, "prefs", "q1 g s1 a 2\nq1 g s1 b 1\nq1 g s2 b 2\nq1 g s2 a 1\n")
    run = _write(tmp_path, "run", RUN)
    with pytest.raises(JudgmentError, match="prefers 'a' to 'b' and the reverse"):
        evaluate_trec_prefs(prefs, run)


def test_qrels_jg_averages_groups(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.jg", "q1 1 a 1\nq1 1 b 0\nq1 2 a 0\nq1 2 c 1\n")
    run = _write(tmp_path, "run", RUN)
    result = evaluate_trec_qrels_jg(qrels, run, ["map_avgjg"])
    # Group 1: a relevant at rank 1 (AP 1); group 2: c relevant at rank 3 (AP 1/3).
    assert result.per_query["q1"]["map_avgjg"] == pytest.approx((1.0 + 1 / 3) / 2)


def test_zscores_conversion_and_missing_values() -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}
    zscores = {"q1": {"map": (0.5, 0.25), "num_ret": (2.0, 0.0)}}
    result = evaluate_trec(qrels, run, ["num_ret", "map"], zscores=zscores)
    assert result.per_query["q1"] == {"num_ret": 0.0, "map": 2.0}
    assert result.per_query["q2"] == {"num_ret": -1000000.0, "map": -1000000.0}
    text = format_trec_eval(result, per_query=True)
    assert text.splitlines()[0] == "Znum_ret               \tq1\t0.0000"


def test_measures_of_another_format_are_refused(tmp_path: Path) -> None:
    prefs = _write(tmp_path, "prefs", "q1 g s a 1\nq1 g s b 0\n")
    run = _write(tmp_path, "run", RUN)
    with pytest.raises(JudgmentError, match="cannot be computed from preference judgments"):
        evaluate_trec_prefs(prefs, run, ["map"])
    with pytest.raises(JudgmentError, match="needs judgments in the prefs or qrels_prefs"):
        evaluate_trec({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["prefs_simp"])


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ("utility.1,2", "exactly 4 coefficients"),
        ("11pt_avg.0.5,0.25", "increasing order"),
        ("ndcg.x=1", "unknown parameter name"),
        ("ndcg.1", "not name=value"),
        ("rbp.p=abc", "bad parameter"),
    ],
)
def test_bad_measure_parameters(request_: str, message: str) -> None:
    with pytest.raises(JudgmentError, match=message):
        evaluate_trec({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, [request_])
