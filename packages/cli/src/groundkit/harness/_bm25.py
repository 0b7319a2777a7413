"""BM25 over chunks with bm25s and the PyStemmer Snowball stemmer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt
import Stemmer

from groundkit.harness._ranking import top_k
from groundkit.harness._retrievers import Bm25Retriever

__all__ = ["Bm25Index", "LexicalAnalyzer"]

ProgressHook = Callable[[str, int, int], None]


class LexicalAnalyzer:
    """The tokenizer of a BM25 stage: bm25s's word pattern, lower case, stopwords, stemming.

    The same analysis decides what a query and a chunk share (``shares_query_term``).
    """

    def __init__(self, config: Bm25Retriever) -> None:
        self.stopwords: str | list[str] = "en" if config.stopwords == "en" else []
        self.stemmer: Any = Stemmer.Stemmer(config.stemmer) if config.stemmer else None

    def tokenize_ids(self, texts: Sequence[str]) -> Any:
        """Token ids and vocabulary (bm25s ``Tokenized``) of many texts."""
        return bm25s.tokenize(
            list(texts), stopwords=self.stopwords, stemmer=self.stemmer, show_progress=False
        )

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
        tokens = self.analyzer.tokenize_ids(texts)
        # Kept to tell which chunks share a term with a query without analysing them again.
        self._chunk_terms: list[list[int]] = tokens.ids
        self._vocabulary: dict[str, int] = tokens.vocab
        self._query_terms: dict[str, frozenset[int]] = {}
        self._model = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
        self._model.index(tokens, show_progress=False)
        if progress is not None:
            progress("index", 1, 1)

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
