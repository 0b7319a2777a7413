from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.evalset import CAUTION, EvalSetError, FilterChain, default_filters, set_version
from groundkit.evalset.filters import (
    DanglingReferenceFilter,
    GeneralKnowledgeFilter,
    NearDuplicateFilter,
    NonDiscriminatingFilter,
    TooShortFilter,
    UnresolvedEvidenceFilter,
    dangling_pronoun,
)
from groundkit.evalset.filters._text import jaccard, word_set
from groundkit.judgments import Corpus, Judgment, dump_judgments, load_judgments, resolve_judgments

Make = Callable[..., Judgment]


def test_three_question_example(make_judgment: Make) -> None:
    items = [
        make_judgment("q1", "How many days of paid leave do employees get?"),
        make_judgment("q2", "How many days of paid leave do employees get each?"),
        make_judgment("q3", "Leave?"),
    ]
    result = FilterChain(default_filters()).run(items)
    assert result.kept_count == 1
    assert result.rejected_count == 2
    assert [j.query_id for j in result.kept] == ["q1"]
    assert {(r.filter, r.query_id) for r in result.rejected} == {
        ("too-short", "q3"),
        ("near-duplicate", "q2"),
    }
    assert "near-duplicate of q1" in next(r.reason for r in result.rejected if r.query_id == "q2")
    messages = [str(note) for note in result.warnings]
    assert any(m.startswith("CAUTION: general-knowledge did not run") for m in messages), messages
    codes = {note.code for note in result.warnings}
    assert {"most-rejected", "few-kept", "filter-did-not-run"} <= codes
    assert result.by_filter() == {
        "too-short": 1,
        "dangling-reference": 0,
        "unresolved-evidence": 0,
        "near-duplicate": 1,
        "non-discriminating": 0,
        "general-knowledge": 0,
    }
    assert result.summary().startswith("kept 1 of 3, rejected 2 (too-short 1, near-duplicate 1)")


def test_default_order_is_cheap_first() -> None:
    assert [f.name for f in default_filters()] == [
        "too-short",
        "dangling-reference",
        "unresolved-evidence",
        "near-duplicate",
        "non-discriminating",
        "general-knowledge",
    ]


def test_each_filter_runs_on_previous_survivors(make_judgment: Make) -> None:
    calls: list[str] = []

    def answerer(question: str) -> str:
        calls.append(question)
        return "no idea"

    items = [
        make_judgment("a", "Short one?", answer="x"),
        make_judgment("b", "What is the hotel cap for business trips?", answer="180 euros"),
    ]
    FilterChain([TooShortFilter(), GeneralKnowledgeFilter(answerer)]).run(items)
    assert calls == ["What is the hotel cap for business trips?"]


def test_too_short_counts_words(make_judgment: Make) -> None:
    items = [
        make_judgment("a", "Leave policy details?"),
        make_judgment("b", "What is leave policy?"),
    ]
    outcome = TooShortFilter().apply(items)
    assert [j.query_id for j in outcome.kept] == ["b"]
    assert "3 word(s)" in outcome.rejected[0].reason
    with pytest.raises(EvalSetError):
        TooShortFilter(0)


@pytest.mark.parametrize(
    ("question", "pronoun"),
    [
        ("What does it cover?", "it"),
        ("Is this mandatory for contractors?", "this"),
        ("When did they change that policy?", "they"),
        ("How much does she earn per year?", "she"),
        ("What are those limits for travel?", "those"),
        ("Explain how it works in practice", "it"),
        ("What is the leave policy and who approves it?", None),
        ("Is it true that unused leave rolls over?", None),
        ("It is not proven that candy lowers heart disease risk", None),
        ("Is it mandatory?", "it"),
        ("Is it mandatory to attend the all-hands?", None),
        ("How long does it take to get reimbursed?", None),
        ("What is this year's travel budget?", None),
        ("Who approves expenses that exceed the budget?", None),
        ("Which team owns the on-call rota and what do they do?", None),
    ],
)
def test_dangling_pronoun(question: str, pronoun: str | None) -> None:
    assert dangling_pronoun(question) == pronoun


def test_dangling_filter_reason(make_judgment: Make) -> None:
    outcome = DanglingReferenceFilter().apply([make_judgment("a", "What does it cover exactly?")])
    assert outcome.rejected[0].filter == "dangling-reference"
    assert "'it' refers to nothing named" in outcome.rejected[0].reason


def test_unresolved_evidence_stands_down_without_resolution(make_judgment: Make) -> None:
    outcome = UnresolvedEvidenceFilter().apply([make_judgment("a", "What is the leave policy?")])
    assert len(outcome.kept) == 1
    assert outcome.notes[0].level == CAUTION
    assert "did not run" in outcome.notes[0].message


