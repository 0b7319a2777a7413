"""Evidence traces: what a stage did with each gold quote (the input of diagnosis).

For a quote of a query (see :class:`~groundkit.judgments.report.EvidenceTrace`):

* ``first_rank``: the first recorded hit that touches one of the quote's spans (same overlap
  rule as the metrics, ``min_overlap_fraction`` included). At document level a hit touches a
  quote when it comes from the quote's document, resolved or not.
* ``doc_indexed``: whether the stage has a chunk of the quote's document.
* ``best_chunk_share``: the largest share of one of the quote's spans that a single chunk of the
  stage holds (0 when its document has no chunk).
* ``best_chunk_rank``: the rank of that chunk in the hits; among equally good chunks the one
  retrieved first, else the first in text order.
* ``tokens_before_quote`` (dense stages): encoder tokens (without special tokens, with the
  document prefix) from the chunk's start to the quote's start; 0 when the quote begins before.
* ``shares_query_term`` (BM25 stages): whether that chunk and the query share an analysed term.

Chunk-derived fields are ``None`` for stages without a chunk list (command, callable,
predictions, and hybrids of such stages), and for unresolved quotes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from groundkit.harness.run._ranking import ChunkTable, RankedRun
from groundkit.judgments.report import EvidenceTrace

__all__ = ["QuoteGold", "StageChunks", "trace_run"]

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class QuoteGold:
    """One gold quote, encoded: document code (-1: not in the corpus), spans as ``(m, 2)``."""

    doc: int
    spans: IntArray


@dataclass(frozen=True, eq=False)
class StageChunks:
    """A stage's chunk list with, per document code, its row range."""

    table: ChunkTable
    ranges: IntArray

    @classmethod
    def build(cls, table: ChunkTable, n_docs: int) -> StageChunks:
        """Index a chunk table sorted by document."""
        return cls(table=table, ranges=table.doc_ranges(n_docs))


@dataclass
class _Pending:
    query: int
    gold_index: int
    chunk: int
    quote_start: int


def _first_rank(
    run: RankedRun, query: int, quote: QuoteGold, fraction: float, document_level: bool
) -> int | None:
    rows = run.rows(query)
    docs = run.docs[rows]
    same = docs == quote.doc
    if document_level:
        touched = same
    else:
        if quote.spans.size == 0 or not same.any():
            return None
        hs = run.starts[rows][:, None]
        he = run.ends[rows][:, None]
        ss = quote.spans[None, :, 0]
        se = quote.spans[None, :, 1]
        overlap = np.minimum(he, se) - np.maximum(hs, ss)
        enough = (overlap >= 1) & (overlap >= fraction * (se - ss))
        touched = same & enough.any(axis=1)
    hits = np.flatnonzero(touched)
    return int(hits[0]) + 1 if hits.size else None


def trace_run(
    run: RankedRun,
    gold: Sequence[Sequence[QuoteGold]],
    *,
    chunks: StageChunks | None,
    min_overlap_fraction: float,
    document_level: bool,
    tokens_before: Callable[[list[tuple[int, int, int]]], list[int]] | None = None,
    shares_term: Callable[[list[tuple[int, int]]], list[bool]] | None = None,
) -> list[list[EvidenceTrace]]:
    """Evidence traces of every quote of every query of a run.

    Args:
        run: The stage's ranked hits.
        gold: Per query (in ``run.query_ids`` order), its quotes.
        chunks: The stage's chunks, or ``None`` when not measurable.
        min_overlap_fraction: The overlap rule of the metrics.
        document_level: Touching means same document.
        tokens_before: Given ``(chunk id, chunk start, quote start)`` requests, the encoder
            token counts (dense stages).
        shares_term: Given ``(query number, chunk id)`` requests, whether each chunk shares a
            term with its query (BM25 stages).

    Returns:
        Per query, one trace per quote.
    """
    results: list[list[dict[str, object]]] = []
    pending: list[_Pending] = []
    for query, quotes in enumerate(gold):
        rows = run.rows(query)
        hit_chunks = run.chunk_ids[rows]
        traces: list[dict[str, object]] = []
        for index, quote in enumerate(quotes):
            fields: dict[str, object] = {
                "gold_index": index,
                "first_rank": _first_rank(run, query, quote, min_overlap_fraction, document_level),
            }
            if chunks is not None and quote.doc < 0:
                fields["doc_indexed"] = False  # the quote's document is not in the corpus
            elif chunks is not None:
                lo, hi = int(chunks.ranges[quote.doc]), int(chunks.ranges[quote.doc + 1])
                fields["doc_indexed"] = hi > lo
                if quote.spans.size:
                    fields.update(_best_chunk(chunks.table, lo, hi, quote, hit_chunks))
                    chunk = fields.pop("_chunk")
                    quote_start = fields.pop("_quote_start")
                    if isinstance(chunk, int) and isinstance(quote_start, int) and chunk >= 0:
                        pending.append(_Pending(query, index, chunk, quote_start))
            traces.append(fields)
        results.append(traces)
    if chunks is not None and pending:
        if tokens_before is not None:
            counts = tokens_before(
                [(p.chunk, int(chunks.table.starts[p.chunk]), p.quote_start) for p in pending]
            )
            for item, count in zip(pending, counts, strict=True):
                results[item.query][item.gold_index]["tokens_before_quote"] = count
        if shares_term is not None:
            shared = shares_term([(p.query, p.chunk) for p in pending])
            for item, flag in zip(pending, shared, strict=True):
                results[item.query][item.gold_index]["shares_query_term"] = flag
    return [[EvidenceTrace.model_validate(fields) for fields in traces] for traces in results]


def _best_chunk(
    table: ChunkTable, lo: int, hi: int, quote: QuoteGold, hit_chunks: IntArray
) -> dict[str, object]:
    if hi == lo:
        return {"best_chunk_share": 0.0, "_chunk": -1, "_quote_start": -1}
    cs = table.starts[lo:hi][:, None]
    ce = table.ends[lo:hi][:, None]
    ss = quote.spans[None, :, 0]
    se = quote.spans[None, :, 1]
    lengths = np.maximum(se - ss, 1)
    shares = np.clip(np.minimum(ce, se) - np.maximum(cs, ss), 0, None) / lengths
    per_chunk = shares.max(axis=1)
    best = float(per_chunk.max())
    if best <= 0.0:
        return {"best_chunk_share": 0.0, "_chunk": -1, "_quote_start": -1}
    candidates = np.flatnonzero(per_chunk == best) + lo
    rank: int | None = None
    chosen = int(candidates[0])
    if hit_chunks.size:
        positions = np.flatnonzero(np.isin(hit_chunks, candidates))
        if positions.size:
            rank = int(positions[0]) + 1
            chosen = int(hit_chunks[positions[0]])
    span = int(np.argmax(shares[chosen - lo]))
    return {
        "best_chunk_share": min(1.0, best),
        "best_chunk_rank": rank,
        "_chunk": chosen,
        "_quote_start": int(quote.spans[span, 0]),
    }
