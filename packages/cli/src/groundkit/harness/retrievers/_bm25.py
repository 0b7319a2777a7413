"""BM25 over chunks with bm25s and the PyStemmer Snowball stemmer.

The chunk texts are analysed in batches into one flat array of token ids (four bytes a token)
rather than a Python list per chunk (eight bytes a token plus a list per chunk): the analysis
exactly as ``bm25s.tokenize`` does it (lower case, its word pattern, stopwords removed before
stemming, each distinct word stemmed once). :class:`ColumnsBM25` builds bm25s's index from
that array with array operations and bm25s's own scoring functions (bit-equal to its per-text
loop, several times faster); :class:`TokenColumns` also gives the array as a list per chunk,
made on demand, to bm25s's own code. A large index is then saved and memory-mapped
(``BM25.load_scores(mmap=True)``) so that its pages are the operating system's to evict while
the run goes on.

A large corpus is analysed on several cores (forked processes, merged bit-identically) and
many queries are scored on threads: see :mod:`._bm25_workers` and the ``workers`` setting.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, overload

import bm25s
import bm25s.scoring
import bm25s.stopwords
import numpy as np
import numpy.typing as npt
import Stemmer

from groundkit.harness._errors import HarnessError
from groundkit.harness.retrievers._bm25_terms import IdCollision, analyse_texts
from groundkit.harness.retrievers._bm25_workers import (
    AnalysedPart,
    analyse_in_parts,
    blocks,
    merge_parts,
    plan_parts,
    resolve_workers,
    search_threads,
)
from groundkit.harness.retrievers._builtin import Bm25Retriever
from groundkit.harness.run._ranking import top_k

__all__ = ["Bm25Index", "ColumnsBM25", "LexicalAnalyzer", "TokenColumns"]

ProgressHook = Callable[[str, int, int], None]
IntArray = npt.NDArray[np.int64]

# bm25s.tokenize's default word pattern (scikit-learn's CountVectorizer).
_WORD = re.compile(r"(?u)\b\w\w+\b")
# Texts analysed at a time: bounds the Python lists of one batch.
_BATCH_TEXTS = 512
# An index with more stored scores than this is memory-mapped from a temporary folder.
MMAP_MIN_ENTRIES = 1 << 24
# Tokens scored at a time when the index is built (bounds the temporary arrays).
_SCORE_BATCH = 1 << 20
# The array-built index matches bm25s's per-text loop under NumPy 2's promotion rules, with
# the bm25s functions it calls (bm25s's own loop otherwise).
_ARRAY_BUILD = (
    int(np.__version__.split(".", 1)[0]) >= 2
    and hasattr(bm25s.BM25, "_np_csc")
    and all(
        hasattr(bm25s.scoring, name)
        for name in (
            "_build_idf_array",
            "_build_nonoccurrence_array",
            "_select_idf_scorer",
            "_select_tfc_scorer",
        )
    )
)


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


class ColumnsBM25(bm25s.BM25):  # type: ignore[misc]  # bm25s ships no type information
    """bm25s's BM25, its index built from :class:`TokenColumns` with array operations.

    ``build_index_from_ids`` is the method bm25s asks to override to build the index another
    way. This one counts each text's terms and the document frequencies over the flat token
    array at once instead of a Python loop per text, and computes the scores with bm25s's own
    idf and term-frequency functions applied to whole arrays: the same operations in the same
    order on the same types (NumPy 2's promotion rules), so the stored scores are bit-equal to
    bm25s's (a test checks every variant). Other inputs, the scipy CSC builder and NumPy 1 take
    bm25s's own loop.
    """

    def build_index_from_ids(
        self,
        unique_token_ids: list[int],
        corpus_token_ids: Any,
        show_progress: bool = True,
        leave_progress: bool = False,
    ) -> dict[str, Any]:
        """The score matrix of the corpus (see ``bm25s.BM25.build_index_from_ids``)."""
        if not (
            isinstance(corpus_token_ids, TokenColumns)
            and _ARRAY_BUILD
            and getattr(self, "csc_backend", None) == "numpy"  # bm25s's default
        ):
            built: dict[str, Any] = super().build_index_from_ids(
                unique_token_ids, corpus_token_ids, show_progress, leave_progress
            )
            return built
        columns: TokenColumns = corpus_token_ids
        n_docs, n_vocab = len(columns), len(unique_token_ids)
        lengths = np.diff(columns.offsets)
        avg_doc_len = lengths.mean()  # as bm25s: the mean of an int64 array
        docs, terms, tf = _term_columns(columns, lengths, n_vocab, self.dtype)
        counts = np.bincount(terms, minlength=n_vocab)
        # bm25s's own functions on the frequencies, as a dict over the vocabulary like its own.
        frequencies = counts[unique_token_ids].tolist()
        doc_frequencies = dict(zip(unique_token_ids, frequencies, strict=True))
        compute_idf = bm25s.scoring._select_idf_scorer(self.idf_method)
        idf_array = bm25s.scoring._build_idf_array(
            doc_frequencies=doc_frequencies,
            n_docs=n_docs,
            compute_idf_fn=compute_idf,
            dtype=self.dtype,
        )
        calculate_tfc = bm25s.scoring._select_tfc_scorer(self.method)
        self.nonoccurrence_array = None
        if self.method in self.methods_requiring_nonoccurrence:
            self.nonoccurrence_array = bm25s.scoring._build_nonoccurrence_array(
                doc_frequencies=doc_frequencies,
                n_docs=n_docs,
                compute_idf_fn=compute_idf,
                calculate_tfc_fn=calculate_tfc,
                l_d=avg_doc_len,
                l_avg=avg_doc_len,
                k1=self.k1,
                b=self.b,
                delta=self.delta,
                dtype=self.dtype,
            )
        scores = np.empty(terms.size, dtype=self.dtype)
        for first in range(0, terms.size, _SCORE_BATCH):
            part = slice(first, first + _SCORE_BATCH)
            tfc = calculate_tfc(
                tf_array=tf[part],
                l_d=lengths[docs[part]],
                l_avg=avg_doc_len,
                k1=self.k1,
                b=self.b,
                delta=self.delta,
            )
            values = idf_array[terms[part]] * tfc
            if self.nonoccurrence_array is not None:
                values -= self.nonoccurrence_array[terms[part]]
            scores[part] = values
        # The pairs are in bm25s's compressed column order already (term, then document).
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return {
            "data": scores.astype(self.dtype),
            "indices": docs,
            "indptr": indptr,
            "num_docs": n_docs,
        }


def _term_columns(
    columns: TokenColumns, lengths: IntArray, n_vocab: int, dtype: str
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[Any]]:
    """Each (text, term) pair of the corpus with its count, in compressed column order.

    The order bm25s's ``_np_csc`` gives its pairs (by term, then by text): the tokens, which
    come text after text, are put in a stable order of their terms (radix sorts of 16 bits),
    so each (term, text) pair is one run of equal tokens, and the runs come term by term with
    the texts ascending. No sort of the pairs is needed after (SciFact: 0.11 -> 0.03 s).
    """
    flat = columns.flat
    order = np.argsort((flat & 0xFFFF).astype(np.uint16), kind="stable")
    if n_vocab > 1 << 16:
        order = order[np.argsort((flat[order] >> 16).astype(np.uint16), kind="stable")]
    terms = flat[order]
    docs = np.repeat(np.arange(len(columns), dtype=np.int32), lengths)[order]
    del order
    first = np.ones(terms.size, dtype=np.bool_)
    np.not_equal(terms[1:], terms[:-1], out=first[1:])
    first[1:] |= docs[1:] != docs[:-1]
    starts = np.flatnonzero(first)
    del first
    counts = np.diff(np.append(starts, terms.size)).astype(dtype)
    return docs[starts], terms[starts], counts


class _TermIds(dict[str, int]):
    """Word as written (lower case) -> the id of its term, or -1 for a stopword.

    A word looked up for the first time is analysed then (``dict.__getitem__`` calls
    ``__missing__``): stopwords before stemming, as bm25s, and the terms numbered in order of
    first appearance in ``vocabulary``. So one pass over the words gives their ids.
    """

    def __init__(
        self, stop: frozenset[str], stem: Callable[[str], str] | None, vocabulary: dict[str, int]
    ) -> None:
        super().__init__()
        self._stop, self._stem, self._vocabulary = stop, stem, vocabulary

    def __missing__(self, word: str) -> int:
        if word in self._stop:
            term = -1
        else:
            stemmed = self._stem(word) if self._stem is not None else word
            term = self._vocabulary.setdefault(stemmed, len(self._vocabulary))
        self[word] = term
        return term


def stopword_list(setting: str | Path | None) -> list[str]:
    """The stopwords a BM25 stage's ``stopwords`` setting names.

    ``"en"`` (or ``"lucene"``: the same 33 words, Lucene's ``EnglishAnalyzer`` set, which
    bm25s ships), ``"none"`` or ``None`` for none, or a file of words, one per line (blank
    lines and lines starting with ``#`` skipped; lower-cased as the text is).

    Raises:
        HarnessError: The file cannot be read as UTF-8 text.
    """
    if setting is None or setting == "none":
        return []
    if setting in {"en", "lucene"}:
        return list(bm25s.stopwords.STOPWORDS_EN)
    file = Path(setting)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise HarnessError(f"cannot read the stopwords file: {error}", path=file) from None
    words = (line.strip().lower() for line in text.splitlines())
    return sorted({word for word in words if word and not word.startswith("#")})


class LexicalAnalyzer:
    """The tokenizer of a BM25 stage: bm25s's word pattern, lower case, stopwords, stemming.

    The same analysis decides what a query and a chunk share (``shares_query_term``).
    """

    def __init__(self, config: Bm25Retriever) -> None:
        self.stopwords: list[str] = stopword_list(config.stopwords)
        stemmer = config.stemmer
        self.stemmer: Any = None if stemmer in {None, "none"} else Stemmer.Stemmer(stemmer)
        # The corpus's analysis stems each distinct word once: PyStemmer's cache of recent
        # words only costs there (SciFact's 35,899 words: 0.067-0.086 -> 0.024-0.027 s).
        self._each_once: Any = (
            None if self.stemmer is None else Stemmer.Stemmer(stemmer, maxCacheSize=0)
        )

    def tokenize_ids(
        self, texts: Sequence[str], workers: int = 1
    ) -> tuple[TokenColumns, dict[str, int]]:
        """Token ids of many texts and the vocabulary (term -> id), as ``bm25s.tokenize``.

        A text's ids are those ``bm25s.tokenize`` gives it, up to the numbering of the terms
        (here in order of first appearance), analysed ``_BATCH_TEXTS`` texts at a time.
        """
        columns, vocabulary, _ = self.analyse(texts, workers)
        return columns, vocabulary

    def analyse(
        self, texts: Sequence[str], workers: int = 1
    ) -> tuple[TokenColumns, dict[str, int], int]:
        """:meth:`tokenize_ids` on up to ``workers`` processes, and the processes it took.

        A corpus large enough to pay for it (see :func:`~._bm25_workers.plan_parts`) is cut
        into contiguous parts analysed by forked workers; the parts are merged so that the
        token array, the offsets and the vocabulary are bit-identical to one process's.
        """
        sizes = np.fromiter(map(len, texts), np.int64, len(texts))
        parts = plan_parts(sizes, workers)
        if len(parts) == 1:
            flat, lengths, vocabulary = self._analysed(texts)
        else:
            flat, lengths, vocabulary = merge_parts(analyse_in_parts(self._part, texts, parts))
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return TokenColumns(flat, offsets), vocabulary, len(parts)

    def _part(self, texts: Sequence[str]) -> AnalysedPart:
        """One part of the texts analysed alone (its terms numbered from 0)."""
        flat, lengths, vocabulary = self._analysed(texts)
        return AnalysedPart(flat, lengths, list(vocabulary))

    def _analysed(
        self, texts: Sequence[str]
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64], dict[str, int]]:
        """The flat token ids of ``texts``, tokens per text and the vocabulary, in one pass.

        With array operations (:func:`~._bm25_terms.analyse_texts`); word by word with strings
        in the one case they cannot tell two words apart (their 64-bit ids are equal).
        """
        stem = self._each_once.stemWords if self._each_once is not None else None
        try:
            return analyse_texts(texts, frozenset(self.stopwords), stem)
        except IdCollision:
            return self._analysed_by_words(texts)

    def _analysed_by_words(
        self, texts: Sequence[str]
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64], dict[str, int]]:
        """:meth:`_analysed` with the regular expression, a string and a lookup per word."""
        stop = frozenset(self.stopwords)
        vocabulary: dict[str, int] = {}
        stem = self._each_once.stemWord if self._each_once is not None else None
        term_of = _TermIds(stop, stem, vocabulary)
        pieces: list[npt.NDArray[np.int32]] = []
        lengths = np.zeros(len(texts), dtype=np.int64)
        split = _WORD.findall
        for first in range(0, len(texts), _BATCH_TEXTS):
            words = [split(text.lower()) for text in texts[first : first + _BATCH_TEXTS]]
            ids = np.fromiter(
                map(term_of.__getitem__, itertools.chain.from_iterable(words)), np.int32
            )
            counts = np.fromiter(map(len, words), np.int64, len(words))
            kept_mask = ids >= 0
            owner = np.repeat(np.arange(len(words), dtype=np.int64), counts)
            lengths[first : first + len(words)] = np.bincount(
                owner[kept_mask], minlength=len(words)
            )
            pieces.append(ids[kept_mask])
        flat = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
        return flat, lengths, vocabulary

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

    Attributes:
        workers: The most processes or threads the index and its searches ran on so far
            (1: one core): analysis processes for a large corpus, search threads for many
            queries, within the ``workers`` setting (default: the available cores).
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
        self._cores = resolve_workers(config.workers)
        columns, vocabulary, self.workers = self.analyzer.analyse(texts, self._cores)
        # Kept to tell which chunks share a term with a query without analysing them again.
        self._chunk_terms = columns
        self._vocabulary = vocabulary
        self._query_terms: dict[str, frozenset[int]] = {}
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        # No chunk holds a term (stopwords only, or chunks too small for a word): no chunk can
        # share a term with a query, so every search finds nothing (bm25s cannot index it).
        self._model: ColumnsBM25 | None = None
        if vocabulary:
            self._model = ColumnsBM25(k1=config.k1, b=config.b, method=config.method)
            self._model.index(
                bm25s.tokenization.Tokenized(ids=columns, vocab=vocabulary), show_progress=False
            )
            if int(self._model.scores["data"].size) >= MMAP_MIN_ENTRIES:
                self._memory_map(self._model)
        if progress is not None:
            progress("index", 1, 1)

    def _memory_map(self, model: ColumnsBM25) -> None:
        """Save the scores and read them back memory-mapped (bm25s's own files)."""
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
        as :func:`~groundkit.harness.run._ranking.rank_order` breaks them (trec_eval's rule,
        at the cut too). Scores come from bm25s's ``get_scores`` (what ``retrieve`` computes
        per query); the selection is ours so that ties are deterministic.
        """
        k = min(depth, self.size)
        query_terms = self.analyzer.terms(queries)
        vocabulary = self._vocabulary
        for query, terms in zip(queries, query_terms, strict=True):
            self._query_terms[query] = frozenset(vocabulary[t] for t in terms if t in vocabulary)
        model = self._model
        known: list[list[int]] = [
            model.get_tokens_ids(terms) if terms and model is not None else []
            for terms in query_terms
        ]
        threads = search_threads(self._cores, len(queries), self.size) if k and model else 1
        self.workers = max(self.workers, threads)
        results: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = []
        if threads == 1:
            step = max(1, len(queries) // 100)
            for number, ids in enumerate(known):
                results.append(self._top(ids, k))
                if progress is not None and (number % step == 0 or number == len(queries) - 1):
                    progress("retrieve", number + 1, len(queries))
            return results

        def block(numbers: range) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]]:
            return [self._top(known[number], k) for number in numbers]

        # Blocks are scored on the threads and collected in query order: the serial results.
        with ThreadPoolExecutor(threads, thread_name_prefix="grk-bm25") as pool:
            for found in pool.map(block, blocks(len(known))):
                results.extend(found)
                if progress is not None:
                    progress("retrieve", len(results), len(queries))
        return results

    def _top(
        self, known: list[int], k: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The ``k`` best chunks for a query's known term ids (none without a term)."""
        model = self._model
        if model is None or not known or k == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        scores = model.get_scores_from_ids(known)
        ids = top_k(scores, k, positive_only=True)
        return ids, scores[ids].astype(np.float64)

    def shares_term(self, query: str, chunk: int) -> bool:
        """Whether chunk ``chunk`` contains an analysed term of ``query``."""
        terms = self._query_terms.get(query)
        if terms is None:
            analysed = self.analyzer.terms([query])[0]
            terms = frozenset(self._vocabulary[t] for t in analysed if t in self._vocabulary)
            self._query_terms[query] = terms
        return not terms.isdisjoint(self._chunk_terms[chunk])
