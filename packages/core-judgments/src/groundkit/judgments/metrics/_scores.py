"""Chunk-level retrieval metrics against quote-anchored gold, vectorised with numpy.

Definitions
-----------
For one query: the gold is a list of ``G >= 1`` gold quotes, each with a grade ``>= 1`` and the
character spans ``(doc, start, end)`` where it occurs (several occurrences give several spans;
an unresolved quote has none). The system returns hits ``h_1, h_2, ...`` (best first), each a
span ``(doc, start, end)``. Hit ``h_i`` *touches* a quote when, in the same document, it
overlaps one of the quote's spans by at least one character (and, with
``min_overlap_fraction = f > 0``, by at least ``f`` times that span's length; see
:func:`~groundkit.judgments.metrics.overlaps`).

**Credit once.** A quote is *credited* at the first rank whose hit touches it, and never again.
``n_i`` is the number of quotes credited at rank ``i`` (first touched there); hit ``i`` is
*useful* when ``n_i >= 1``; its gain ``g_i`` is the largest grade among the quotes it credits
(0 when it credits none). ``C_k = n_1 + ... + n_k`` is the number of quotes credited in the top
``k``, ``U_i`` the number of useful hits in the top ``i``. Ranks past the end of the list
contribute nothing. With these:

* ``recall@k = C_k / G``.
* ``hit@k = 1`` if ``C_k >= 1`` else ``0``.
* ``precision@k`` = (number of hits in the top ``k`` that touch any gold quote) ``/ k``
  (a hit re-touching an already credited quote still counts as touching).
* ``mrr = 1 / i`` for the first rank ``i`` whose hit touches any quote, ``0`` if none (over
  every hit given, no cutoff).
* ``ndcg@k = DCG@k / IDCG@k`` with ``DCG@k = sum_{i<=k} g_i / log2(i + 1)`` (linear gains,
  as trec_eval) and ``IDCG@k = sum_{j<=min(k, G)} r_j / log2(j + 1)`` where ``r_1 >= r_2 >= ...``
  are the gold grades sorted descending (one quote per rank).
  *Why nDCG <= 1*: the useful ranks ``i_1 < ... < i_u`` (``u <= min(k, G)``) carry the grades
  of ``u`` distinct quotes (credit once). Since ``i_j >= j`` the discount at ``i_j`` is at most
  the one at ``j``; pairing the ``u`` gains in descending order with the ``u`` best discounts
  can only increase the sum (rearrangement inequality); and the ``j``-th largest of ``u``
  distinct gold grades is at most ``r_j``. Hence ``DCG@k <= IDCG@k``.
* ``map`` (average precision with credit once, over every hit given):
  ``AP = (1 / G) * sum_i n_i * U_i / i`` over the useful ranks ``i``. Each term is at most
  ``n_i`` because ``U_i <= i``, and ``sum n_i <= G``, so ``0 <= AP <= 1``. When every quote
  is credited by a different hit this is the usual average precision.
* ``rprec = U_R / R`` with ``R = G`` (useful hits in the top ``R``).
* ``span_recall@k = |H_k ∩ S| / |S|`` and ``span_precision@k = |H_k ∩ S| / |H_k|``, in
  characters, where ``H_k`` is the union of the top-``k`` hit spans and ``S`` the union of all
  gold spans (both per document). ``span_iou@k = |H_k ∩ S| / |H_k ∪ S|``. Chroma's
  (chunking_evaluation) conventions divide by the *sum* of the hit lengths
  ``L_k = sum_{i<=k} |h_i|`` instead of the union: ``span_precision_chroma@k = |H_k ∩ S| / L_k``
  and ``span_iou_chroma@k = |H_k ∩ S| / (L_k + |S| - |H_k ∩ S|)``. ``precision_omega`` (no
  cutoff) is the best precision the stage's chunker allows, Chroma's precision Ω: with ``O``
  the union of the stage's chunks sharing a character with a gold span,
  ``|O ∩ S| / |O ∪ S|``; it needs the chunk list (``chunks=``). All are ``0`` when the
  denominator is ``0``. ``min_overlap_fraction`` does not apply to them.
* Character budgets, fair across chunk sizes: ``recall@Nc`` and ``ndcg@Nc``. Hits are read in
  rank order while characters remain: hit ``i`` is read when the hits before it total fewer
  than ``N`` characters, and the hit that would exceed the budget is cut to its first
  remaining characters (a prefix), so exactly ``min(N, total)`` characters are read. The read
  hits form a prefix of ``m`` hits of the ranking with (possibly) a shortened last span;
  ``recall@Nc`` is the recall of that truncated list and ``ndcg@Nc`` is its ``ndcg@m``: the
  ideal is truncated at the ``m`` hits considered (the same ideal ``ndcg@k`` would use with
  ``k = m``), so both stay within [0, 1]. A ranking of few long chunks is compared with its own
  ideal of few ranks; read ``recall@Nc`` beside it to see how much of the gold was reached.
* Token budgets: ``recall@Nt`` and ``ndcg@Nt``, the same in tokens of a tokenizer counted on
  each hit's text, the hit that would exceed the budget cut after its first remaining tokens
  (at a token's end; overlap stays in characters). See :class:`HitTokens`.

Every metric lies within [0, 1]. A query that has gold but no hits scores 0 on every metric.
Queries without gold (unanswerable) must be left out by the caller.

Implementation
--------------
Document ids are encoded as integers and the hits are laid out rank-major in padded
``(depth, queries)`` blocks (queries grouped by list length and span count so padding stays
small). For up to 64 quotes per query, the quotes a hit touches form a ``uint64`` bit mask
(bit ``j`` = the quote of ``j``-th highest grade); a cumulative OR along the ranks gives the
credited set, its popcount ``C_k``, and the lowest new bit the gain ``g_i``. Queries with more
than 64 quotes take an exact per-query path with boolean matrices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.metrics._budgets import HitTokens, budget_ends, budget_groups
from groundkit.judgments.metrics._codes import _popcount, _shared_codes
from groundkit.judgments.metrics._hits import check_min_overlap_fraction
from groundkit.judgments.metrics._spans import (
    SPAN_KINDS,
    GoldSpans,
    Selection,
    omega_selection,
    overlap_totals,
    span_value,
)
from groundkit.judgments.metrics._spec import MetricSpec, parse_metric
from groundkit.judgments.metrics._tables import ChunkSpans, GoldTable, HitTable

__all__ = ["MetricTable", "mean_scores", "score_queries", "score_table"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
MaskArray = npt.NDArray[np.uint64]

_MAX_FAST_QUOTES = 64
# Upper bound of block cells (depth x queries) processed at once, to bound memory.
_BLOCK_CELLS = 1 << 22


@dataclass(frozen=True, eq=False)
class MetricTable:
    """Per-query metric values.

    Attributes:
        query_ids: Query ids, in the order of the gold input.
        metrics: Metric names, in the order requested (duplicates removed).
        values: ``(len(query_ids), len(metrics))`` array of values within [0, 1].
    """

    query_ids: tuple[str, ...]
    metrics: tuple[str, ...]
    values: FloatArray

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {metric: value}}``."""
        rows = self.values.tolist()
        return {
            query_id: dict(zip(self.metrics, row, strict=True))
            for query_id, row in zip(self.query_ids, rows, strict=True)
        }

    def mean(self) -> dict[str, float]:
        """Mean of each metric over all queries (``0.0`` when there are none)."""
        if not self.query_ids:
            return dict.fromkeys(self.metrics, 0.0)
        return dict(zip(self.metrics, self.values.mean(axis=0).tolist(), strict=True))


