"""Character-level span metrics: overlap totals per query and the one rule of each metric.

For one query, a *selection* is a list of spans ``c_1, c_2, ...`` (the top-``k`` hits, or the
chunks of ``precision_omega``), ``C`` their union, and ``S`` the union of its gold, all per
document and counted in characters. :func:`overlap_totals` computes, per query, ``|C ∩ S|``,
``|C|``, the sum of the selected lengths ``Σ |c_i|`` (overlapping spans counted as often as
they are selected) and ``|S|``; :func:`span_value` turns them into a metric.

**A quote counts once** (report schema 2.3). A quote found at several places has one span per
occurrence; it enters ``S`` through ONE of them, its *best-covered occurrence*: the one with
the most characters in ``C`` (the first listed, i.e. the first in the document, among equals).
So ``|S|`` holds the length of one occurrence, and retrieving any one copy in full gives
``span_recall`` 1; the characters of the other copies are not gold (a hit on them lowers
precision and IoU as any other text does). A pinned quote has one span: there is no choice.
:func:`omega_selection` selects, for ``precision_omega``, the chunks sharing a character with
each quote's occurrence that the chunker fits best (the highest ``|O_o ∩ o| / |O_o ∪ o|``,
``O_o`` the chunks touching occurrence ``o``; the first among equals); ``S`` is then those
occurrences. Before schema 2.3 every occurrence was in ``S`` (:attr:`GoldSpans.quote` left
``None`` keeps that rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError

__all__ = [
    "SPAN_KINDS",
    "GoldSpans",
    "Overlap",
    "Selection",
    "omega_selection",
    "overlap_totals",
    "span_value",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

#: Span metrics with a rank cutoff (``kind@k``), over the top-``k`` hits.
SPAN_KINDS = frozenset(
    {"span_recall", "span_precision", "span_precision_chroma", "span_iou", "span_iou_chroma"}
)


@dataclass(frozen=True, eq=False)
class GoldSpans:
    """The non-empty gold spans of every query, with document codes shared with the hits.

    Attributes:
        n_queries: Number of queries.
        n_codes: Number of document codes (gold and hit documents together).
        query: Query number of each span.
        docs: Document code of each span.
        starts: Start of each span.
        ends: End (exclusive) of each span.
        quote: Quote number of each span: spans with the same query and quote number are the
            occurrences of one quote, which counts once (at its best-covered occurrence).
            ``None``: every span is a quote of its own (the rule before report schema 2.3).
    """

    n_queries: int
    n_codes: int
    query: IntArray
    docs: IntArray
    starts: IntArray
    ends: IntArray
    quote: IntArray | None = None


@dataclass(frozen=True, eq=False)
class Selection:
    """Spans selected for each query (hits, or chunks): query number, document, start, end.

    ``gold_rows``, when given, are the gold spans (rows of :class:`GoldSpans`) the selection
    was made for; they are then ``S`` as they are, with no choice of occurrence
    (:func:`omega_selection` chooses before it selects).
    """

    query: IntArray
    docs: IntArray
    starts: IntArray
    ends: IntArray
    gold_rows: IntArray | None = None


@dataclass(frozen=True, eq=False)
class Overlap:
    """Per-query character totals of a selection ``c_1, c_2, ...`` against the gold ``S``.

    Attributes:
        shared: ``|C ∩ S|``, ``C`` the union of the selected spans.
        union: ``|C|``.
        total: ``Σ |c_i|`` (a character selected twice counts twice).
        gold: ``|S|``.
    """

    shared: FloatArray
    union: FloatArray
    total: FloatArray
    gold: FloatArray


def span_value(kind: str, overlap: Overlap) -> FloatArray:
    """The value of a span metric per query (``0`` where its denominator is ``0``).

    This is the one place each span metric's rule is written:

    * ``span_recall = |C ∩ S| / |S|``;
    * ``span_precision = |C ∩ S| / |C|`` (union of the hits);
    * ``span_precision_chroma = |C ∩ S| / Σ |c_i|`` (Chroma's precision: sum of hit lengths);
    * ``span_iou = |C ∩ S| / |C ∪ S|``, ``|C ∪ S| = |C| + |S| − |C ∩ S|``; ``precision_omega``
      is this rule on the chunks that touch the gold (Chroma's precision Ω);
    * ``span_iou_chroma = |C ∩ S| / (Σ |c_i| + |S| − |C ∩ S|)`` (Chroma's IoU).

    Args:
        kind: The metric kind (a :data:`SPAN_KINDS` member or ``precision_omega``).
        overlap: The selection's totals.

    Returns:
        One value within [0, 1] per query.
    """
    shared = overlap.shared
    if kind == "span_recall":
        denominator = overlap.gold
    elif kind == "span_precision":
        denominator = overlap.union
    elif kind == "span_precision_chroma":
        denominator = overlap.total
    elif kind in ("span_iou", "precision_omega"):
        denominator = overlap.union + overlap.gold - shared
    elif kind == "span_iou_chroma":
        denominator = overlap.total + overlap.gold - shared
    else:
        raise JudgmentError(f"{kind!r} is not a span metric")
    return np.divide(shared, denominator, out=np.zeros(shared.shape), where=denominator > 0)


def _merge(
    starts: IntArray, ends: IntArray, owners: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Disjoint pieces covering the union of intervals on one line (sorted by start)."""
    order = np.argsort(starts, kind="stable")
    starts = starts[order]
    ends = ends[order]
    owners = owners[order]
    reach = np.empty_like(ends)
    if ends.size:
        reach[0] = starts[0]
        reach[1:] = np.maximum.accumulate(ends)[:-1]
    piece_starts = np.maximum(starts, reach)
    keep = ends > piece_starts
    return piece_starts[keep], ends[keep], owners[keep]


def _chars_before(starts: IntArray, ends: IntArray, points: IntArray) -> IntArray:
    """Characters of the disjoint sorted pieces ``[starts, ends)`` strictly before each point."""
    lengths = ends - starts
    if lengths.size == 0:
        return np.zeros(points.shape, dtype=np.int64)
    before = np.concatenate([[0], np.cumsum(lengths)])
    slot = np.searchsorted(starts, points, side="right") - 1
    safe = np.maximum(slot, 0)
    inside = np.clip(points - starts[safe], 0, lengths[safe])
    return np.where(slot >= 0, before[safe] + inside, 0)


def _best_rows(query: IntArray, quote: IntArray, score: npt.NDArray[Any]) -> IntArray:
    """Per ``(query, quote)``, the row of the highest ``score`` (the first among equals)."""
    rows = np.arange(len(query), dtype=np.int64)
    order = np.lexsort((rows, -score, quote, query))
    first = np.ones(len(order), dtype=np.bool_)
    first[1:] = (query[order][1:] != query[order][:-1]) | (quote[order][1:] != quote[order][:-1])
    return np.sort(order[first])


def overlap_totals(gold: GoldSpans, selected: Selection) -> Overlap:
    """Character totals of the selected spans against the gold, per query.

    ``S`` holds each quote once: its occurrence with the most characters in the selection's
    union (the first listed among equals), or the selection's ``gold_rows`` when given.

    Args:
        gold: The gold spans.
        selected: The selected spans (document codes in the gold's code space).

    Returns:
        The totals.

    Raises:
        JudgmentError: If the spans are too long to lay out on one line of int64 positions.
    """
    nq = gold.n_queries
    # Lay every (query, document) pair end to end on one line, so that unions and
    # intersections of intervals become plain 1-D interval arithmetic.
    keys = np.concatenate(
        [selected.query * gold.n_codes + selected.docs, gold.query * gold.n_codes + gold.docs]
    )
    _, group = np.unique(keys, return_inverse=True)
    limit = int(max(selected.ends.max(initial=0), gold.ends.max(initial=0))) + 1
    if len(keys) and (int(group.max()) + 1) * limit >= 2**62:
        raise JudgmentError("spans too long to compute span metrics")
    base = group.astype(np.int64).reshape(-1) * limit
    n_selected = len(selected.query)
    mine = _merge(
        selected.starts + base[:n_selected], selected.ends + base[:n_selected], selected.query
    )
    gold_starts = gold.starts + base[n_selected:]
    gold_ends = gold.ends + base[n_selected:]
    rows = selected.gold_rows
    if rows is None and gold.quote is not None and len(gold.query):
        # Each quote once: its occurrence with the most selected characters.
        covered = _chars_before(mine[0], mine[1], gold_ends) - _chars_before(
            mine[0], mine[1], gold_starts
        )
        rows = _best_rows(gold.query, gold.quote, covered)
    if rows is not None:
        gold_starts, gold_ends = gold_starts[rows], gold_ends[rows]
    theirs = _merge(gold_starts, gold_ends, gold.query if rows is None else gold.query[rows])
    gold_lengths = theirs[1] - theirs[0]
    shared = _chars_before(theirs[0], theirs[1], mine[1]) - _chars_before(
        theirs[0], theirs[1], mine[0]
    )
    return Overlap(
        shared=np.bincount(mine[2], weights=shared, minlength=nq).astype(np.float64),
        union=np.bincount(mine[2], weights=mine[1] - mine[0], minlength=nq).astype(np.float64),
        total=np.bincount(
            selected.query, weights=selected.ends - selected.starts, minlength=nq
        ).astype(np.float64),
        gold=np.bincount(theirs[2], weights=gold_lengths, minlength=nq).astype(np.float64),
    )


def omega_selection(gold: GoldSpans, docs: IntArray, starts: IntArray, ends: IntArray) -> Selection:
    """For each query, the chunks sharing at least one character with one of its gold spans.

    A chunk touching several gold spans of a query is selected once for it. With
    :attr:`GoldSpans.quote`, each quote is first given ONE occurrence: the one its own touching
    chunks fit best (the highest IoU of the occurrence with the union of the chunks touching
    it; the first listed among equals); only those occurrences select chunks, and they are
    the selection's ``gold_rows``.

    Args:
        gold: The gold spans.
        docs: Document code of each chunk, in the gold's code space.
        starts: Start of each chunk.
        ends: End (exclusive) of each chunk.

    Returns:
        The selected chunks, by query.
    """
    if gold.quote is None or not len(gold.query):
        return _touching(gold, docs, starts, ends)
    spans = np.arange(len(gold.query), dtype=np.int64)
    # Every span its own query: each occurrence's IoU with the chunks touching it.
    alone = GoldSpans(len(spans), gold.n_codes, spans, gold.docs, gold.starts, gold.ends)
    fit = span_value("precision_omega", overlap_totals(alone, _touching(alone, docs, starts, ends)))
    rows = _best_rows(gold.query, gold.quote, fit)
    chosen = GoldSpans(
        gold.n_queries, gold.n_codes, gold.query[rows], gold.docs[rows], gold.starts[rows],
        gold.ends[rows],
    )  # fmt: skip
    found = _touching(chosen, docs, starts, ends)
    return Selection(found.query, found.docs, found.starts, found.ends, gold_rows=rows)


def _touching(gold: GoldSpans, docs: IntArray, starts: IntArray, ends: IntArray) -> Selection:
    """The chunks sharing at least one character with a gold span, once per query."""
    lengths = ends - starts
    keep = np.flatnonzero((lengths > 0) & (docs < gold.n_codes))
    empty = np.zeros(0, dtype=np.int64)
    if keep.size == 0 or gold.query.size == 0:
        return Selection(empty, empty, empty, empty)
    limit = int(max(ends[keep].max(), gold.ends.max())) + 1
    if gold.n_codes * limit >= 2**62:
        raise JudgmentError("spans too long to compute span metrics")
    order = keep[np.lexsort((starts[keep], docs[keep]))]
    keys = docs[order] * limit + starts[order]
    longest = np.zeros(gold.n_codes, dtype=np.int64)
    np.maximum.at(longest, docs[order], lengths[order])
    # A chunk [a, b) shares a character with [s, e) iff a < e and b > s; since
    # b <= a + longest, its start lies within [s - longest + 1, e).
    lowest = np.maximum(gold.starts - longest[gold.docs] + 1, 0)
    first = np.searchsorted(keys, gold.docs * limit + lowest, side="left")
    stop = np.searchsorted(keys, gold.docs * limit + gold.ends, side="left")
    counts = np.maximum(stop - first, 0)
    span = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    rows = order[np.repeat(first, counts) + np.arange(int(counts.sum())) - offsets[span]]
    touching = np.minimum(ends[rows], gold.ends[span]) - np.maximum(starts[rows], gold.starts[span])
    pairs = np.unique(np.stack([gold.query[span], rows], axis=1)[touching >= 1], axis=0)
    pairs = pairs.reshape(-1, 2)
    chosen = pairs[:, 1]
    return Selection(pairs[:, 0].copy(), docs[chosen], starts[chosen], ends[chosen])
