"""Ranked hits of one stage in columnar form, and deterministic top-k selection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from groundkit.judgments import Chunk

__all__ = ["ChunkTable", "RankedRun", "rank_order", "top_k"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def rank_order(ids: npt.ArrayLike, scores: npt.ArrayLike) -> IntArray:
    """Positions of hits in rank order: score descending, ties to the *higher* id.

    The one tie rule of the harness, trec_eval's (score descending, document id descending):
    chunk rows sort as their documents' ids, then their offsets, so at document level a tie
    between whole documents goes to the document trec_eval ranks first, and at chunk level a
    tie goes to the later chunk.

    Args:
        ids: The hits' chunk rows (or any integer codes that sort as the ids do).
        scores: Their scores.
    """
    keys = np.asarray(ids, dtype=np.int64)
    return np.lexsort((-keys, -np.asarray(scores, dtype=np.float64))).astype(np.int64)


def top_k(scores: npt.NDArray[np.floating], k: int, *, positive_only: bool) -> IntArray:
    """Indices of the ``k`` best scores in :func:`rank_order` (ties to the higher index).

    ``argpartition`` finds the k-th best score; every index tied with it is kept as a
    candidate, so which of the tied items make the cut follows the tie rule, never the
    partition order: a tie that straddles rank ``k`` keeps the items trec_eval would rank
    first, as if the whole ranking had been written and cut there.

    Args:
        scores: One score per item.
        k: How many to keep.
        positive_only: Drop items scoring ``<= 0`` (BM25: no query term matched).
    """
    if positive_only:
        candidates = np.flatnonzero(scores > 0)
    else:
        candidates = np.arange(scores.size, dtype=np.int64)
    if candidates.size > k:
        values = scores[candidates]
        cut = np.argpartition(-values, k - 1)[k - 1]
        threshold = values[cut]
        candidates = candidates[values >= threshold]
    order = rank_order(candidates, scores[candidates])
    return candidates[order][:k].astype(np.int64)


@dataclass(frozen=True, eq=False)
class ChunkTable:
    """The chunks a stage indexed, as columns; row ``i`` is chunk id ``i``.

    Attributes:
        docs: Document code (index into the corpus's sorted ids) of each chunk.
        starts: Start offset of each chunk.
        ends: End offset of each chunk.
    """

    docs: IntArray
    starts: IntArray
    ends: IntArray

    @classmethod
    def from_chunks(cls, chunks: Sequence[Chunk], doc_codes: dict[str, int]) -> ChunkTable:
        """Encode chunks with the corpus's document codes."""
        return cls(
            docs=np.fromiter((doc_codes[c.doc] for c in chunks), np.int64, len(chunks)),
            starts=np.fromiter((c.start for c in chunks), np.int64, len(chunks)),
            ends=np.fromiter((c.end for c in chunks), np.int64, len(chunks)),
        )

    def __len__(self) -> int:
        return int(self.docs.size)

    def doc_ranges(self, n_docs: int) -> IntArray:
        """Offsets ``r``: chunks of document code ``d`` are rows ``r[d]:r[d + 1]``.

        Valid when the table is sorted by document (true for tables from ``chunk_corpus``).
        """
        return np.searchsorted(self.docs, np.arange(n_docs + 1), side="left").astype(np.int64)


@dataclass(frozen=True, eq=False)
class RankedRun:
    """One stage's ranked hits for the answerable queries (CSR layout).

    Hits of query ``i`` are rows ``offsets[i]:offsets[i + 1]``, best first.

    Attributes:
        query_ids: The answerable queries, in judgment order.
        offsets: ``len(query_ids) + 1`` offsets.
        docs: Document code of each hit.
        starts: Start offset of each hit.
        ends: End offset of each hit.
        scores: The retriever's score of each hit.
        chunk_ids: Row of the hit in the stage's :class:`ChunkTable`, ``-1`` when unknown.
        returned: Whether the retriever returned a list (possibly empty) for each query.
        ties_ordered: Ties are already in trec_eval's order for the ids the run was written
            with (a TREC run read through an id map), so scoring must not reorder them by
            the corpus's ids.
    """

    query_ids: tuple[str, ...]
    offsets: IntArray
    docs: IntArray
    starts: IntArray
    ends: IntArray
    scores: FloatArray
    chunk_ids: IntArray
    returned: npt.NDArray[np.bool_]
    ties_ordered: bool = False

    @property
    def counts(self) -> IntArray:
        """Number of hits per query."""
        return np.diff(self.offsets)

    def rows(self, query: int) -> slice:
        """The rows of query number ``query``."""
        return slice(int(self.offsets[query]), int(self.offsets[query + 1]))

    @classmethod
    def from_lists(
        cls,
        query_ids: Sequence[str],
        per_query: Sequence[tuple[IntArray, IntArray, IntArray, FloatArray, IntArray] | None],
        *,
        ties_ordered: bool = False,
    ) -> RankedRun:
        """Assemble per-query arrays ``(docs, starts, ends, scores, chunk_ids)``.

        ``None`` marks a query the retriever did not answer.
        """
        empty_i = np.zeros(0, dtype=np.int64)
        empty_f = np.zeros(0, dtype=np.float64)
        parts = [
            p if p is not None else (empty_i, empty_i, empty_i, empty_f, empty_i) for p in per_query
        ]
        counts = np.fromiter((p[0].size for p in parts), np.int64, len(parts))
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])

        def column(index: int, dtype: type[np.generic]) -> npt.NDArray[np.generic]:
            if not parts:
                return np.zeros(0, dtype=dtype)
            return np.concatenate([p[index] for p in parts]).astype(dtype, copy=False)

        return cls(
            query_ids=tuple(query_ids),
            offsets=offsets,
            docs=column(0, np.int64),  # type: ignore[arg-type]
            starts=column(1, np.int64),  # type: ignore[arg-type]
            ends=column(2, np.int64),  # type: ignore[arg-type]
            scores=column(3, np.float64),  # type: ignore[arg-type]
            chunk_ids=column(4, np.int64),  # type: ignore[arg-type]
            returned=np.fromiter((p is not None for p in per_query), np.bool_, len(per_query)),
            ties_ordered=ties_ordered,
        )
