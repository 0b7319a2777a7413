"""The BM25 stage's streamed analysis and memory-mapped index against bm25s's own path.

The stage analyses the chunks in batches into one flat token array and lets bm25s build its
index from it; a large index is memory-mapped. Both must give exactly what
``bm25s.tokenize`` + ``BM25.index`` give: the same terms per text and bit-equal scores.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.harness.retrievers import _bm25, _bm25_terms
from groundkit.harness.retrievers._bm25 import Bm25Index, LexicalAnalyzer, TokenColumns
from groundkit.harness.retrievers._builtin import Bm25Retriever

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "",
    "a I",  # only one-letter words: no token at all
    "Running runners ran; the RUNNING of the runners!",
    "Café naïve coöperation — déjà vu, ÉLAN.",
    "the and of to in",  # stopwords only
    "Foxes jumped; dogs were lazy and quick.",
    "数据 检索 检索 系统 2024 x2 the_end",
    "Brown dogs and brown foxes: brown, brown, brown.",
]
QUERIES = ["quick fox", "running", "brown dogs", "检索", "the", "zzz unknown", "café élan"]
CONFIGS = [
    Bm25Retriever(),
    Bm25Retriever(stopwords=None, stemmer=None),
    Bm25Retriever(stopwords=None),
    Bm25Retriever(method="bm25+", k1=1.2, b=0.5),
    Bm25Retriever(method="robertson"),
    Bm25Retriever(k1=0.9, b=0.4, stopwords="lucene", stemmer="porter"),  # Pyserini's
    Bm25Retriever(stopwords="none", stemmer="none"),
]


def _terms_by_text(ids: list[list[int]] | TokenColumns, vocab: dict[str, int]) -> list[list[str]]:
    names = {v: k for k, v in vocab.items()}
    return [[names[i] for i in doc] for doc in ids]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.method}-{c.stopwords}-{c.stemmer}")
@pytest.mark.parametrize("by_words", [False, True], ids=["arrays", "by-words"])
def test_analysis_is_bm25s_tokenize(
    config: Bm25Retriever, by_words: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Several batches, words first met in each, whichever way the words are found.
    monkeypatch.setattr(_bm25, "_BATCH_TEXTS", 2)
    monkeypatch.setattr(_bm25_terms, "BATCH_CHARS", 40)
    if by_words:  # as when two words share an id
        monkeypatch.setattr(_bm25, "analyse_texts", _collide)
    analyzer = LexicalAnalyzer(config)
    columns, vocab = analyzer.tokenize_ids(TEXTS)
    reference = bm25s.tokenize(
        TEXTS, stopwords=analyzer.stopwords, stemmer=analyzer.stemmer, show_progress=False
    )
    assert len(columns) == len(TEXTS)
    assert _terms_by_text(columns, vocab) == _terms_by_text(reference.ids, reference.vocab)
    assert set(vocab) == set(reference.vocab)
    assert columns.flat.dtype == np.int32


def _collide(*args: object) -> None:
    raise _bm25_terms.IdCollision


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.method}-{c.stopwords}-{c.stemmer}")
@pytest.mark.parametrize("mapped", [False, True], ids=["memory", "mmap"])
def test_scores_are_bit_equal_to_bm25s(
    config: Bm25Retriever, mapped: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if mapped:
        monkeypatch.setattr(_bm25, "MMAP_MIN_ENTRIES", 0)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    index = Bm25Index(TEXTS, config)
    assert isinstance(index._model.scores["data"], np.memmap) is mapped
    # The mapped files outlive their folder, which is gone at once (POSIX).
    assert list(tmp_path.iterdir()) == []
    analyzer = LexicalAnalyzer(config)
    model = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
    model.index(
        bm25s.tokenize(
            TEXTS, stopwords=analyzer.stopwords, stemmer=analyzer.stemmer, show_progress=False
        ),
        show_progress=False,
    )
    found = index.search(QUERIES, depth=len(TEXTS))
    for query, terms, (ids, scores) in zip(QUERIES, analyzer.terms(QUERIES), found, strict=True):
        known = model.get_tokens_ids(terms) if terms else []
        if not known:
            assert ids.size == 0, query
            continue
        expected = model.get_scores_from_ids(known)
        ours = index._model.get_scores_from_ids(index._model.get_tokens_ids(terms))
        assert np.array_equal(ours, expected), query
        positive = np.flatnonzero(expected > 0)
        assert sorted(ids.tolist()) == sorted(positive.tolist()), query
        assert np.array_equal(scores, expected[ids].astype(np.float64)), query


def test_shares_term_reads_the_flat_tokens() -> None:
    index = Bm25Index(TEXTS, Bm25Retriever())
    index.search(["brown fox"], depth=3)
    assert index.shares_term("brown fox", 0)  # "fox"
    assert not index.shares_term("brown fox", 1)  # empty text
    assert not index.shares_term("brown fox", 5)  # stopwords only
    assert index.shares_term("brown fox", 8)
    assert index.shares_term("lazy", 6)  # a query not searched yet is analysed on demand


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 50), max_size=7), max_size=12), st.integers(1, 4))
def test_token_columns_are_the_lists(lists: list[list[int]], batch: int) -> None:
    sizes = np.array([len(x) for x in lists], dtype=np.int64)
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    flat = np.array([v for x in lists for v in x], dtype=np.int32)
    columns = TokenColumns(flat, offsets)
    original = _bm25._BATCH_TEXTS
    _bm25._BATCH_TEXTS = batch
    try:
        assert list(columns) == lists
    finally:
        _bm25._BATCH_TEXTS = original
    assert len(columns) == len(lists)
    assert [columns[i] for i in range(len(lists))] == lists
    assert columns[:] == lists
    if lists:
        assert columns[-1] == lists[-1]
        assert columns.terms_of(0).tolist() == lists[0]
    with pytest.raises(IndexError):
        columns[len(lists)]


def test_porter_and_snowball_stem_differently_and_none_keeps_words() -> None:
    text = ["generalization of running"]
    porter = LexicalAnalyzer(Bm25Retriever(stemmer="porter")).tokenize_ids(text)[1]
    snowball = LexicalAnalyzer(Bm25Retriever(stemmer="english")).tokenize_ids(text)[1]
    kept = LexicalAnalyzer(Bm25Retriever(stemmer="none", stopwords="none")).tokenize_ids(text)[1]
    assert list(porter) == ["gener", "run"]
    assert list(snowball) == ["general", "run"]
    assert list(kept) == ["generalization", "of", "running"]


def test_lucene_stopwords_are_lucenes_english_set() -> None:
    # Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, written out independently.
    lucene = [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
    assert sorted(LexicalAnalyzer(Bm25Retriever(stopwords="lucene")).stopwords) == lucene


def test_a_stopwords_file_is_read_and_a_bad_name_is_one_line(tmp_path: Path) -> None:
    words = tmp_path / "stop.txt"
    words.write_text("# mine\nFox\n\nbrown\n", encoding="utf-8")
    analyzer = LexicalAnalyzer(Bm25Retriever(stopwords=words))
    assert analyzer.stopwords == ["brown", "fox"]
    assert list(analyzer.tokenize_ids(["The brown fox sleeps"])[1]) == ["the", "sleep"]
    with pytest.raises(ValueError, match="'english' is not a file"):
        Bm25Retriever(stopwords="english")
    with pytest.raises(ValueError, match="stemmer"):
        Bm25Retriever(stemmer="lancaster")  # type: ignore[arg-type]


def test_a_stopwords_file_in_a_config_is_relative_to_its_folder(tmp_path: Path) -> None:
    from groundkit.harness.run._config_load import resolve_config_paths

    (tmp_path / "stop.txt").write_text("fox\n", encoding="utf-8")
    raw = {"stages": [{"name": "b", "retriever": {"kind": "bm25", "stopwords": "stop.txt"}}]}
    resolved = resolve_config_paths(raw, tmp_path)
    settings = Bm25Retriever(**resolved["stages"][0]["retriever"])
    assert settings.stopwords == tmp_path / "stop.txt"
    assert (
        resolve_config_paths(
            {"stages": [{"name": "b", "retriever": {"kind": "bm25", "stopwords": "lucene"}}]},
            tmp_path,
        )["stages"][0]["retriever"]["stopwords"]
        == "lucene"
    )
