"""Chunker invariants (property-based) and hand-checked examples."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from groundkit.judgments import JudgmentError, parse_chunker_config, parse_chunker_spec
from groundkit.judgments.corpus._chunking import (
    CharsChunker,
    Chunk,
    DocumentChunker,
    ParagraphsChunker,
    SentencesChunker,
    TokensChunker,
    chunk_corpus,
    chunk_text,
)

_ALPHABET = st.sampled_from([*list("abc Xy.!?\n\t#  "), "Dr.", "e.g.", "\n\n", "# H\n", "   "])
texts = st.lists(_ALPHABET, max_size=120).map("".join)

chars_configs = st.integers(1, 40).flatmap(
    lambda size: st.builds(CharsChunker, size=st.just(size), overlap=st.integers(0, size - 1))
)
tokens_configs = st.integers(1, 8).flatmap(
    lambda size: st.builds(TokensChunker, size=st.just(size), overlap=st.integers(0, size - 1))
)
sentence_configs = st.builds(
    SentencesChunker,
    max_sentences=st.one_of(st.none(), st.integers(1, 4)),
    max_chars=st.integers(1, 60),
)
paragraph_configs = st.builds(ParagraphsChunker, max_chars=st.integers(1, 80))
any_config = st.one_of(
    st.just(DocumentChunker()), chars_configs, tokens_configs, sentence_configs, paragraph_configs
)


def _check_common(text: str, spans: list[tuple[int, int]]) -> None:
    covered = [False] * len(text)
    for start, end in spans:
        assert 0 <= start < end <= len(text), (start, end)
        assert text[start:end].strip(), "a chunk must hold some non-whitespace text"
        for i in range(start, end):
            covered[i] = True
    for i, char in enumerate(text):
        if not char.isspace():
            assert covered[i], f"character {i} ({char!r}) is in no chunk"
    for (s1, e1), (s2, e2) in itertools.pairwise(spans):
        assert s1 < s2
        assert e1 <= e2


def _assert_gap_is_blank(text: str, first_end: int, second_start: int) -> None:
    assert second_start >= first_end
    assert not text[first_end:second_start].strip()


@settings(max_examples=300, deadline=None)
@given(texts, any_config)
def test_common_invariants(text: str, config: object) -> None:
    spans = chunk_text(text, config)  # type: ignore[arg-type]
    _check_common(text, spans)
    if not text.strip():
        assert spans == []


@settings(max_examples=300, deadline=None)
@given(texts, chars_configs)
def test_chars_overlap_and_size(text: str, config: CharsChunker) -> None:
    spans = chunk_text(text, config)
    for start, end in spans:
        assert end - start <= config.size
    for (_, e1), (s2, _) in itertools.pairwise(spans):
        if e1 - s2 != config.overlap:
            _assert_gap_is_blank(text, e1, s2)


@settings(max_examples=300, deadline=None)
@given(texts, tokens_configs)
def test_tokens_overlap_and_size(text: str, config: TokensChunker) -> None:
    spans = chunk_text(text, config)
    tokens = [m.span() for m in re.finditer(r"\S+", text)]
    for start, end in spans:
        inside = [t for t in tokens if start <= t[0] and t[1] <= end]
        assert 1 <= len(inside) <= config.size
    for (s1, e1), (s2, e2) in itertools.pairwise(spans):
        shared = [t for t in tokens if s2 <= t[0] and t[1] <= e1 and s1 <= t[0] and t[1] <= e2]
        assert len(shared) == config.overlap


@settings(max_examples=300, deadline=None)
@given(texts, st.one_of(sentence_configs, paragraph_configs))
def test_sentences_and_paragraphs_are_disjoint_and_bounded(
    text: str, config: SentencesChunker | ParagraphsChunker
) -> None:
    spans = chunk_text(text, config)
    for start, end in spans:
        assert config.max_chars is None or end - start <= config.max_chars
    for (_, e1), (s2, _) in itertools.pairwise(spans):
        _assert_gap_is_blank(text, e1, s2)


def test_chars_cuts_at_a_word_end() -> None:
    text = "alpha beta gamma delta epsilon"
    spans = chunk_text(text, CharsChunker(size=20, overlap=0))
    assert [text[s:e] for s, e in spans] == ["alpha beta gamma", "delta epsilon"]
    # No word end within the last fifth of the window: a hard cut at exactly `size`.
    spans = chunk_text(text, CharsChunker(size=13, overlap=0))
    assert next(text[s:e] for s, e in spans) == "alpha beta ga"


def test_chars_overlap_is_exact() -> None:
    text = "one two three four five six seven"
    spans = chunk_text(text, CharsChunker(size=10, overlap=3))
    for (_, e1), (s2, _) in itertools.pairwise(spans):
        assert e1 - s2 == 3
    assert text[spans[0][0] : spans[0][1]] == "one two th"  # no word end in the last fifth
    spans = chunk_text(text, CharsChunker(size=20, overlap=5))
    assert text[spans[0][0] : spans[0][1]] == "one two three four"
    assert spans[1][0] == 18 - 5


def test_tokens_windows() -> None:
    text = "a bb ccc dddd eeeee"
    spans = chunk_text(text, TokensChunker(size=3, overlap=1))
    assert [text[s:e] for s, e in spans] == ["a bb ccc", "ccc dddd eeeee"]


def test_sentence_splitter_respects_abbreviations() -> None:
    text = "Dr. Smith met J. Doe. They talked, e.g. about BM25! Was it good? Yes."
    spans = chunk_text(text, SentencesChunker(max_sentences=1))
    assert [text[s:e] for s, e in spans] == [
        "Dr. Smith met J. Doe.",
        "They talked, e.g. about BM25!",
        "Was it good?",
        "Yes.",
    ]


def test_sentences_grouped_by_count_and_chars() -> None:
    text = "One. Two. Three. Four. Five."
    by_count = chunk_text(text, SentencesChunker(max_sentences=2))
    assert [text[s:e] for s, e in by_count] == ["One. Two.", "Three. Four.", "Five."]
    by_chars = chunk_text(text, SentencesChunker(max_sentences=None, max_chars=11))
    assert [text[s:e] for s, e in by_chars] == ["One. Two.", "Three.", "Four. Five."]


def test_paragraphs_keep_headings_with_their_section() -> None:
    text = "# Intro\n\nShort para.\n\nAnother.\n\n## Next\nBody text here.\n\nTail."
    spans = chunk_text(text, ParagraphsChunker(max_chars=200))
    assert [text[s:e] for s, e in spans] == [
        "# Intro\n\nShort para.\n\nAnother.",
        "## Next\nBody text here.\n\nTail.",
    ]
    small = chunk_text(text, ParagraphsChunker(max_chars=20))
    assert [text[s:e] for s, e in small][:3] == [
        "# Intro\n\nShort para.",
        "Another.",
        "## Next\nBody text",
    ]


def test_document_chunker_trims_outer_whitespace() -> None:
    assert chunk_text("  hello world \n", DocumentChunker()) == [(2, 13)]
    assert chunk_text(" \n\t", DocumentChunker()) == []


def test_chunk_corpus_keeps_corpus_order() -> None:
    corpus = {"a": "one two", "b": "  ", "c": "three"}
    assert chunk_corpus(corpus, DocumentChunker()) == [Chunk("a", 0, 7), Chunk("c", 0, 5)]


def test_config_validation() -> None:
    assert parse_chunker_config({"kind": "chars", "size": 50, "overlap": 5}) == CharsChunker(
        size=50, overlap=5
    )
    with pytest.raises(ValidationError, match="overlap"):
        CharsChunker(size=10, overlap=10)
    # Core's promise: bad input is a JudgmentError (one line), never pydantic's own error.
    with pytest.raises(JudgmentError, match="kind"):
        parse_chunker_config({"kind": "words"})
    with pytest.raises(JudgmentError, match="sise"):
        parse_chunker_config({"kind": "chars", "sise": 3})
    with pytest.raises(ValidationError, match="max_sentences"):
        SentencesChunker(max_sentences=None, max_chars=None)


@pytest.mark.parametrize(
    ("text", "mapping"),
    [
        ("tokens:100:20", {"kind": "tokens", "size": 100, "overlap": 20}),
        ("chars:500:100", {"kind": "chars", "size": 500, "overlap": 100}),
        ("sentences:3", {"kind": "sentences", "max_sentences": 3}),
        ("document", {"kind": "document"}),
    ],
)
def test_parse_chunker_config_takes_the_text_form_the_cli_takes(
    text: str, mapping: dict[str, object]
) -> None:
    assert parse_chunker_config(text) == parse_chunker_config(mapping)
    assert parse_chunker_config(text) == parse_chunker_spec(text)


def test_parse_chunker_config_refuses_a_bad_text_form_in_one_line() -> None:
    with pytest.raises(JudgmentError, match=r"chunker 'tokens:0'.*positive"):
        parse_chunker_config("tokens:0")