def test_unresolved_evidence_with_resolution(make_judgment: Make) -> None:
    corpus = Corpus.from_texts({"doc.md": "Here is the evidence."})
    items = [
        make_judgment("a", "What is the first one here?"),
        make_judgment("b", "What is the second one here?", quote="missing passage"),
        make_judgment("c", "Is there anything on pets here?", quote=None),
        make_judgment("d", "What is the fourth one here?"),
    ]
    resolved = resolve_judgments(items[:3], corpus)
    outcome = UnresolvedEvidenceFilter(resolved).apply(items)
    assert [j.query_id for j in outcome.kept] == ["a", "c", "d"]
    assert outcome.rejected[0].query_id == "b"
    assert "gold[0] (doc.md)" in outcome.rejected[0].reason
    assert "d" in outcome.notes[0].message  # not in the resolution: kept, said so
    by_flags = UnresolvedEvidenceFilter({"a": [True], "b": [False]}).apply(items[:2])
    assert [r.query_id for r in by_flags.rejected] == ["b"]


def _brute_near_duplicates(questions: list[str], threshold: float) -> list[int]:
    kept: list[frozenset[str]] = []
    rejected: list[int] = []
    for index, question in enumerate(questions):
        current = word_set(question)
        if any(jaccard(current, other) >= threshold for other in kept):
            rejected.append(index)
        else:
            kept.append(current)
    return rejected


_WORDS = st.sampled_from(["leave", "pay", "days", "how", "many", "the", "of", "policy", "a", "b"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(_WORDS, min_size=0, max_size=7), min_size=1, max_size=25),
    st.sampled_from([0.5, 0.6, 0.8, 1.0]),
)
def test_near_duplicate_matches_brute_force(
    make_judgment: Make, sentences: list[list[str]], threshold: float
) -> None:
    questions = [" ".join(words) or "?" for words in sentences]
    items = [make_judgment(f"q{i}", question) for i, question in enumerate(questions)]
    outcome = NearDuplicateFilter(threshold).apply(items)
    rejected = [int(r.query_id[1:]) for r in outcome.rejected]
    assert rejected == _brute_near_duplicates(questions, threshold)


def test_near_duplicate_is_order_dependent(make_judgment: Make) -> None:
    a = make_judgment("a", "one two three four five")
    b = make_judgment("b", "one two three four five six")
    assert [r.query_id for r in NearDuplicateFilter().apply([a, b]).rejected] == ["b"]
    assert [r.query_id for r in NearDuplicateFilter().apply([b, a]).rejected] == ["a"]


def test_non_discriminating(make_judgment: Make) -> None:
    items = [make_judgment(f"q{i}", f"What is policy number {i}?") for i in range(4)]
    no_scores = NonDiscriminatingFilter().apply(items)
    assert len(no_scores.kept) == 4
    assert no_scores.notes[0].level == CAUTION
    outcome = NonDiscriminatingFilter({"q0": 1.0, "q1": 0.5, "q2": [1.0, 0.0]}).apply(items)
    assert [r.query_id for r in outcome.rejected] == ["q0"]
    assert "the baseline scored" in outcome.rejected[0].reason
    assert "1 answerable item(s) have no baseline score" in outcome.notes[0].message
    lenient = NonDiscriminatingFilter({"q1": 0.9}, threshold=0.9).apply(items)
    assert [r.query_id for r in lenient.rejected] == ["q1"]


def test_general_knowledge(make_judgment: Make) -> None:
    items = [
        make_judgment("a", "What is the capital city of France?", answer="Paris"),
        make_judgment("b", "What is the hotel cap in Berlin?", answer="180 euros per night"),
        make_judgment("c", "Who signs the yearly budget off?"),
    ]
    answers = {"a": "The capital of France is Paris.", "b": "Probably 100 dollars."}
    questions = {j.query: j.query_id for j in items}

    def answerer(question: str) -> str:
        return answers[questions[question]]

    outcome = GeneralKnowledgeFilter(answerer).apply(items)
    assert [r.query_id for r in outcome.rejected] == ["a"]
    assert "answered without retrieval" in outcome.rejected[0].reason
    assert [j.query_id for j in outcome.kept] == ["b", "c"]
    assert "no reference answer" in outcome.notes[0].message


def test_chain_refuses_duplicates(make_judgment: Make) -> None:
    item = make_judgment("a", "What is the leave policy?")
    with pytest.raises(EvalSetError, match="twice"):
        FilterChain(default_filters()).run([item, item])
    with pytest.raises(EvalSetError, match="once"):
        FilterChain([TooShortFilter(), TooShortFilter()])


def test_as_judgments_bumps_version_and_round_trips(make_judgment: Make, tmp_path: Path) -> None:
    items = [
        make_judgment(f"q{i}", f"What does {topic} say about {subject}?", meta={"set_version": 2})
        for i, (topic, subject) in enumerate(
            (t, s)
            for t in ("the travel policy", "the leave guide", "the handbook", "the wiki")
            for s in (
                "hotels",
                "trains",
                "meals",
                "taxis",
                "visas",
                "laptops",
                "phones",
                "pets",
                "badges",
                "parking",
            )
        )
    ]
    result = FilterChain(default_filters()).run(items)
    assert result.input_version == 2
    assert "few-kept" not in {note.code for note in result.warnings}
    kept = result.as_judgments()
    assert set_version(kept) == 3
    assert all(j.meta["set_version"] == 3 for j in kept)
    path = tmp_path / "kept.jsonl"
    dump_judgments(kept, path)
    assert set_version(load_judgments(path)) == 3
