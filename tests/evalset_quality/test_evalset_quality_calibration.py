"""Calibration figures and candidate decisions, without a report: exact values by hand."""

from __future__ import annotations

import hashlib

import pytest

from groundkit.evalset import EvalSetError, apply_candidate_decisions
from groundkit.evalset.judge import (
    CANDIDATE_SOURCE_KEY,
    CandidateDecision,
    CandidateLine,
    calibration_figures,
    judge_id,
)
from groundkit.judgments import GoldQuote, Judgment
from groundkit.stats import wilson_interval


def test_figures_by_hand_undecided_count_neither_way() -> None:
    # 6 positives: 4 relevant, 1 not, 1 undecided; 5 negatives: 3 not, 2 relevant.
    labels = [True] * 6 + [False] * 5
    decisions: list[bool | None] = [
        True,
        True,
        True,
        True,
        False,
        None,
        False,
        False,
        False,
        True,
        True,
    ]
    figures = calibration_figures(labels, decisions)
    assert (figures.tpr.successes, figures.tpr.n) == (4, 5)
    assert (figures.tnr.successes, figures.tnr.n) == (3, 5)
    # p_o = 7/10; label yes 5/10, judge yes 6/10: p_e = 0.5*0.6 + 0.5*0.4 = 0.5.
    assert figures.kappa == pytest.approx((0.7 - 0.5) / 0.5, abs=1e-12)
    assert figures.agreement == pytest.approx(0.7)
    reference = wilson_interval(4, 5)
    assert (figures.tpr.low, figures.tpr.high) == (reference.low, reference.high)


def test_figures_empty_stratum_and_undefined_kappa() -> None:
    figures = calibration_figures([True, True], [True, True])
    assert figures.kappa is None  # one class for both raters
    assert figures.tnr.n == 0
    assert figures.tnr.estimate is None
    assert calibration_figures([True], [None]).agreement is None


def test_judge_id_is_safe_and_distinct() -> None:
    a, b = judge_id("http:org/model:7b"), judge_id("http:org-model-7b")
    assert a != b
    assert all(c.isalnum() or c in "._-" for c in a)


DOC = "Employees receive 25 days of paid leave per year. Managers approve leave requests."


def _line(start: int, end: int, text: str = DOC) -> CandidateLine:
    return CandidateLine(
        query_id="leave", query="who approves leave?", stage="bm25", rank=2, doc="hr.md",
        start=start, end=end,
        passage_sha256=hashlib.sha256(text[start:end].encode()).hexdigest(),
        grades=[3], majority=3, possibly_missing_from_gold=True,
    )  # fmt: skip


def _decision(line: CandidateLine, action: str) -> CandidateDecision:
    return CandidateDecision.model_validate(
        {"action": action, "query_id": line.query_id, "doc": line.doc,
         "start": line.start, "end": line.end}
    )  # fmt: skip


JUDGMENTS = [
    Judgment(
        query_id="leave",
        query="who approves leave?",
        gold=(GoldQuote(doc="hr.md", quote="Employees receive 25 days"),),
    )
]


def test_latest_decision_wins_and_no_duplicate_quote() -> None:
    first, second, known = _line(51, 82), _line(10, 25), _line(0, 25)
    decisions = [
        _decision(first, "accept"),
        _decision(second, "accept"),
        _decision(second, "reject"),
        _decision(known, "accept"),
    ]
    result = apply_candidate_decisions(JUDGMENTS, [first, second, known], decisions, {"hr.md": DOC})
    gold = result[0].gold
    assert [g.quote for g in gold] == ["Employees receive 25 days", DOC[51:82]]
    assert gold[1].grade == 1
    assert result[0].meta[CANDIDATE_SOURCE_KEY] == [{"doc": "hr.md", "start": 51, "end": 82}]
    assert JUDGMENTS[0].gold == (GoldQuote(doc="hr.md", quote="Employees receive 25 days"),)


def test_bad_decisions_and_other_corpus() -> None:
    line = _line(51, 82)
    with pytest.raises(EvalSetError, match="not a candidate of the list"):
        apply_candidate_decisions(JUDGMENTS, [], [_decision(line, "accept")], {"hr.md": DOC})
    with pytest.raises(EvalSetError, match="corpus text differs"):
        apply_candidate_decisions(
            JUDGMENTS, [line], [_decision(line, "accept")], {"hr.md": DOC.upper()}
        )
