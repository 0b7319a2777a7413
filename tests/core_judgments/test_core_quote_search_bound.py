"""A gold quote absent from a 10 MB document: "not found" plus a closest passage, in bounded work.

Before the bound, scoring the closest passage compared every candidate window with the whole
quote: a near-copy of a 1 MB document took 82 s (quadratic). The work is now counted: at most
40 windows, each compared on at most 2,000 quote characters. One loose timing check remains.
"""

from __future__ import annotations

import random
import time

import pytest

from groundkit.judgments import GoldQuote, Judgment
from groundkit.judgments.gold import _closest, resolve_judgments

MEGABYTES = 10


@pytest.fixture(scope="module")
def document() -> str:
    rng = random.Random(5)
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(3_000)
    ]
    words = rng.choices(vocabulary, k=MEGABYTES * 200_000)
    return " ".join(words)[: MEGABYTES * 1_000_000]


class _Counting:
    """Wraps the closest-passage search to record its work."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.windows: list[int] = []
        self.scorers: list[_closest._BoundedScorer] = []
        starts = _closest._candidate_starts
        scorer = _closest._BoundedScorer

        def candidate_starts(text: str, quote: str, width: int) -> list[int]:
            found = starts(text, quote, width)
            self.windows.append(len(found))
            return found

        def bounded_scorer(quote: str, width: int) -> _closest._BoundedScorer:
            made = scorer(quote, width)
            self.scorers.append(made)
            return made

        monkeypatch.setattr(_closest, "_candidate_starts", candidate_starts)
        monkeypatch.setattr(_closest, "_BoundedScorer", bounded_scorer)

    @property
    def work(self) -> int:
        return sum(scorer.work for scorer in self.scorers)


def _resolve(document: str, quote: str) -> tuple[float, object]:
    judgment = Judgment(query_id="q", query="?", gold=(GoldQuote(doc="big.txt", quote=quote),))
    started = time.perf_counter()
    [result] = resolve_judgments([judgment], {"big.txt": document})
    return time.perf_counter() - started, result.quotes[0]


@pytest.mark.parametrize("kind", ["sentence", "long passage", "near-copy of the document"])
def test_an_absent_quote_is_answered_with_bounded_work(
    document: str, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    if kind == "sentence":
        quote = document[4_000_000:4_000_100] + " zebraquux"
    elif kind == "long passage":
        passage = document[6_000_000:6_050_000]
        quote = passage[:25_000] + "#" + passage[25_001:]
    else:
        quote = "#" + document[1:]
    counting = _Counting(monkeypatch)
    elapsed, found = _resolve(document, quote)
    assert found.unresolved == "not-found"
    assert found.closest
    assert found.similarity > 0.9
    # The work does not grow with the document or the quote: 40 windows x 2,000 x 2,000.
    assert counting.windows
    assert max(counting.windows) <= _closest._MAX_CANDIDATES
    assert counting.work <= _closest._MAX_CANDIDATES * _closest._MAX_SCORED**2
    # Loose: measured 0.3-0.8 s on a quiet machine; the near-copy took hours before the bound.
    assert elapsed < 8.0, f"{kind}: {elapsed:.2f} s"


def test_the_closest_passage_is_where_the_quote_was_edited(document: str) -> None:
    start = document.index(" ", 7_000_000) + 1
    passage = document[start : start + 3_000]
    quote = "".join("#" if i % 41 == 0 else char for i, char in enumerate(passage))
    _, found = _resolve(document, quote)
    closest = found.closest
    assert abs(document.index(closest) - start) < 20
    assert found.similarity > 0.95


def test_text_without_word_ends_gives_a_passage_of_the_quote_size() -> None:
    rng = random.Random(2)
    text = "".join(rng.choice("的是不了人我在有他这") for _ in range(1_000_000))
    _, found = _resolve(text, "这是一个不在文件里的句子")
    closest = found.closest
    # Widened by at most 40 characters a side, never to the whole document.
    assert 0 < len(closest) <= len("这是一个不在文件里的句子") + 2 * _closest._MAX_WIDEN


def test_exact_matches_are_unchanged(document: str) -> None:
    quote = document[5_000_000:5_000_200]
    _, found = _resolve(document, quote)
    assert found.method == "exact"
    spans = found.spans
    assert [(span.start, span.end) for span in spans][:1] == [
        (document.index(quote), document.index(quote) + 200)
    ]
