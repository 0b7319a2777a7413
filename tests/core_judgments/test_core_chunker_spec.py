"""The text form of a chunker: one parser for --chunker, @CHUNKER and config files."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundkit.judgments import (
    CharsChunker,
    DocumentChunker,
    JudgmentError,
    ParagraphsChunker,
    SentencesChunker,
    TokensChunker,
    chunker_spec,
    parse_chunker_spec,
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("document", DocumentChunker()),
        ("paragraphs", ParagraphsChunker()),
        ("paragraphs:500", ParagraphsChunker(max_chars=500)),
        ("sentences:3", SentencesChunker(max_sentences=3)),
        ("sentences:3:600", SentencesChunker(max_sentences=3, max_chars=600)),
        ("chars:800:100", CharsChunker(size=800, overlap=100)),
        ("chars:800", CharsChunker(size=800, overlap=0)),
        ("tokens:128:16", TokensChunker(size=128, overlap=16)),
        (" chars:50 ", CharsChunker(size=50, overlap=0)),
    ],
)
def test_specs(spec: str, expected: object) -> None:
    assert parse_chunker_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("chars", "chunker 'chars': expected chars:SIZE:OVERLAP"),
        ("chars:0", "chunker 'chars:0': size must be positive"),
        ("chars:100:100", "overlap (100) must be smaller than size (100)"),
        ("document:5", "expected document"),
        ("tokens:-3", "size must be a whole number, got '-3'"),
        ("words:4", "unknown kind 'words' (use document, paragraphs, sentences, chars, tokens)"),
    ],
)
def test_bad_specs_say_why_in_one_line(spec: str, message: str) -> None:
    with pytest.raises(JudgmentError) as raised:
        parse_chunker_spec(spec)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


CHUNKERS = st.one_of(
    st.just(DocumentChunker()),
    st.builds(ParagraphsChunker, max_chars=st.integers(1, 10_000)),
    st.builds(SentencesChunker, max_sentences=st.integers(1, 50)),
    st.builds(SentencesChunker, max_sentences=st.integers(1, 50), max_chars=st.integers(1, 10_000)),
    st.integers(1, 5000).flatmap(
        lambda size: st.builds(CharsChunker, size=st.just(size), overlap=st.integers(0, size - 1))
    ),
    st.integers(1, 500).flatmap(
        lambda size: st.builds(TokensChunker, size=st.just(size), overlap=st.integers(0, size - 1))
    ),
)


@given(CHUNKERS)
def test_text_form_round_trips(chunker: object) -> None:
    assert parse_chunker_spec(chunker_spec(chunker)) == chunker  # type: ignore[arg-type]


def test_a_chunker_without_text_form_says_so() -> None:
    with pytest.raises(JudgmentError, match="no text form"):
        chunker_spec(SentencesChunker(max_sentences=None, max_chars=300))
