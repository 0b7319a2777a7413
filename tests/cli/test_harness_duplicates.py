"""Duplicate hits: the vectorised finder agrees with a brute-force definition."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.harness._duplicates import JACCARD_THRESHOLD, DuplicateFinder


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = text.casefold().split()
    if len(words) < 3:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _brute_force(texts: list[str]) -> list[int | None]:
    out: list[int | None] = []
    for j, text in enumerate(texts):
        found = None
        for i in range(j):
            same = text.casefold().split() == texts[i].casefold().split() and text.split()
            a, b = _shingles(texts[i]), _shingles(text)
            union = len(a | b)
            if same or (union and len(a & b) >= JACCARD_THRESHOLD * union):
                found = i + 1
                break
        out.append(found)
    return out


words = st.sampled_from(["alpha", "Beta", "beta", "gamma", "delta", "eps", "zeta", "eta"])
texts = st.lists(words, min_size=0, max_size=30).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, min_size=1, max_size=12), st.integers(0, 3))
def test_matches_brute_force(base: list[str], copies: int) -> None:
    # Add near copies (one word changed in a long text) so that the threshold is exercised.
    corpus = list(base)
    for text in base[:copies]:
        parts = text.split()
        if parts:
            parts[len(parts) // 2] = "omega"
        corpus.append(" ".join(parts))
    finder = DuplicateFinder(corpus)
    codes = np.arange(len(corpus), dtype=np.int64)
    starts = np.zeros(len(corpus), dtype=np.int64)
    ends = np.asarray([len(t) for t in corpus], dtype=np.int64)
    assert finder.duplicate_of(codes, starts, ends) == _brute_force(corpus)


def test_near_copy_of_a_long_text() -> None:
    long = " ".join(f"word{i}" for i in range(60))
    near = long.replace("word30 ", "changed ")  # 3 of 58 shingles differ: 55/61 = 0.902
    far = near.replace("word10 ", "other ")  # 6 differ: 52/64 = 0.81
    nearer = long + " extra"  # 58 of 59 shingles shared
    corpus = [long, "unrelated text here", far, near, nearer, long.upper()]
    finder = DuplicateFinder(corpus)
    result = finder.duplicate_of(
        np.arange(6), np.zeros(6, dtype=np.int64), np.asarray([len(t) for t in corpus])
    )
    assert result == [None, None, None, 1, 1, 1]
