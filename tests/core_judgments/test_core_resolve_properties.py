"""Property tests of quote resolution: perturbed quotes still resolve, spans stay valid."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.judgments import Corpus
from groundkit.judgments.gold import locate_text, normalize_for_matching, resolve_quote

# Words mix ASCII, precomposed and decomposed accents, and the typography tolerance covers.
WORDS = st.lists(
    st.sampled_from(
        [
            "leave", "days", "café", "cafe\u0301", "naïve", "don't", "don\u2019t", '"quoted"',
            "\u201cquoted\u201d", "twenty-five", "twenty\u2013five", "wait...", "wait\u2026",
            "\ufb01le", "file", "25", "Émile", "x", "a",
        ]
    ),
    min_size=1,
    max_size=30,
)  # fmt: skip
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", "\u00a0", " \r\n "])
PERTURBATIONS = {
    " ": ["  ", "\n", "\u00a0", "\t ", " \n "],
    "'": ["\u2019", "\u2018"],
    "\u2019": ["'"],
    '"': ["\u201c", "\u201d"],
    "\u201c": ['"'],
    "\u201d": ['"'],
    "-": ["\u2013", "\u2014", "\u2212"],
    "\u2013": ["-"],
    "\u2026": ["..."],
}


@st.composite
def document_and_cut(draw: st.DrawFn) -> tuple[str, int, int]:
    """A document made of words and whitespace, and a cut [start, end) on word boundaries."""
    words = draw(WORDS)
    pieces: list[str] = []
    bounds: list[tuple[int, int]] = []
    position = 0
    for index, word in enumerate(words):
        if index:
            separator = draw(SEPARATORS)
            pieces.append(separator)
            position += len(separator)
        pieces.append(word)
        bounds.append((position, position + len(word)))
        position += len(word)
    first = draw(st.integers(0, len(words) - 1))
    last = draw(st.integers(first, len(words) - 1))
    return "".join(pieces), bounds[first][0], bounds[last][1]


@st.composite
def perturbed(draw: st.DrawFn, quote: str) -> str:
    """``quote`` with whitespace, typography and Unicode normal form changed."""
    out = []
    for char in quote:
        choices = PERTURBATIONS.get(char)
        out.append(draw(st.sampled_from([char, *choices])) if choices else char)
    text = "".join(out)
    form = draw(st.sampled_from(["NFC", "NFD", "as is"]))
    if form == "NFC":
        return unicodedata.normalize("NFC", text)
    return unicodedata.normalize("NFD", text) if form == "NFD" else text


@settings(max_examples=150, deadline=None)
@given(data=st.data(), sample=document_and_cut())
def test_perturbed_cut_resolves_to_equivalent_original_text(
    data: st.DataObject, sample: tuple[str, int, int]
) -> None:
    text, start, end = sample
    quote = data.draw(perturbed(text[start:end]))
    spans, method = resolve_quote(text, quote)
    assert method in {"exact", "tolerant"}
    assert spans, (text, quote)
    expected = normalize_for_matching(quote).strip(" ")
    previous_end = 0
    for span_start, span_end in spans:
        assert previous_end <= span_start < span_end <= len(text)
        previous_end = span_end
        assert normalize_for_matching(text[span_start:span_end]).strip(" ") == expected
    # The cut itself is covered (an earlier occurrence may overlap it, but it is never skipped),
    # unless the perturbed quote occurs verbatim elsewhere: the exact pass then wins by design.
    if method == "tolerant" or quote == text[start:end]:
        assert any(s < end and start < e for s, e in spans)
    else:
        assert all(text[s:e] == quote for s, e in spans)


_SPECIALS = ["\u00a0", "\u2019", "\u201c", "\u2014", "\u2026", "\u0301", "\u00e9", "\u00ad"]
ANY_TEXT = st.text(
    alphabet=st.sampled_from([*"ab e.-'\"\n\t", *_SPECIALS, "\u200b", "\ufb01", "\u3000"]),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(text=ANY_TEXT, quote=ANY_TEXT)
def test_spans_are_always_valid(text: str, quote: str) -> None:
    spans, method = resolve_quote(text, quote)
    assert (method is None) == (not spans)
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        previous_end = end
        if method == "exact":
            assert text[start:end] == quote
        else:
            assert normalize_for_matching(text[start:end]).strip(" ") == (
                normalize_for_matching(quote).strip(" ")
            )


@settings(max_examples=100, deadline=None)
@given(sample=document_and_cut(), other=WORDS)
def test_locate_text_finds_a_cut_anywhere_in_the_corpus(
    sample: tuple[str, int, int], other: list[str]
) -> None:
    text, start, end = sample
    corpus = Corpus.from_texts({"a.txt": " ".join(other), "b.txt": text})
    span = locate_text(corpus, None, text[start:end])
    assert span is not None
    assert 0 <= span.start < span.end <= len(corpus[span.doc])
    assert corpus[span.doc][span.start : span.end] == text[start:end]


# --- closest passage: the bit-parallel LCS against a plain dynamic programme ----------------


def _lcs_reference(a: str, b: str) -> int:
    previous = [0] * (len(b) + 1)
    for char in a:
        current = [0]
        for index, other in enumerate(b):
            current.append(
                previous[index] + 1 if char == other else max(previous[index + 1], current[-1])
            )
        previous = current
    return previous[-1]


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="abcé \n", max_size=90),
    st.text(alphabet="abcé \n", max_size=90),
)
def test_bit_parallel_lcs_equals_the_dynamic_programme(quote: str, other: str) -> None:
    from groundkit.judgments.gold._resolve import _LcsScorer

    scorer = _LcsScorer(quote)
    assert scorer.lcs(other) == _lcs_reference(quote, other)
    total = len(quote) + len(other)
    expected = 1.0 if total == 0 else 2 * _lcs_reference(quote, other) / total
    assert scorer.ratio(other) == pytest.approx(expected)


def test_unresolvable_long_quote_in_a_repetitive_document_is_bounded() -> None:
    import random
    import time

    from groundkit.judgments.gold import closest_passage

    rng = random.Random(1)
    vocabulary = [
        "the",
        "a",
        "of",
        "to",
        "and",
        "in",
        "is",
        "it",
        "that",
        "for",
        "on",
        "was",
        "with",
        "as",
        "be",
        "by",
    ]
    document = " ".join(rng.choice(vocabulary) for _ in range(40_000))[:200_000]
    quote = " ".join(rng.choice([*vocabulary, "zebra"]) for _ in range(1_000))[:3_000]
    started = time.perf_counter()
    found = closest_passage(document, quote)
    elapsed = time.perf_counter() - started
    assert found is not None
    assert elapsed < 1.0, f"closest passage took {elapsed:.2f} s"


def test_closest_passage_finds_an_edited_passage_where_it_is() -> None:
    import random

    from groundkit.judgments.gold import closest_passage

    rng = random.Random(7)
    words = [
        "".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 9))) for _ in range(500)
    ]
    document = " ".join(rng.choice(words) for _ in range(30_000))
    start = document.index(" ", 100_000) + 1
    passage = document[start : start + 3_000]
    quote = "".join("#" if i % 37 == 0 else c for i, c in enumerate(passage))
    found = closest_passage(document, quote)
    assert found is not None
    text, similarity = found
    assert similarity > 0.95
    assert abs(document.index(text) - start) < 20
