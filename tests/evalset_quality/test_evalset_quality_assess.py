from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundkit.evalset import (
    CAUTION,
    EvalSetError,
    EvalSetQuality,
    assess,
    questions_needed,
    round_up,
)
from groundkit.judgments import Corpus, EvalReport, Judgment
from groundkit.stats import (
    limit_text,
    minimum_detectable_difference,
    paired_minimum_detectable_difference,
)

Make = Callable[..., Judgment]


def _set(make: Make, n: int, **kwargs: object) -> list[Judgment]:
    return [make(f"q{i}", f"What is the value of setting number {i}?", **kwargs) for i in range(n)]


def _codes(quality: EvalSetQuality) -> dict[str, str]:
    return {note.code: note.level for note in quality.warnings()}


def test_counts(make_judgment: Make) -> None:
    items = [
        make_judgment("a", "What is the leave policy for staff?", meta={"reviewed": True}),
        make_judgment("b", "Who approves travel over budget?", meta={"reviewed": "yes"}),
        make_judgment("c", "Is there a policy on pets in the office?", quote=None),
        make_judgment("d", "How many days of sick leave exist?", qtype="numeric"),
    ]
    quality = assess(items)
    assert (quality.size, quality.answerable, quality.reviewed) == (4, 3, 1)
    assert quality.portable is None
    assert not quality.corpus_checked
    assert quality.question_types == {"unlabelled": 3, "numeric": 1}
    assert "portability-unchecked" in _codes(quality)
    assert "unchecked against a corpus" in " ".join(n.message for n in quality.warnings())


def test_reviewed_key_is_configurable(make_judgment: Make) -> None:
    items = [make_judgment("a", "What is the leave policy?", meta={"checked": True})]
    assert assess(items).reviewed == 0
    assert assess(items, reviewed_key="checked").reviewed == 1


def test_floor_is_stats_exact_floor_on_answerable(make_judgment: Make) -> None:
    items = [*_set(make_judgment, 24), make_judgment("none", "Is there a pet policy?", quote=None)]
    quality = assess(items)
    assert quality.detectable_difference == minimum_detectable_difference(24)
    assert quality.paired_worst_case == paired_minimum_detectable_difference(1.0, 24)
    assert quality.paired_worst_case is not None
    assert quality.paired_worst_case > quality.detectable_difference


def test_twenty_four_questions_printed_floor_is_supported(make_judgment: Make) -> None:
    quality = assess(_set(make_judgment, 24))
    reported = quality.reported_detectable_difference
    assert reported is not None
    assert reported == pytest.approx(0.414)  # t quantiles at 24 questions (normal: 0.41)
    printed = f"{reported:.3f}"  # three decimals, as every detection limit is printed
    assert printed in quality.summary()
    assert quality.can_support(float(printed))
    assert not quality.can_support(float(printed) - 0.001)


def test_reported_floor_round_trips_for_every_n() -> None:
    for n in range(2, 501):
        floor = minimum_detectable_difference(n)
        reported = round_up(floor, 3)
        assert reported >= floor, n
        assert reported - floor < 0.001, n
        assert float(f"{reported:.3f}") == reported, n
        assert limit_text(floor) == f"{reported:.3f}", n  # the one printed form


def test_can_support_reported_for_every_n(make_judgment: Make) -> None:
    items = _set(make_judgment, 500)
    for n in range(2, 501):
        quality = assess(items[:n])
        assert quality.reported_detectable_difference is not None
        assert quality.can_support(quality.reported_detectable_difference), n


@given(st.floats(min_value=1e-6, max_value=10.0, allow_nan=False))
def test_round_up_never_below(value: float) -> None:
    rounded = round_up(value)
    assert rounded >= value
    assert rounded - value <= 0.01 + 1e-12
    assert float(f"{rounded:.2f}") == rounded


