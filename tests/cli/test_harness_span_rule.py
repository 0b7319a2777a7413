"""Reports of schema 2.2 and older keep their span rule where groundkit scores them again.

Before schema 2.3 a quote found at several places put every occurrence into the span metrics'
gold; such a report says so (``RunInfo.span_gold == "every-occurrence"``). Adjudication scores
its span metrics by that rule, so that the adjudicated figures sit beside strict ones of the
same rule; a reproduction names the rule when span figures differ.
"""

from __future__ import annotations

import pytest
from tests.core_judgments.test_core_pinned_quotes import _repeated_report

from groundkit.harness.analysis._adjudicate import adjudicated_report
from groundkit.harness.run._reproduce import Reproduction, ScoreDifference
from groundkit.judgments.report import AdjudicationInfo, EvalReport, parse_report

INFO = AdjudicationInfo(
    judge="recorded:none.jsonl",
    prompt_version="1",
    stages=["bm25"],
    k=1,
    repeats=1,
    relevant_grade=1,
    judged_hits=0,
    relevant=0,
    not_relevant=0,
    undecided=0,
    calls=0,
    cached=0,
    failed=0,
    tokens=0,
    seconds=0.0,
)


def _adjudicated(report: EvalReport) -> float:
    scores = adjudicated_report(report, {}, INFO).baseline.queries[0].adjudicated_scores
    return scores["span_recall@1"]


@pytest.mark.parametrize(("version", "recorded"), [("2.2", 0.5), ("2.0", 0.5), ("2.3", 1.0)])
def test_adjudication_scores_spans_by_the_reports_own_rule(version: str, recorded: float) -> None:
    # One hit covering exactly the first of two copies: 0.5 by the rule before 2.3, 1.0 after.
    report = parse_report(_repeated_report(version, recorded=recorded))
    assert _adjudicated(report) == recorded == report.baseline.queries[0].scores["span_recall@1"]


def test_a_reproduction_names_the_span_rule_when_span_figures_differ() -> None:
    old = parse_report(_repeated_report("2.2"))
    new = parse_report(_repeated_report("2.3", recorded=1.0))
    span = ScoreDifference("bm25", "q-1", "span_recall@1", 0.5, 1.0)
    recall = ScoreDifference("bm25", "q-1", "recall@1", 0.0, 1.0)

    def note(recorded: EvalReport, differences: tuple[ScoreDifference, ...]) -> str | None:
        return Reproduction(recorded, new, (), differences, 1).span_rule_note

    found = note(old, (span, recall))
    assert found is not None
    assert found.startswith("1 span-metric difference(s) may come from the rule")
    assert "(schema 2.2) counted a quote found at several places at every occurrence" in found
    assert note(old, (recall,)) is None  # no span figure differs
    assert note(new, (span,)) is None  # the same rule on both sides
