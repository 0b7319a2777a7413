"""Duplicate hits: the vectorised finder agrees with a brute-force definition."""

from __future__ import annotations

import numpy as np
import pytest
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


def test_whitespace_is_that_of_str_split() -> None:
    from groundkit.harness._duplicates import _whitespace

    every = np.arange(0x110000, dtype=np.uint32)
    expected = np.fromiter((chr(c).isspace() for c in range(0x110000)), np.bool_, 0x110000)
    assert np.array_equal(_whitespace(every), expected)
    assert np.array_equal(_whitespace(every[:128].astype(np.uint8)), expected[:128])


unicode_words = st.sampled_from(
    ["straße", "STRASSE", "Strasse", "ΣΊΣΥΦΟΣ", "σίσυφος", "ǅ", "ǆ", "😀", "a\x00", "a", "İ", "i̇"]
)
unicode_spaces = st.sampled_from([" ", "\u00a0", "\u2003", "\x1c", "\x85", "\u3000", "\u200b"])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(unicode_words | words, unicode_spaces), max_size=12).map(
            lambda parts: "".join(w + s for w, s in parts)
        ),
        min_size=1,
        max_size=10,
    )
)
def test_non_ascii_text_matches_brute_force(corpus: list[str]) -> None:
    # Case folding that changes lengths (ß -> ss), astral code points, NUL, and every kind of
    # Unicode whitespace, including U+200B, which str.split() does not split on.
    finder = DuplicateFinder(corpus)
    codes = np.arange(len(corpus), dtype=np.int64)
    ends = np.asarray([len(t) for t in corpus], dtype=np.int64)
    result = finder.duplicate_of(codes, np.zeros(len(corpus), dtype=np.int64), ends)
    assert result == _brute_force(corpus)


def _near_copies(count: int) -> list[str]:
    base = [" ".join(f"w{i}x{j}" for j in range(40)) for i in range(count)]
    out = []
    for text in base:
        out += [text, text.replace("x5 ", "y5 "), text.upper(), text[: len(text) // 2]]
    return out


def test_whole_run_matches_list_by_list(monkeypatch: pytest.MonkeyPatch) -> None:
    import groundkit.harness._duplicates as module

    corpus = _near_copies(6)
    rng = np.random.default_rng(3)
    lists = []
    for _ in range(12):
        docs = rng.integers(0, len(corpus), size=int(rng.integers(0, 15))).astype(np.int64)
        starts = np.asarray([int(rng.integers(0, 5)) for _ in docs], dtype=np.int64)
        ends = np.asarray([len(corpus[d]) for d in docs], dtype=np.int64)
        lists.append((docs, starts, ends))
    expected = [_brute_force([corpus[d][s:e] for d, s, e in zip(*x, strict=True)]) for x in lists]
    assert sum(rank is not None for ranks in expected for rank in ranks) > 5
    bounds = np.cumsum([0, *(x[0].size for x in lists)]).astype(np.int64)
    flat = [np.concatenate([x[i] for x in lists]) for i in range(3)]
    # Small batches and sort groups: words hashed in different batches must get the same ids.
    monkeypatch.setattr(module, "_BATCH_CHARS", 300)
    monkeypatch.setattr(module, "_SPANS_PER_SORT", 4)
    assert (
        DuplicateFinder(corpus).duplicates_in_lists(flat[0], flat[1], flat[2], bounds) == expected
    )
    # Spans cached by earlier builds (another order key table) give the same answers.
    finder = DuplicateFinder(corpus)
    finder.prefetch(flat[0][:20], flat[1][:20], flat[2][:20])
    assert [finder.duplicate_of(*x) for x in lists] == expected


def test_equal_hashes_of_different_texts_are_not_duplicates() -> None:
    corpus = ["one two three", "four five six", "one two three", "ONE two  THREE"]
    finder = DuplicateFinder(corpus)
    codes, starts = np.arange(4), np.zeros(4, dtype=np.int64)
    ends = np.asarray([len(t) for t in corpus])
    finder.prefetch(codes, starts, ends)
    # Every text hash made equal: only the comparison of the words can tell the texts apart.
    for key, (_, shingles, prefix) in list(finder._cache.items()):
        finder._cache[key] = (7, shingles, prefix)
    assert finder.duplicate_of(codes, starts, ends) == [None, None, 1, 1]
