from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundkit.evalset import EvalSetError, draft_questions, split_passages
from groundkit.judgments import Corpus

CORPUS = {
    "policies/travel.md": "Hotels are capped at 180 euros a night in Berlin.\n\n"
    "Trains must be booked in second class unless the trip is longer than four hours.",
    "policies/leave.md": "Staff get 25 days of paid leave a year.",
}


def _reply(question: str, quote: str, answer: str = "an answer") -> str:
    return json.dumps({"question": question, "quote": quote, "answer": answer})


def test_drafts_carry_resolving_quotes_and_are_unreviewed() -> None:
    replies = iter(
        [
            # policies/leave.md (documents are visited in sorted order)
            "```json\n"
            + _reply("How many days of paid leave do staff get?", "25 days of paid leave")
            + "\n```",
            # policies/travel.md, passage 1 and 2
            _reply("What is the hotel cap in Berlin?", "capped at 180 euros a night"),
            _reply("When may trains be booked in first class?", "first class is always allowed"),
        ]
    )
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return next(replies)

    result = draft_questions(CORPUS, ask, per_doc=2, passage_chars=90, meta={"model": "m"})
    assert result.asked == 3
    assert [j.query_id for j in result.judgments] == [
        "gen-policies-leave-md-1",
        "gen-policies-travel-md-1",
    ]
    first = result.judgments[0]
    assert first.meta == {"model": "m", "reviewed": False, "source": "generated"}
    assert first.gold[0].doc == "policies/leave.md"
    assert first.answer == "an answer"
    assert result.unresolved_count == 1
    assert "not in the document" in result.dropped[0].detail
    assert "Hotels are capped" in prompts[1]
    assert "Trains must be booked" in prompts[2]
    assert "drafted 2" in result.summary()


def test_tolerant_quote_resolution_accepts_whitespace_changes() -> None:
    corpus = Corpus.from_texts({"a.md": "Staff get 25\n days of paid leave a year."})
    result = draft_questions(
        corpus, lambda p: _reply("How many days of leave do staff get?", "25 days of paid leave")
    )
    assert len(result.judgments) == 1


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all",
        "[1, 2]",
        '{"question": "", "quote": "x"}',
        '{"question": "Q?"}',
        "{broken",
    ],
)
def test_malformed_replies_are_dropped_and_counted(reply: str) -> None:
    result = draft_questions({"a.md": "Some text of the document."}, lambda p: reply)
    assert result.judgments == ()
    assert result.malformed_count == 1


def test_bad_arguments() -> None:
    with pytest.raises(EvalSetError, match="per_doc"):
        draft_questions(CORPUS, lambda p: "", per_doc=0)
    with pytest.raises(EvalSetError, match="kebab"):
        draft_questions(CORPUS, lambda p: "", id_prefix="Bad Prefix")


@given(st.text(alphabet=st.sampled_from("ab \n"), max_size=300), st.integers(1, 50))
def test_split_passages_respects_the_limit_and_keeps_words(text: str, limit: int) -> None:
    passages = split_passages(text, limit)
    assert all(0 < len(p) <= limit for p in passages)
    assert "".join(" ".join(passages).split()) == "".join(text.split())
