"""BM25 over chunks with bm25s and the PyStemmer Snowball stemmer.

The chunk texts are analysed in batches into one flat array of token ids (four bytes a token)
rather than a Python list per chunk (eight bytes a token plus a list per chunk), and bm25s
builds its index from that array through :class:`TokenColumns`, a list per chunk made on
demand: the analysis exactly as ``bm25s.tokenize`` does it (lower case, its word pattern,
stopwords removed before stemming, each distinct word stemmed once), the scores computed by
bm25s itself. A large index is then saved and memory-mapped (``BM25.load_scores(mmap=True)``)
so that its pages are the operating system's to evict while the run goes on.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import bm25s
import bm25s.stopwords
import numpy as np
import numpy.typing as npt
import Stemmer

from groundkit.harness._ranking import top_k
from groundkit.harness._retrievers import Bm25Retriever

__all__ = ["Bm25Index", "LexicalAnalyzer", "TokenColumns"]

ProgressHook = Callable[[str, int, int], None]
IntArray = npt.NDArray[np.int64]

# bm25s.tokenize's default word pattern (scikit-learn's CountVectorizer).
_WORD = re.compile(r"(?u)\b\w\w+\b")
# Texts analysed at a time: bounds the Python lists of one batch.
_BATCH_TEXTS = 512
# An index with more stored scores than this is memory-mapped from a temporary folder.
MMAP_MIN_ENTRIES = 1 << 24


class TokenColumns(Sequence[list[int]]):
    """The token ids of many texts in one flat ``int32`` array; text ``i`` as a list on demand.

    bm25s reads its corpus as a sequence of token-id lists, two or three passes; this gives it
    those lists one batch at a time instead of holding all of them.
    """

    def __init__(self, flat: npt.NDArray[np.int32], offsets: IntArray) -> None:
        self.flat = flat
        self.offsets = offsets

    def __len__(self) -> int:
        return int(self.offsets.size) - 1

    @overload
    def __getitem__(self, index: int) -> list[int]: ...
    @overload
    def __getitem__(self, index: slice) -> list[list[int]]: ...
    def __getitem__(self, index: int | slice) -> list[int] | list[list[int]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        start, end = int(self.offsets[index]), int(self.offsets[index + 1])
        ids: list[int] = self.flat[start:end].tolist()
        return ids

    def __iter__(self) -> Iterator[list[int]]:
        offsets = self.offsets
        for first in range(0, len(self), _BATCH_TEXTS):
            last = min(first + _BATCH_TEXTS, len(self))
            base = int(offsets[first])
            values: list[int] = self.flat[base : int(offsets[last])].tolist()
            bounds = (offsets[first : last + 1] - base).tolist()
            for start, end in itertools.pairwise(bounds):
                yield values[start:end]

    def terms_of(self, index: int) -> npt.NDArray[np.int32]:
        """The token ids of text ``index`` (a view of the flat array)."""
        return self.flat[int(self.offsets[index]) : int(self.offsets[index + 1])]


class LexicalAnalyzer:
    """The tokenizer of a BM25 stage: bm25s's word pattern, lower case, stopwords, stemming.

    The same analysis decides what a query and a chunk share (``shares_query_term``).
    """

    def __init__(self, config: Bm25Retriever) -> None:
        self.stopwords: str | list[str] = "en" if config.stopwords == "en" else []
        self.stemmer: Any = Stemmer.Stemmer(config.stemmer) if config.stemmer else None

    def tokenize_ids(self, texts: Sequence[str]) -> tuple[TokenColumns, dict[str, int]]:
        """Token ids of many texts and the vocabulary (term -> id), as ``bm25s.tokenize``.

        A text's ids are those ``bm25s.tokenize`` gives it, up to the numbering of the terms
        (here in order of first appearance), analysed ``_BATCH_TEXTS`` texts at a time.
        """
        stop = frozenset(bm25s.stopwords.STOPWORDS_EN if self.stopwords == "en" else ())
        stem = self.stemmer.stemWords if self.stemmer is not None else None
        surface: dict[str, int] = {}  # word as written (lower case) -> term id; -1: stopword
        vocabulary: dict[str, int] = {}
        pieces: list[npt.NDArray[np.int32]] = []
        lengths = np.zeros(len(texts), dtype=np.int64)
        split = _WORD.findall
        for first in range(0, len(texts), _BATCH_TEXTS):
            words = [split(text.lower()) for text in texts[first : first + _BATCH_TEXTS]]
            met = dict.fromkeys(itertools.chain.from_iterable(words))
            new = [w for w in met if w not in surface]
            kept = [w for w in new if w not in stop]
            for word in new:
                surface[word] = -1
            for word, term in zip(kept, stem(kept) if stem is not None else kept, strict=True):
                surface[word] = vocabulary.setdefault(term, len(vocabulary))
            ids = np.fromiter(
                map(surface.__getitem__, itertools.chain.from_iterable(words)), np.int32
            )
            counts = np.fromiter(map(len, words), np.int64, len(words))
            kept_mask = ids >= 0
            owner = np.repeat(np.arange(len(words), dtype=np.int64), counts)
            lengths[first : first + len(words)] = np.bincount(
                owner[kept_mask], minlength=len(words)
            )
            pieces.append(ids[kept_mask])
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
        return TokenColumns(flat, offsets), vocabulary

    def terms(self, texts: Sequence[str]) -> list[list[str]]:
        """The analysed terms of each text."""
        if not texts:
            return []
        result: list[list[str]] = bm25s.tokenize(
            list(texts),
            stopwords=self.stopwords,
            stemmer=self.stemmer,
            show_progress=False,
            return_ids=False,
        )
        return result


class Bm25Index:
    """A BM25 index of chunk texts.

    Args:
        texts: The chunk texts, in chunk-id order.
        config: BM25 settings.
        progress: Optional ``(phase, done, total)`` callback.
    """

    def __init__(
        self,
        texts: Sequence[str],
        config: Bm25Retriever,
        *,
        progress: ProgressHook | None = None,
    ) -> None:
        self.config = config
        self.analyzer = LexicalAnalyzer(config)
        self.size = len(texts)
        if progress is not None:
            progress("index", 0, 1)
        columns, vocabulary = self.analyzer.tokenize_ids(texts)
        # Kept to tell which chunks share a term with a query without analysing them again.
        self._chunk_terms = columns
        self._vocabulary = vocabulary
        self._query_terms: dict[str, frozenset[int]] = {}
        self._model = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
        self._model.index(
            bm25s.tokenization.Tokenized(ids=columns, vocab=vocabulary), show_progress=False
        )
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        if int(self._model.scores["data"].size) >= MMAP_MIN_ENTRIES:
            self._memory_map()
        if progress is not None:
            progress("index", 1, 1)

    def _memory_map(self) -> None:
        """Save the scores and read them back memory-mapped (bm25s's own files)."""
        model = self._model
        folder = tempfile.TemporaryDirectory(prefix="grk-bm25-", ignore_cleanup_errors=True)
        model.save(folder.name, show_progress=False)
        model.load_scores(folder.name, num_docs=model.scores["num_docs"], mmap=True)
        if os.name == "posix":
            # A mapped file outlives its name on POSIX: nothing is left behind, even on a kill.
            folder.cleanup()
        else:
            self._folder = folder

    def search(
        self,
        queries: Sequence[str],
        depth: int,
        *,
        progress: ProgressHook | None = None,
    ) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]]:
        """Top ``depth`` chunks of each query: ``(chunk ids, scores)``, best first.

        Chunks that share no term with the query (score 0) are not returned. Ties are broken
        by chunk order. Scores come from bm25s's ``get_scores`` (what ``retrieve`` computes
        per query); the selection is ours so that ties are deterministic.
        """
        k = min(depth, self.size)
        query_terms = self.analyzer.terms(queries)
        vocabulary = self._vocabulary
        for query, terms in zip(queries, query_terms, strict=True):
            self._query_terms[query] = frozenset(vocabulary[t] for t in terms if t in vocabulary)
        results: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = []
        step = max(1, len(queries) // 100)
        for number, terms in enumerate(query_terms):
            known = self._model.get_tokens_ids(terms) if terms else []
            if not known or k == 0:
                results.append((np.zeros(0, np.int64), np.zeros(0, np.float64)))
            else:
                scores = self._model.get_scores_from_ids(known)
                ids = top_k(scores, k, positive_only=True)
                results.append((ids, scores[ids].astype(np.float64)))
            if progress is not None and (number % step == 0 or number == len(queries) - 1):
                progress("retrieve", number + 1, len(queries))
        return results

    def shares_term(self, query: str, chunk: int) -> bool:
        """Whether chunk ``chunk`` contains an analysed term of ``query``."""
        terms = self._query_terms.get(query)
        if terms is None:
            analysed = self.analyzer.terms([query])[0]
            terms = frozenset(self._vocabulary[t] for t in analysed if t in self._vocabulary)
            self._query_terms[query] = terms
        return not terms.isdisjoint(self._chunk_terms[chunk])