def test_no_answerable_questions(make_judgment: Make) -> None:
    quality = assess([make_judgment("a", "Is there a pet policy?", quote=None)])
    assert quality.detectable_difference is None
    assert not quality.can_support(1.0)
    assert _codes(quality)["no-answerable"] == CAUTION
    assert "no difference is detectable" in quality.summary()


def test_small_set_caution_and_large_set_info(make_judgment: Make) -> None:
    assert _codes(assess(_set(make_judgment, 50)))["small-set"] == CAUTION
    big = assess(_set(make_judgment, 800))
    assert "small-set" not in _codes(big)
    assert "detection-floor" in _codes(big)


def test_questions_needed_is_the_smallest_sufficient_n() -> None:
    for gap in (0.05, 0.1, 0.2, 0.37):
        n = questions_needed(gap)
        assert minimum_detectable_difference(n) <= gap
        assert n == 1 or minimum_detectable_difference(n - 1) > gap
    with pytest.raises(EvalSetError):
        questions_needed(0.0)


def test_paired_caveat_is_stated(make_judgment: Make) -> None:
    notes = {n.code: n.message for n in assess(_set(make_judgment, 30)).warnings()}
    assert "unpaired" in notes["paired-floor"]
    assert "±1" in notes["paired-floor"]


def test_review_coverage(make_judgment: Make) -> None:
    items = _set(make_judgment, 10)
    assert _codes(assess(items))["low-review-coverage"] == CAUTION
    half = [j.model_copy(update={"meta": {"reviewed": i < 7}}) for i, j in enumerate(items)]
    assert _codes(assess(half))["low-review-coverage"] == "INFO"
    full = [j.model_copy(update={"meta": {"reviewed": True}}) for j in items]
    assert "low-review-coverage" not in _codes(assess(full))


def test_discriminating_power_from_one_baseline(make_judgment: Make) -> None:
    items = _set(make_judgment, 4)
    scores = {"q0": 1.0, "q1": 0.5, "q2": 0.0, "q3": 0.75, "stray": 1.0}
    quality = assess(items, baseline_scores=scores)
    assert quality.discriminating_power == {"q0": 0.0, "q1": 1.0, "q2": 0.0, "q3": 0.5}
    assert quality.aced_by_all == ("q0",)
    assert quality.mean_discriminating_power == pytest.approx(0.375)
    codes = _codes(quality)
    assert codes["non-discriminating"] == CAUTION
    assert "scores-unknown-ids" in codes


def test_aced_by_all_needs_every_system(make_judgment: Make) -> None:
    items = _set(make_judgment, 3)
    quality = assess(items, baseline_scores={"q0": [1.0, 1.0], "q1": [1.0, 0.0], "q2": [0.2, 0.4]})
    assert quality.aced_by_all == ("q0",)
    assert quality.system_count == 2
    assert quality.discriminating_power["q1"] == 1.0


@pytest.mark.parametrize("bad", [1.5, -0.1, math.nan, "high"])
def test_bad_scores_name_the_query(make_judgment: Make, bad: object) -> None:
    with pytest.raises(EvalSetError, match="q0"):
        assess(_set(make_judgment, 2), baseline_scores={"q0": bad})  # type: ignore[dict-item]


def test_report_gives_observed_paired_floor_and_constant_questions(
    make_judgment: Make, make_report: Callable[..., EvalReport]
) -> None:
    items = _set(make_judgment, 6)
    base = {"q0": 1.0, "q1": 0.0, "q2": 0.5, "q3": 1.0, "q4": 0.0, "q5": 0.2}
    dense = {"q0": 1.0, "q1": 1.0, "q2": 0.5, "q3": 0.0, "q4": 0.0, "q5": 0.4}
    hybrid = {"q0": 1.0, "q1": 1.0, "q2": 0.5, "q3": 1.0, "q4": 0.0, "q5": 0.3}
    report = make_report(items, {"bm25": base, "dense": dense, "hybrid": hybrid}, "recall@10")
    quality = assess(items, report=report)
    assert quality.metric == "recall@10"
    deltas = [dense[q] - base[q] for q in base]
    assert quality.paired_observed["dense"] == pytest.approx(
        paired_minimum_detectable_difference(deltas)
    )
    assert set(quality.paired_observed) == {"dense", "hybrid"}
    assert quality.constant_across_stages == ("q0", "q2", "q4")
    assert quality.aced_by_all == ("q0",)
    assert quality.system_count == 3
    notes = {n.code: n.message for n in quality.warnings()}
    assert "dense vs bm25" in notes["paired-floor"]
    assert "same-across-stages" in notes