def mean_scores(scores: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Mean of each metric over the queries of a :func:`score_queries` result.

    Args:
        scores: ``{query_id: {metric: value}}``; every query must have the same metrics.

    Returns:
        ``{metric: mean}`` (empty for no queries).

    Raises:
        JudgmentError: If queries disagree on the metrics they carry.
    """
    names: list[str] | None = None
    sums: dict[str, float] = {}
    for query_id, row in scores.items():
        if names is None:
            names = list(row)
            sums = dict.fromkeys(names, 0.0)
        elif set(row) != set(names):
            raise JudgmentError("queries carry different metrics", item_id=query_id)
        for name in names:
            sums[name] += row[name]
    return {name: total / len(scores) for name, total in sums.items()}


def score_queries(
    gold_by_query: Mapping[str, Sequence[Any]] | GoldTable,
    hits_by_query: Mapping[str, Sequence[Any]] | HitTable,
    metrics: Sequence[str],
    *,
    min_overlap_fraction: float = 0.0,
    chunks: ChunkSpans | Sequence[Any] | None = None,
    tokens: HitTokens | None = None,
) -> dict[str, dict[str, float]]:
    """Score ranked hits against quote-anchored gold, per query.

    See the module documentation for the exact definition of every metric.

    Args:
        gold_by_query: ``{query_id: gold items}`` (see :meth:`GoldTable.from_items`: a
            :class:`GoldItem`, a ``ResolvedQuote`` or any object with ``grade``/``gold.grade``
            and ``spans``), or a :class:`GoldTable`. Every query needs at least one item;
            leave unanswerable queries out.
        hits_by_query: ``{query_id: hits best first}`` (:class:`Hit` or anything with ``doc``,
            ``start``, ``end``), or a :class:`HitTable`. Queries absent here score 0 on
            everything; queries absent from the gold are ignored.
        metrics: Metric names (see :func:`parse_metric`).
        min_overlap_fraction: Fraction of a gold span a hit must cover to touch it (0 = one
            shared character is enough).
        chunks: Every chunk of the stage (a :class:`ChunkSpans`, or objects with ``doc``,
            ``start``, ``end``); needed by ``precision_omega`` only.
        tokens: The hit texts and the tokenizer counting them (:class:`HitTokens`); needed
            by the token budgets (``recall@Nt``, ``ndcg@Nt``) only.

    Returns:
        ``{query_id: {metric: value}}`` in gold order.

    Raises:
        JudgmentError: On an unknown metric, a query without gold, invalid spans,
            ``precision_omega`` without ``chunks`` or a token budget without ``tokens``.
    """
    return score_table(
        gold_by_query,
        hits_by_query,
        metrics,
        min_overlap_fraction=min_overlap_fraction,
        chunks=chunks,
        tokens=tokens,
    ).to_dict()


def score_table(
    gold_by_query: Mapping[str, Sequence[Any]] | GoldTable,
    hits_by_query: Mapping[str, Sequence[Any]] | HitTable,
    metrics: Sequence[str],
    *,
    min_overlap_fraction: float = 0.0,
    chunks: ChunkSpans | Sequence[Any] | None = None,
    tokens: HitTokens | None = None,
) -> MetricTable:
    """Same as :func:`score_queries`, returning a :class:`MetricTable` (arrays, no dicts).

    Args:
        gold_by_query: Gold items by query id, or a :class:`GoldTable`.
        hits_by_query: Ranked hits by query id, or a :class:`HitTable`.
        metrics: Metric names.
        min_overlap_fraction: Fraction of a gold span a hit must cover to touch it.
        chunks: Every chunk of the stage; needed by ``precision_omega`` only.
        tokens: The hit texts and their tokenizer; needed by the token budgets only.

    Returns:
        The per-query values.

    Raises:
        JudgmentError: On an unknown metric, a query without gold, invalid spans,
            ``precision_omega`` without ``chunks`` or a token budget without ``tokens``.
    """
    if isinstance(metrics, str):
        raise JudgmentError("metrics must be a sequence of metric names, not one string")
    specs: dict[str, MetricSpec] = {}
    for name in metrics:
        spec = parse_metric(name)
        specs.setdefault(spec.name, spec)
    fraction = check_min_overlap_fraction(min_overlap_fraction)
    gold = (
        gold_by_query
        if isinstance(gold_by_query, GoldTable)
        else GoldTable.from_items(gold_by_query)
    )
    hits = (
        hits_by_query if isinstance(hits_by_query, HitTable) else HitTable.from_hits(hits_by_query)
    )
    if chunks is not None and not isinstance(chunks, ChunkSpans):
        chunks = ChunkSpans.from_chunks(chunks)
    ctx = _Context(gold, hits, fraction)
    names = tuple(specs)
    values = np.zeros((ctx.n_queries, len(names)), dtype=np.float64)
    columns = {name: index for index, name in enumerate(names)}

    ranked = [
        spec for spec in specs.values() if spec.kind not in SPAN_KINDS and not spec.needs_chunks
    ]
    budgets = budget_groups(ranked, tokens)
    plain = [spec for spec in ranked if not spec.budgeted]
    if plain:
        _score_ranked(ctx, ctx.hit_ends, None, plain, values, columns)
    for budget, chosen in budgets:
        ends, read = budget_ends(hits, budget, tokens)
        _score_ranked(ctx, ends, ctx.per_gold_query(read), chosen, values, columns)
    _span_columns(ctx, list(specs.values()), chunks, values, columns)
    return MetricTable(query_ids=gold.query_ids, metrics=names, values=values)


class _Context:
    """Gold and hits aligned on the gold queries, with integer document codes shared by both."""

    def __init__(self, gold: GoldTable, hits: HitTable, fraction: float) -> None:
        self.fraction = fraction
        self.n_queries = nq = gold.n_queries
        self.quote_offsets = gold.quote_offsets
        self.n_quotes_per_query: IntArray = np.diff(gold.quote_offsets)
        self.quote_query: IntArray = np.repeat(
            np.arange(nq, dtype=np.int64), self.n_quotes_per_query
        )
        # Local rank of each quote within its query by descending grade (stable): the bit
        # position in the masks, so the lowest set bit is the best-graded quote.
        order = np.lexsort((-gold.grades, self.quote_query))
        local = np.empty(len(order), dtype=np.int64)
        local[order] = (
            np.arange(len(order), dtype=np.int64) - gold.quote_offsets[self.quote_query[order]]
        )
        self.quote_local = local
        self.grades: FloatArray = gold.grades.astype(np.float64)
        self.grades_by_local: FloatArray = gold.grades[order].astype(np.float64)
        span_counts = np.diff(gold.span_offsets)
        span_quote = np.repeat(np.arange(len(gold.grades), dtype=np.int64), span_counts)
        self.span_query = self.quote_query[span_quote]
        self.span_bit = local[span_quote]
        self.span_docs = gold.span_docs
        self.span_starts = gold.span_starts
        self.span_ends = gold.span_ends
        self.spans_per_query: IntArray = np.bincount(self.span_query, minlength=nq).astype(np.int64)
        self.span_query_start: IntArray = gold.span_offsets[gold.quote_offsets[:-1]]

        # Hits, addressed through the gold queries (hits of unknown queries are never read).
        position = {query_id: index for index, query_id in enumerate(hits.query_ids)}
        hit_query = np.fromiter(
            (position.get(query_id, -1) for query_id in gold.query_ids), dtype=np.int64, count=nq
        )
        present = hit_query >= 0
        safe = np.maximum(hit_query, 0)
        counts = np.diff(hits.offsets)
        self.hit_query = hit_query
        if len(counts):
            self.hit_start: IntArray = np.where(present, hits.offsets[:-1][safe], 0)
            self.hit_count: IntArray = np.where(present, counts[safe], 0)
        else:
            self.hit_start = np.zeros(nq, dtype=np.int64)
            self.hit_count = np.zeros(nq, dtype=np.int64)
        self.gold_doc_ids = gold.doc_ids
        self.hit_docs = _shared_codes(gold.doc_ids, hits)
        self.n_codes = len(gold.doc_ids) + len(hits.doc_ids)
        self.hit_starts = hits.starts
        self.hit_ends = hits.ends
        self._idcg_cache: dict[int, FloatArray] = {}

    def gold_spans(self) -> GoldSpans:
        """The non-empty gold spans, for the span metrics."""
        keep = self.span_ends > self.span_starts
        return GoldSpans(
            n_queries=self.n_queries,
            n_codes=self.n_codes,
            query=self.span_query[keep],
            docs=self.span_docs[keep],
            starts=self.span_starts[keep],
            ends=self.span_ends[keep],
            quote=self.span_bit[keep],  # occurrences of one quote count once (schema 2.3)
        )

    def idcg(self, cutoff: int) -> FloatArray:
        """IDCG at a rank cutoff, per query."""
        cached = self._idcg_cache.get(cutoff)
        if cached is None:
            cached = self.idcg_per_query(np.full(self.n_queries, cutoff, dtype=np.int64))
            self._idcg_cache[cutoff] = cached
        return cached

    def idcg_per_query(self, cutoffs: IntArray) -> FloatArray:
        """IDCG with a cutoff of its own for each query."""
        kept = self.quote_local < cutoffs[self.quote_query]
        weights = np.where(kept, self.grades / np.log2(self.quote_local + 2.0), 0.0)
        return np.bincount(self.quote_query, weights=weights, minlength=self.n_queries).astype(
            np.float64
        )

    def per_gold_query(self, read: IntArray) -> IntArray:
        """A value per query of the hit table, per gold query (0 for a query without hits)."""
        if not len(read):
            return np.zeros(self.n_queries, dtype=np.int64)
        return np.where(self.hit_query >= 0, read[np.maximum(self.hit_query, 0)], 0)


@dataclass
class _RankData:
    """Per-rank arrays of a block, shape ``(depth, queries)``."""

    credited: IntArray  # C_i: quotes credited within the top i
    touching: BoolArray  # hit i touches some gold quote
    gain: FloatArray | None  # g_i for the first ranks that need it


def _ceil_log2(values: IntArray) -> IntArray:
    out = np.zeros(values.shape, dtype=np.int64)
    positive = values > 1
    out[positive] = np.ceil(np.log2(values[positive].astype(np.float64))).astype(np.int64)
    return out


def _gain_depth(specs: Sequence[MetricSpec], depth: int) -> int:
    needed = 0
    for spec in specs:
        if spec.kind == "ndcg":
            needed = max(needed, depth if spec.budgeted else (spec.cutoff or 0))
    return min(needed, depth)


def _score_ranked(
    ctx: _Context,
    ends: IntArray,
    read: IntArray | None,
    specs: Sequence[MetricSpec],
    values: FloatArray,
    columns: Mapping[str, int],
) -> None:
    """Compute rank-based metrics (all with the same hit ends) into ``values``."""
    idcg_read = ctx.idcg_per_query(read) if read is not None else None
    active = (ctx.hit_count > 0) & (ctx.spans_per_query > 0)
    wide = active & (ctx.n_quotes_per_query > _MAX_FAST_QUOTES)
    fast = np.flatnonzero(active & ~wide)
    # Group queries by (list length, span count) classes so padding wastes at most ~4x.
    depth_class = _ceil_log2(ctx.hit_count[fast])
    span_class = _ceil_log2(ctx.spans_per_query[fast])
    group_key = depth_class * 64 + span_class
    order = np.argsort(group_key, kind="stable")
    sorted_keys = group_key[order]
    boundaries = np.flatnonzero(np.diff(sorted_keys)) + 1
    groups = np.split(fast[order], boundaries) if fast.size else []
    for group in groups:
        depth = int(ctx.hit_count[group].max())
        step = max(1, _BLOCK_CELLS // max(depth, 1))
        for first in range(0, len(group), step):
            rows = group[first : first + step]
            data = _fast_block(ctx, rows, ends, _gain_depth(specs, depth))
            _block_metrics(ctx, rows, data, specs, values, columns, idcg_read)
    for query in np.flatnonzero(wide):
        rows = np.asarray([query], dtype=np.int64)
        data = _wide_block(ctx, int(query), ends)
        _block_metrics(ctx, rows, data, specs, values, columns, idcg_read)


def _fast_block(ctx: _Context, rows: IntArray, ends: IntArray, gain_depth: int) -> _RankData:
    counts = ctx.hit_count[rows]
    depth = int(counts.max())
    ranks = np.arange(depth, dtype=np.int64)[:, None]
    valid = ranks < counts[None, :]
    index = np.where(valid, ctx.hit_start[rows][None, :] + ranks, 0)
    docs = np.where(valid, ctx.hit_docs[index], -1)
    starts = ctx.hit_starts[index].ravel()
    hit_ends = ends[index].ravel()
    n_rows = len(rows)
    masks = np.zeros(depth * n_rows, dtype=np.uint64)
    span_counts = ctx.spans_per_query[rows]
    span_first = ctx.span_query_start[rows]
    for slot in range(int(span_counts.max())):
        has_span = slot < span_counts
        span = np.where(has_span, span_first + slot, 0)
        span_doc = np.where(has_span, ctx.span_docs[span], -2)
        same_doc = np.flatnonzero(docs == span_doc[None, :])
        if same_doc.size == 0:
            continue
        column = same_doc % n_rows
        span_here = span[column]
        s_start = ctx.span_starts[span_here]
        s_end = ctx.span_ends[span_here]
        overlap = np.minimum(hit_ends[same_doc], s_end) - np.maximum(starts[same_doc], s_start)
        touch = overlap >= 1
        if ctx.fraction > 0.0:
            touch &= overlap >= ctx.fraction * (s_end - s_start)
        bits = np.left_shift(np.uint64(1), ctx.span_bit[span_here[touch]].astype(np.uint64))
        masks[same_doc[touch]] |= bits
    masks2d = masks.reshape(depth, n_rows)
    cumulative = np.bitwise_or.accumulate(masks2d, axis=0)
    credited = _popcount(cumulative)
    touching = masks2d != 0
    gain: FloatArray | None = None
    if gain_depth > 0:
        previous = np.zeros((gain_depth, n_rows), dtype=np.uint64)
        previous[1:] = cumulative[: gain_depth - 1]
        new = masks2d[:gain_depth] & ~previous
        lowest = new & (~new + np.uint64(1))
        credited_here = new != 0
        bit_index = np.log2(np.where(credited_here, lowest, np.uint64(1)).astype(np.float64))
        quote = ctx.quote_offsets[rows][None, :] + bit_index.astype(np.int64)
        gain = np.where(credited_here, ctx.grades_by_local[quote], 0.0)
    return _RankData(credited=credited, touching=touching, gain=gain)


def _wide_block(ctx: _Context, query: int, ends: IntArray) -> _RankData:
    """Exact per-query path for queries with more quotes than a mask holds."""
    first_hit = int(ctx.hit_start[query])
    n_hits = int(ctx.hit_count[query])
    n_quotes = int(ctx.n_quotes_per_query[query])
    docs = ctx.hit_docs[first_hit : first_hit + n_hits]
    starts = ctx.hit_starts[first_hit : first_hit + n_hits]
    hit_ends = ends[first_hit : first_hit + n_hits]
    touches = np.zeros((n_hits, n_quotes), dtype=np.bool_)
    first_span = int(ctx.span_query_start[query])
    for span in range(first_span, first_span + int(ctx.spans_per_query[query])):
        s_start = int(ctx.span_starts[span])
        s_end = int(ctx.span_ends[span])
        overlap = np.minimum(hit_ends, s_end) - np.maximum(starts, s_start)
        touch = (docs == ctx.span_docs[span]) & (overlap >= 1)
        if ctx.fraction > 0.0:
            touch &= overlap >= ctx.fraction * (s_end - s_start)
        touches[:, ctx.span_bit[span]] |= touch
    ever: BoolArray = np.asarray(touches.any(axis=0))
    first = touches.argmax(axis=0)[ever]
    new_count = np.bincount(first, minlength=n_hits).astype(np.int64)
    gain = np.zeros(n_hits, dtype=np.float64)
    grades = ctx.grades_by_local[int(ctx.quote_offsets[query]) + np.flatnonzero(ever)]
    np.maximum.at(gain, first, grades)
    return _RankData(
        credited=np.cumsum(new_count)[:, None],
        touching=np.asarray(touches.any(axis=1))[:, None],
        gain=gain[:, None],
    )


def _block_metrics(
    ctx: _Context,
    rows: IntArray,
    data: _RankData,
    specs: Sequence[MetricSpec],
    values: FloatArray,
    columns: Mapping[str, int],
    idcg_read: FloatArray | None,
) -> None:
    depth = data.credited.shape[0]
    n_gold = ctx.n_quotes_per_query[rows].astype(np.float64)
    discounts = 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))
    useful_cum: IntArray | None = None
    new_count: IntArray | None = None

    def useful() -> tuple[IntArray, IntArray]:
        nonlocal useful_cum, new_count
        if useful_cum is None or new_count is None:
            new_count = np.diff(data.credited, axis=0, prepend=0)
            useful_cum = np.cumsum(new_count > 0, axis=0)
        return new_count, useful_cum

    for spec in specs:
        column = columns[spec.name]
        if spec.budgeted:
            if spec.kind == "recall":
                result = data.credited[-1] / n_gold
            else:
                assert data.gain is not None
                assert idcg_read is not None
                result = (data.gain * discounts[: data.gain.shape[0], None]).sum(
                    axis=0
                ) / idcg_read[rows]
        elif spec.kind in ("recall", "hit", "precision", "ndcg"):
            cutoff = spec.cutoff or 1
            top = min(cutoff, depth)
            if spec.kind == "recall":
                result = data.credited[top - 1] / n_gold
            elif spec.kind == "hit":
                result = (data.credited[top - 1] > 0).astype(np.float64)
            elif spec.kind == "precision":
                result = data.touching[:top].sum(axis=0) / float(cutoff)
            else:
                assert data.gain is not None
                dcg = (data.gain[:top] * discounts[:top, None]).sum(axis=0)
                result = dcg / ctx.idcg(cutoff)[rows]
        elif spec.kind == "mrr":
            found = data.touching.any(axis=0)
            first = data.touching.argmax(axis=0)
            result = np.where(found, 1.0 / (first + 1.0), 0.0)
        elif spec.kind == "map":
            counts, cum = useful()
            ranks = np.arange(1, depth + 1, dtype=np.float64)[:, None]
            result = (counts * (cum / ranks)).sum(axis=0) / n_gold
        else:  # rprec
            _, cum = useful()
            top_r = np.minimum(ctx.n_quotes_per_query[rows], depth)
            result = cum[top_r - 1, np.arange(len(rows))] / n_gold
        values[rows, column] = result


def _top_k(ctx: _Context, cutoff: int) -> Selection:
    """The top-``cutoff`` hits of every query."""
    taken = np.minimum(ctx.hit_count, cutoff)
    total = int(taken.sum())
    query = np.repeat(np.arange(ctx.n_queries, dtype=np.int64), taken)
    group_first = np.zeros(ctx.n_queries + 1, dtype=np.int64)
    np.cumsum(taken, out=group_first[1:])
    rows = np.repeat(ctx.hit_start, taken) + (
        np.arange(total, dtype=np.int64) - np.repeat(group_first[:-1], taken)
    )
    return Selection(query, ctx.hit_docs[rows], ctx.hit_starts[rows], ctx.hit_ends[rows])


def _span_columns(
    ctx: _Context,
    specs: Sequence[MetricSpec],
    chunks: ChunkSpans | None,
    values: FloatArray,
    columns: Mapping[str, int],
) -> None:
    """Compute the span metrics (cutoff ones and ``precision_omega``) into ``values``."""
    gold = ctx.gold_spans()
    for cutoff in sorted({spec.cutoff or 0 for spec in specs if spec.kind in SPAN_KINDS}):
        overlap = overlap_totals(gold, _top_k(ctx, cutoff))
        for spec in specs:
            if spec.kind in SPAN_KINDS and spec.cutoff == cutoff:
                values[:, columns[spec.name]] = span_value(spec.kind, overlap)
    omega = [spec for spec in specs if spec.needs_chunks]
    if omega:
        if chunks is None:
            raise JudgmentError(
                f"metric {omega[0].name!r} needs the stage's chunk list (pass chunks=...)"
            )
        codes = _shared_codes(ctx.gold_doc_ids, chunks)
        selected = omega_selection(gold, codes, chunks.starts, chunks.ends)
        for spec in omega:
            values[:, columns[spec.name]] = span_value(spec.kind, overlap_totals(gold, selected))
