"""The BM25 stage's array-built index against bm25s's own per-text loop, array for array.

:class:`ColumnsBM25` overrides ``build_index_from_ids`` to count terms and score them over
the flat token array at once; fed the same token ids, it must store exactly what bm25s's loop
stores (scores, row indices, column pointers, the non-occurrence array) for every variant.
"""

from __future__ import annotations

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.harness.retrievers import _bm25
from groundkit.harness.retrievers._bm25 import ColumnsBM25, TokenColumns

METHODS = ["lucene", "robertson", "atire", "bm25l", "bm25+"]


def _columns(lists: list[list[int]]) -> TokenColumns:
    sizes = np.array([len(x) for x in lists], dtype=np.int64)
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    flat = np.array([v for x in lists for v in x], dtype=np.int32)
    return TokenColumns(flat, offsets)


def _tokenized(ids: object, vocab: dict[str, int]) -> bm25s.tokenization.Tokenized:
    return bm25s.tokenization.Tokenized(ids=ids, vocab=dict(vocab))


def _assert_same_index(lists: list[list[int]], vocab_size: int, **params: object) -> None:
    vocab = {f"t{i}": i for i in range(vocab_size)}
    ours = ColumnsBM25(**params)
    ours.index(_tokenized(_columns(lists), vocab), show_progress=False)
    theirs = bm25s.BM25(**params)
    theirs.index(_tokenized(lists, vocab), show_progress=False)
    for key in ("data", "indices", "indptr"):
        assert ours.scores[key].dtype == theirs.scores[key].dtype, key
        assert np.array_equal(ours.scores[key], theirs.scores[key]), key
    assert ours.scores["num_docs"] == theirs.scores["num_docs"]
    assert ours.vocab_dict == theirs.vocab_dict
    if theirs.nonoccurrence_array is None:
        assert ours.nonoccurrence_array is None
    else:
        assert np.array_equal(ours.nonoccurrence_array, theirs.nonoccurrence_array)


# Every vocabulary id occurs somewhere: bm25s's own tokenizer gives no id that never occurs.
_corpora = (
    st.integers(1, 30)
    .flatmap(
        lambda size: st.tuples(
            st.lists(st.lists(st.integers(0, size - 1), max_size=40), min_size=1, max_size=25),
            st.just(size),
        )
    )
    .filter(lambda c: {v for doc in c[0] for v in doc} == set(range(c[1])))
)


@settings(max_examples=60, deadline=None)
@given(
    _corpora,
    st.sampled_from(METHODS),
    st.floats(0.1, 3.0),
    st.floats(0.0, 1.0),
    st.integers(1, 64),
)
def test_array_built_index_is_bm25s_loop(
    corpus: tuple[list[list[int]], int],
    method: str,
    k1: float,
    b: float,
    batch: int,
) -> None:
    lists, vocab_size = corpus
    original = _bm25._SCORE_BATCH
    _bm25._SCORE_BATCH = batch  # several batches of pairs and of scores
    try:
        _assert_same_index(lists, vocab_size, method=method, k1=k1, b=b)
    finally:
        _bm25._SCORE_BATCH = original


@pytest.mark.parametrize("method", METHODS)
def test_a_realistic_corpus_gives_bit_equal_scores(method: str) -> None:
    # Zipf-like term draws over documents of varied length: many ties, rare and common terms.
    rng = np.random.default_rng(7)
    vocab_size = 3000
    lists = [
        (rng.zipf(1.3, size=int(rng.integers(0, 400))) % vocab_size).tolist() for _ in range(600)
    ]
    lists.append(list(range(vocab_size)))  # every id occurs
    _assert_same_index(lists, vocab_size, method=method, k1=1.2, b=0.75)


def test_a_vocabulary_beyond_16_bits_gives_bit_equal_scores() -> None:
    # Term ids past 65,535: the tokens are ordered by their low 16 bits, then their high ones.
    rng = np.random.default_rng(11)
    vocab_size = 70_000
    high = rng.integers(60_000, vocab_size, size=(300, 60))  # ids on both sides of 2**16
    low = rng.integers(0, 2_000, size=(300, 60))
    lists = [np.concatenate([a, b]).tolist() for a, b in zip(high, low, strict=True)]
    lists.append(list(range(vocab_size)))  # every id occurs
    _assert_same_index(lists, vocab_size, method="lucene", k1=1.5, b=0.75)


def test_lists_and_the_scipy_builder_take_bm25s_own_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = bm25s.BM25.build_index_from_ids

    def counted(self: bm25s.BM25, *args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(bm25s.BM25, "build_index_from_ids", counted)
    model = ColumnsBM25()
    model.index(_tokenized([[0, 1], [1]], {"a": 0, "b": 1}), show_progress=False)
    assert calls == [1]
    calls.clear()
    ColumnsBM25(csc_backend="scipy").index(
        _tokenized(_columns([[0, 1], [1]]), {"a": 0, "b": 1}), show_progress=False
    )
    assert calls == [1]
    calls.clear()
    model.index(_tokenized(_columns([[0, 1], [1]]), {"a": 0, "b": 1}), show_progress=False)
    assert calls == []