def test_report_with_one_stage_says_it_cannot_compare(
    make_judgment: Make, make_report: Callable[..., EvalReport]
) -> None:
    items = _set(make_judgment, 3)
    report = make_report(items, {"bm25": {"q0": 1.0, "q1": 0.0, "q2": 1.0}}, "hit@10")
    quality = assess(items, report=report)
    assert "single-stage" in _codes(quality)
    assert quality.paired_observed == {}


def test_report_errors(make_judgment: Make, make_report: Callable[..., EvalReport]) -> None:
    items = _set(make_judgment, 3)
    report = make_report(items, {"bm25": {"q0": 1.0}}, "hit@10")
    with pytest.raises(EvalSetError, match="mrr"):
        assess(items, report=report, metric="mrr")
    other = [make_judgment("zz", "What is the other thing in question?")]
    with pytest.raises(EvalSetError, match="shares no query id"):
        assess(other, report=report)


def test_portability_against_corpus(make_judgment: Make) -> None:
    corpus = Corpus.from_texts({"doc.md": "Here is the evidence for it."})
    items = [
        make_judgment("a", "What is the first thing here?"),
        make_judgment("b", "What is the second thing here?", quote="not in the text"),
    ]
    quality = assess(items, corpus=corpus)
    assert quality.portable == 1
    assert quality.unresolved_ids == ("b",)
    assert _codes(quality)["unresolved-gold"] == CAUTION
    assert "1 portable" in quality.summary()


def test_dominant_type_needs_ten_and_seventy_percent(make_judgment: Make) -> None:
    items = [
        make_judgment(
            f"q{i}", f"What is item {i} about here?", qtype="factoid" if i < 8 else "numeric"
        )
        for i in range(10)
    ]
    assert _codes(assess(items))["dominant-type"] == CAUTION
    assert "dominant-type" not in _codes(assess(items[:9]))
    balanced = [
        j.model_copy(update={"qtype": "numeric"}) if i < 4 else j for i, j in enumerate(items)
    ]
    assert "dominant-type" not in _codes(assess(balanced))


def test_general_knowledge_check(make_judgment: Make) -> None:
    items = [
        make_judgment("a", "What is the capital city of France?", answer="Paris"),
        make_judgment("b", "What is the reimbursement cap for hotels?", answer="180 euros a night"),
        make_judgment("c", "Who signs off on the budget each year?"),
    ]

    def answerer(question: str) -> str:
        return "Paris." if "France" in question else "I do not know."

    quality = assess(items, answerer=answerer)
    assert quality.closed_book_answerable == ("a",)
    assert quality.closed_book_checked == 2
    codes = _codes(quality)
    assert codes["general-knowledge"] == CAUTION
    assert "no-reference-answer" in codes
    assert "general-knowledge-unchecked" not in codes
    assert _codes(assess(items))["general-knowledge-unchecked"] == CAUTION


def test_duplicate_ids_refused(make_judgment: Make) -> None:
    item = make_judgment("a", "What is the leave policy?")
    with pytest.raises(EvalSetError, match="a: query id appears twice"):
        assess([item, item])


def test_summary_is_one_line_and_warnings_cautions_first(make_judgment: Make) -> None:
    quality = assess(_set(make_judgment, 12))
    assert "\n" not in quality.summary()
    levels = [note.level for note in quality.warnings()]
    assert levels == sorted(levels, key=lambda level: level != CAUTION)
    assert str(quality.warnings()[0]).startswith("CAUTION: ")
