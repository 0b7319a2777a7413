from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundkit.evalset import Classifier
from groundkit.evalset.filters import (
    QUESTION_TYPES,
    heuristic_type,
    normalise_type,
    type_distribution,
)
from groundkit.judgments import Judgment

Make = Callable[..., Judgment]


@pytest.mark.parametrize(
    ("question", "qtype"),
    [
        ("Summarise the travel expenses policy", "summarisation"),
        ("Give an overview of how the on-call rota compares to last year", "summarisation"),
        ("How does paid time off differ from sick leave?", "comparative"),
        ("Is the 2021 travel policy stricter than the current one?", "comparative"),
        ("Which column of the table lists the hotel caps?", "tabular"),
        ("How many days of parental leave can a parent take?", "numeric"),
        ("What percentage of expenses needs a receipt?", "numeric"),
        ("Who leads the team that owns the release process?", "multi-hop"),
        ("Whose approval does a design doc need?", "multi-hop"),
        ("Who approves hotel bookings?", "factoid"),
    ],
)
def test_heuristic(question: str, qtype: str) -> None:
    assert heuristic_type(question) == qtype


def test_most_specific_first() -> None:
    # numeric and comparative cues together: comparative wins (it comes first).
    assert (
        heuristic_type("How many more days than sick leave does parental leave give?")
        == "comparative"
    )


@given(st.text(max_size=80))
def test_heuristic_always_returns_a_known_type(question: str) -> None:
    assert heuristic_type(question) in QUESTION_TYPES


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("numeric", "numeric"),
        ("  Numeric.\n", "numeric"),
        ('"comparative"', "comparative"),
        ("Summarization", "summarisation"),
        ("multi hop", "multi-hop"),
        ("Type: factoid", "factoid"),
        ("I think it is numeric", None),
        ("numeric or factoid", None),
        ("opinion", None),
        ("", None),
    ],
)
def test_normalise_type(reply: str, expected: str | None) -> None:
    assert normalise_type(reply) == expected


def test_model_reply_accepted_when_known(make_judgment: Make) -> None:
    prompts: list[str] = []

    def model(prompt: str) -> str:
        prompts.append(prompt)
        return "multi-hop"

    classifier = Classifier(model)
    labelled = classifier.classify([make_judgment("a", "Who approves hotel bookings?")])
    assert labelled[0].qtype == "multi-hop"
    assert labelled[0].meta["qtype_source"] == "model"
    assert "Who approves hotel bookings?" in prompts[0]
    assert (classifier.model_replies, classifier.model_fallbacks) == (1, 0)


def test_model_reply_unknown_falls_back_to_heuristic(make_judgment: Make) -> None:
    classifier = Classifier(lambda prompt: "This is a question about numbers.")
    labelled = classifier.classify([make_judgment("a", "How many days of leave are there?")])
    assert labelled[0].qtype == "numeric"
    assert labelled[0].meta["qtype_source"] == "heuristic"
    assert classifier.model_fallbacks == 1


def test_person_type_kept_unless_overwrite(make_judgment: Make) -> None:
    by_hand = make_judgment("a", "How many days of leave are there?", qtype="factoid")
    reviewer = make_judgment(
        "b",
        "How many days of leave are there now?",
        qtype="tabular",
        meta={"qtype_source": "person"},
    )
    machine = make_judgment(
        "c",
        "How many days of leave are there again?",
        qtype="factoid",
        meta={"qtype_source": "heuristic"},
    )
    kept = Classifier().classify([by_hand, reviewer, machine])
    assert [j.qtype for j in kept] == ["factoid", "tabular", "numeric"]
    assert kept[0] is by_hand
    replaced = Classifier(overwrite=True).classify([by_hand, reviewer])
    assert [j.qtype for j in replaced] == ["numeric", "numeric"]


def test_type_distribution(make_judgment: Make) -> None:
    items = [
        make_judgment("a", "One question here?", qtype="numeric"),
        make_judgment("b", "Two question here?", qtype="numeric"),
        make_judgment("c", "Three question here?", qtype="factoid"),
        make_judgment("d", "Four question here?"),
    ]
    distribution = type_distribution(items)
    assert distribution == {"numeric": 2, "factoid": 1, "unlabelled": 1}
    assert list(distribution) == ["numeric", "factoid", "unlabelled"]
    assert type_distribution([]) == {}
