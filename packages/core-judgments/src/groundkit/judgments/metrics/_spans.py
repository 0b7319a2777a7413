"""Character-level span metrics: overlap totals per query and the one rule of each metric.

For one query, ``S`` is the union of its gold spans and a *selection* is a list of spans
``c_1, c_2, ...`` (the top-``k`` hits, or the chunks of ``precision_omega``), ``C`` their union,
all per document and counted in characters. :func:`overlap_totals` computes, per query,
``|C ∩ S|``, ``|C|``, the sum of the selected lengths ``Σ |c_i|`` (overlapping spans counted
as often as they are selected) and ``|S|``; :func:`span_value` turns them into a metric.
:func:`omega_selection` selects, for ``precision_omega``, the chunks sharing a character with
a gold span of the query.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    """

    n_queries: int
    n_codes: int
    query: IntArray
    docs: IntArray
    starts: IntArray
    ends: IntArray


@dataclass(frozen=True, eq=False)
class Selection:
    """Spans selected for each query (hits, or chunks): query number, document, start, end."""

    query: IntArray
    docs: IntArray
    starts: IntArray
    ends: IntArray


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


def overlap_totals(gold: GoldSpans, selected: Selection) -> Overlap:
    """Character totals of the selected spans against the gold, per query.

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
    theirs = _merge(gold.starts + base[n_selected:], gold.ends + base[n_selected:], gold.query)
    gold_lengths = theirs[1] - theirs[0]
    covered_before = np.concatenate([[0], np.cumsum(gold_lengths)])

    def covered(points: IntArray) -> IntArray:
        # Gold characters strictly before each point.
        if gold_lengths.size == 0:
            return np.zeros(points.shape, dtype=np.int64)
        slot = np.searchsorted(theirs[0], points, side="right") - 1
        safe = np.maximum(slot, 0)
        inside = np.clip(points - theirs[0][safe], 0, gold_lengths[safe])
        return np.where(slot >= 0, covered_before[safe] + inside, 0)

    shared = covered(mine[1]) - covered(mine[0])
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

    A chunk touching several gold spans of a query is selected once for it.

    Args:
        gold: The gold spans.
        docs: Document code of each chunk, in the gold's code space.
        starts: Start of each chunk.
        ends: End (exclusive) of each chunk.

    Returns:
        The selected chunks, by query.
    """
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
