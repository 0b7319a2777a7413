"""BM25's analysis with array operations against ``bm25s.tokenize`` and the word-by-word path.

The arrays must give exactly the terms, the numbering and the vocabulary that one pass over
the words with the regular expression gives, whatever the script, the batch size or the
length of a text; two words sharing an id must be caught and analysed word by word.
"""

from __future__ import annotations

import itertools
import re

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.harness.retrievers import _bm25_terms
from groundkit.harness.retrievers._bm25 import LexicalAnalyzer
from groundkit.harness.retrievers._bm25_terms import IdCollision, analyse_texts
from groundkit.harness.retrievers._builtin import Bm25Retriever

ANALYZERS = {
    "snowball": LexicalAnalyzer(Bm25Retriever()),
    "porter-lucene": LexicalAnalyzer(Bm25Retriever(stopwords="lucene", stemmer="porter")),
    "none": LexicalAnalyzer(Bm25Retriever(stopwords=None, stemmer=None)),
}
# Letters that change length or form when lower-cased (İ, final sigma), word characters of
# other scripts, digits of other scripts, the underscore, marks, spaces of all kinds,
# punctuation, characters outside the BMP and a lone surrogate.
ALPHABET = "aAbBzZ09_ İIΣσςΟΔéÉ\u0301数据검색٣①²ẞß-'.,;\n\t\u00a0\u2003\u200b𝔘𝟘🙂\ud800"
TEXT = st.text(alphabet=ALPHABET, max_size=40)


def _by_terms(flat: np.ndarray, lengths: np.ndarray, vocabulary: dict[str, int]) -> list[list[str]]:
    names = list(vocabulary)
    bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    return [[names[i] for i in flat[a:b].tolist()] for a, b in itertools.pairwise(bounds)]


def _stem(analyzer: LexicalAnalyzer):  # type: ignore[no-untyped-def]
    return analyzer.stemmer.stemWords if analyzer.stemmer is not None else None


@pytest.mark.parametrize("name", ANALYZERS)
@settings(max_examples=150, deadline=None)
@given(texts=st.lists(TEXT, max_size=8), batch=st.sampled_from([4, 16, 64, 1 << 18]))
def test_arrays_are_the_word_by_word_analysis(name: str, texts: list[str], batch: int) -> None:
    analyzer = ANALYZERS[name]
    previous = _bm25_terms.BATCH_CHARS
    _bm25_terms.BATCH_CHARS = batch  # several batches, and texts cut between words
    try:
        flat, lengths, vocabulary = analyse_texts(
            texts, frozenset(analyzer.stopwords), _stem(analyzer)
        )
    finally:
        _bm25_terms.BATCH_CHARS = previous
    expected = analyzer._analysed_by_words(texts)
    assert flat.dtype == np.int32
    assert np.array_equal(flat, expected[0])
    assert np.array_equal(lengths, expected[1])
    assert list(vocabulary.items()) == list(expected[2].items())  # the same numbering


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(TEXT.filter(lambda t: "\ud800" not in t), min_size=1, max_size=6))
def test_arrays_give_bm25s_tokenize_terms(texts: list[str]) -> None:
    analyzer = ANALYZERS["snowball"]
    flat, lengths, vocabulary = analyse_texts(texts, frozenset(analyzer.stopwords), _stem(analyzer))
    reference = bm25s.tokenize(
        texts, stopwords=analyzer.stopwords, stemmer=analyzer.stemmer, show_progress=False
    )
    names = {v: k for k, v in reference.vocab.items()}
    expected = [[names[i] for i in doc] for doc in reference.ids]
    assert _by_terms(flat, lengths, vocabulary) == expected


def test_a_long_text_is_cut_between_words_and_a_longer_word_is_kept_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_bm25_terms, "BATCH_CHARS", 10)
    texts = ["alpha beta gamma delta " * 5, "x" * 35 + " tail", "", "ab"]
    assert _by_terms(*analyse_texts(texts, frozenset(), None)) == [
        ["alpha", "beta", "gamma", "delta"] * 5,
        ["x" * 35, "tail"],
        [],
        ["ab"],
    ]
    # Lower-cased whole before it is cut: a sigma before an apostrophe and a capital is not
    # final (σ), though it would be in the piece cut off after it (ς).
    monkeypatch.setattr(_bm25_terms, "BATCH_CHARS", 3)
    assert _by_terms(*analyse_texts(["ΟΔΟΣ'Α ΟΔΟΣ"], frozenset(), None)) == [["οδοσ", "οδος"]]


def test_many_distinct_words_grow_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bm25_terms, "FIRST_WORDS", 64)  # grown many times, probes collide
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [letters[i % 26] + letters[i // 26 % 26] + letters[i // 676 % 26] for i in range(9000)]
    texts = [" ".join(words[i : i + 50]) + " " + words[(7 * i) % 9000] for i in range(0, 9000, 50)]
    analyzer = ANALYZERS["snowball"]
    result = analyse_texts(texts, frozenset(analyzer.stopwords), _stem(analyzer))
    expected = analyzer._analysed_by_words(texts)
    assert np.array_equal(result[0], expected[0])
    assert np.array_equal(result[1], expected[1])
    assert list(result[2].items()) == list(expected[2].items())


def test_two_words_with_one_id_are_caught_and_analysed_word_by_word(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = ["the cat sat on the mat", "dog cat ox", "mat mat cat"]
    # Ids of three bits: different words share them, in one batch and across batches.
    real = _bm25_terms.span_ids

    def weak(*args: object, **kwargs: object) -> np.ndarray:
        return real(*args, **kwargs) & np.uint64(7)  # type: ignore[arg-type]

    monkeypatch.setattr(_bm25_terms, "span_ids", weak)
    analyzer = ANALYZERS["none"]
    with pytest.raises(IdCollision):
        analyse_texts(texts, frozenset(), None)
    flat, lengths, vocabulary = analyzer._analysed(texts)
    assert _by_terms(flat, lengths, vocabulary) == [t.split() for t in texts]
    # And with no collision left to find (one word), the arrays answer.
    assert analyse_texts(["cat cat"], frozenset(), None)[1].tolist() == [2]


def test_word_characters_are_the_regular_expressions() -> None:
    codes = np.concatenate(
        [np.arange(0, 0x30000), np.arange(0xE0000, 0xE0200), np.arange(0x10FF00, 0x110000)]
    ).astype(np.uint32)
    word = re.compile(r"\w")
    expected = np.array([word.match(chr(c)) is not None for c in codes.tolist()])
    assert np.array_equal(_bm25_terms._word_characters(codes), expected)
    ascii_codes = np.arange(128, dtype=np.uint8)
    assert np.array_equal(_bm25_terms._word_characters(ascii_codes), expected[:128])
