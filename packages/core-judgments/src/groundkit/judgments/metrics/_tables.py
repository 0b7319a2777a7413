"""Inputs of the chunk-level metrics: gold items and ranked hits, as objects or columnar tables.

The scoring code works on flat numpy arrays (CSR layout: per-query offsets into flat columns,
document ids encoded as integers). :class:`GoldTable` and :class:`HitTable` are that layout;
they can be built from Python objects (``from_items`` / ``from_hits``) or, for large runs, from
arrays directly without any per-hit Python work.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, field_validator

from groundkit.judgments._errors import JudgmentError

__all__ = [
    "ChunkSpans",
    "GoldItem",
    "GoldTable",
    "HitTable",
    "gold_items_from_resolved",
    "split_occurrences",
]

IntArray = npt.NDArray[np.int64]


class _HasGrade(Protocol):
    grade: int


class _ResolvedQuoteLike(Protocol):
    @property
    def gold(self) -> _HasGrade: ...
    @property
    def spans(self) -> Sequence[Any]: ...


class _JudgmentLike(Protocol):
    @property
    def query_id(self) -> str: ...


class _ResolvedJudgmentLike(Protocol):
    @property
    def judgment(self) -> _JudgmentLike: ...
    @property
    def quotes(self) -> Sequence[_ResolvedQuoteLike]: ...


class GoldItem(BaseModel):
    """One gold quote of a query, reduced to what the metrics need.

    Attributes:
        grade: The relevance grade (``>= 1``); the gain of nDCG.
        spans: Every place the quote occurs, as ``(doc, start, end)`` character spans (end
            exclusive). Touching any of them credits the quote (once); the span metrics count
            the quote once too, at its best-covered occurrence (report schema 2.3). Empty when
            the quote could not be resolved: it can then never be credited but still counts in
            denominators.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    grade: int = Field(default=1, ge=1, strict=True)
    spans: tuple[tuple[str, int, int], ...] = ()

    @field_validator("spans")
    @classmethod
    def _check_spans(
        cls, value: tuple[tuple[str, int, int], ...]
    ) -> tuple[tuple[str, int, int], ...]:
        for doc, start, end in value:
            if not doc:
                raise ValueError("a span needs a non-empty document id")
            if start < 0 or end < start:
                raise ValueError(f"invalid span [{start}, {end}) of {doc!r}")
        return value


def _span_parts(span: Any) -> tuple[str, int, int]:
    if isinstance(span, tuple):
        doc, start, end = span
    else:
        doc, start, end = span.doc, span.start, span.end
    return doc, start, end


def _grade_and_spans(item: Any) -> tuple[Any, Any]:
    grade = getattr(item, "grade", None)
    if grade is None:
        grade = getattr(getattr(item, "gold", None), "grade", None)
    return grade, getattr(item, "spans", None)


def gold_items_from_resolved(
    resolved: Iterable[_ResolvedJudgmentLike],
) -> dict[str, tuple[GoldItem, ...]]:
    """Gold items by query id from resolved judgments, leaving out unanswerable queries.

    Args:
        resolved: Resolved judgments (``ResolvedJudgment``: ``.judgment.query_id`` and
            ``.quotes``, each with ``.gold.grade`` and ``.spans`` of ``Span(doc, start, end)``).

    Returns:
        ``{query_id: (GoldItem, ...)}`` in input order, for the queries that have gold quotes.
    """
    out: dict[str, tuple[GoldItem, ...]] = {}
    for judgment in resolved:
        if not judgment.quotes:
            continue
        out[judgment.judgment.query_id] = tuple(
            GoldItem(
                grade=quote.gold.grade,
                spans=tuple(_span_parts(span) for span in quote.spans),
            )
            for quote in judgment.quotes
        )
    return out


def split_occurrences(
    gold_by_query: Mapping[str, Sequence[Any]],
) -> dict[str, tuple[GoldItem, ...]]:
    """Each occurrence of every quote as a quote of its own: the span rule before schema 2.3.

    Scored with this gold, the span metrics count every occurrence of a repeated quote as gold
    characters, as reports of schema 2.2 and older recorded them (``RunInfo.span_gold`` is
    ``every-occurrence``); use it for those metrics only (it changes every rank metric).

    Args:
        gold_by_query: Gold items by query id, as :meth:`GoldTable.from_items` takes them.

    Returns:
        ``{query_id: items}``: one item per span, with its quote's grade (an unresolved quote
        stays one item without spans).
    """
    out: dict[str, tuple[GoldItem, ...]] = {}
    for query_id, items in gold_by_query.items():
        split: list[GoldItem] = []
        for item in items:
            grade, spans = _grade_and_spans(item)
            parts = [_span_parts(span) for span in spans or ()]
            split.extend(GoldItem(grade=grade, spans=(part,)) for part in parts)
            if not parts:
                split.append(GoldItem(grade=grade))
        out[query_id] = tuple(split)
    return out


def _as_int_array(values: Any, what: str) -> IntArray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise JudgmentError(f"{what} must be a one-dimensional array")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise JudgmentError(f"{what} must hold integers, got dtype {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.int64)


def _check_offsets(offsets: IntArray, n_rows: int, length: int, what: str) -> None:
    if offsets.shape != (n_rows + 1,):
        raise JudgmentError(f"{what} must have {n_rows + 1} entries, got {offsets.shape[0]}")
    if offsets[0] != 0 or offsets[-1] != length:
        raise JudgmentError(f"{what} must start at 0 and end at {length}")
    if n_rows and bool(np.any(np.diff(offsets) < 0)):
        raise JudgmentError(f"{what} must be non-decreasing")


def _check_intervals(
    docs: IntArray, starts: IntArray, ends: IntArray, n_docs: int, what: str
) -> None:
    if not (docs.shape == starts.shape == ends.shape):
        raise JudgmentError(f"{what}: doc, start and end columns differ in length")
    if docs.size == 0:
        return
    if int(docs.min()) < 0 or int(docs.max()) >= n_docs:
        raise JudgmentError(f"{what}: document codes must index doc_ids (0..{n_docs - 1})")
    if int(starts.min()) < 0:
        raise JudgmentError(f"{what}: a start is negative")
    bad = np.flatnonzero(ends < starts)
    if bad.size:
        raise JudgmentError(f"{what}: end before start at row {int(bad[0])}")


def _check_query_ids(query_ids: tuple[str, ...], what: str) -> None:
    if len(set(query_ids)) != len(query_ids):
        seen: set[str] = set()
        for query_id in query_ids:
            if query_id in seen:
                raise JudgmentError(f"{what}: query listed twice", item_id=query_id)
            seen.add(query_id)


@dataclass(frozen=True, eq=False)
class GoldTable:
    """Gold quotes of many queries in columnar form.

    Quotes of query ``i`` are rows ``quote_offsets[i]:quote_offsets[i + 1]`` of ``grades``;
    spans of quote ``j`` are rows ``span_offsets[j]:span_offsets[j + 1]`` of the span columns.
    ``span_docs`` are indices into ``doc_ids``. Every query has at least one quote.

    Attributes:
        query_ids: Query ids, in output order (unique).
        quote_offsets: ``len(query_ids) + 1`` offsets into ``grades``.
        grades: Grade of each quote (``>= 1``).
        span_offsets: ``len(grades) + 1`` offsets into the span columns.
        span_docs: Document code of each span.
        span_starts: Start of each span.
        span_ends: End (exclusive) of each span.
        doc_ids: The document vocabulary.
    """

    query_ids: tuple[str, ...]
    quote_offsets: IntArray
    grades: IntArray
    span_offsets: IntArray
    span_docs: IntArray
    span_starts: IntArray
    span_ends: IntArray
    doc_ids: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in (
            "quote_offsets",
            "grades",
            "span_offsets",
            "span_docs",
            "span_starts",
            "span_ends",
        ):
            object.__setattr__(self, name, _as_int_array(getattr(self, name), name))
        object.__setattr__(self, "query_ids", tuple(self.query_ids))
        object.__setattr__(self, "doc_ids", tuple(self.doc_ids))
        _check_query_ids(self.query_ids, "gold")
        _check_offsets(self.quote_offsets, len(self.query_ids), len(self.grades), "quote_offsets")
        _check_offsets(self.span_offsets, len(self.grades), len(self.span_docs), "span_offsets")
        empty = np.flatnonzero(np.diff(self.quote_offsets) == 0)
        if empty.size:
            raise JudgmentError(
                "query has no gold quotes; leave unanswerable queries out of chunk-level scoring",
                item_id=self.query_ids[int(empty[0])],
            )
        if self.grades.size and int(self.grades.min()) < 1:
            raise JudgmentError("gold grades must be >= 1")
        _check_intervals(
            self.span_docs, self.span_starts, self.span_ends, len(self.doc_ids), "gold spans"
        )

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return len(self.query_ids)

    @classmethod
    def from_items(cls, gold_by_query: Mapping[str, Sequence[Any]]) -> GoldTable:
        """Build the table from gold items by query id.

        Args:
            gold_by_query: ``{query_id: items}``; an item is a :class:`GoldItem` or any object
                with ``grade`` (or ``gold.grade``, like ``ResolvedQuote``) and ``spans`` (tuples
                ``(doc, start, end)`` or objects with ``doc``, ``start``, ``end``).

        Returns:
            The columnar table.

        Raises:
            JudgmentError: On a query without items, a grade below 1 or an invalid span
                (the message names the query).
        """
        query_ids: list[str] = []
        quote_counts: list[int] = []
        grades: list[int] = []
        span_counts: list[int] = []
        docs: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        for query_id, items in gold_by_query.items():
            query_ids.append(query_id)
            quote_counts.append(len(items))
            if not items:
                raise JudgmentError(
                    "query has no gold quotes; leave unanswerable queries out of "
                    "chunk-level scoring",
                    item_id=query_id,
                )
            for item in items:
                grade, spans = _grade_and_spans(item)
                if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
                    raise JudgmentError(
                        f"gold grade must be an integer >= 1, got {grade!r}", item_id=query_id
                    )
                if spans is None:
                    raise JudgmentError("gold item has no 'spans'", item_id=query_id)
                grades.append(grade)
                n_spans = 0
                for span in spans:
                    doc, start, end = _span_parts(span)
                    if not isinstance(doc, str) or not doc:
                        raise JudgmentError(f"invalid span document {doc!r}", item_id=query_id)
                    if not (isinstance(start, int) and isinstance(end, int)) or not (
                        0 <= start <= end
                    ):
                        raise JudgmentError(
                            f"invalid span [{start}, {end}) of {doc!r}", item_id=query_id
                        )
                    docs.append(doc)
                    starts.append(start)
                    ends.append(end)
                    n_spans += 1
                span_counts.append(n_spans)
        doc_ids, codes = _encode(docs)
        return cls(
            query_ids=tuple(query_ids),
            quote_offsets=_offsets(quote_counts),
            grades=np.asarray(grades, dtype=np.int64),
            span_offsets=_offsets(span_counts),
            span_docs=codes,
            span_starts=np.asarray(starts, dtype=np.int64),
            span_ends=np.asarray(ends, dtype=np.int64),
            doc_ids=doc_ids,
        )


@dataclass(frozen=True, eq=False)
class HitTable:
    """Ranked hits of many queries in columnar form.

    Hits of query ``i`` are rows ``offsets[i]:offsets[i + 1]``, best first. ``docs`` are
    indices into ``doc_ids``. Sharing ``doc_ids`` (the same tuple object) with the
    :class:`GoldTable` skips re-encoding document ids.

    Attributes:
        query_ids: Query ids (unique).
        offsets: ``len(query_ids) + 1`` offsets into the hit columns.
        docs: Document code of each hit.
        starts: Start of each hit.
        ends: End (exclusive) of each hit.
        doc_ids: The document vocabulary.
    """

    query_ids: tuple[str, ...]
    offsets: IntArray
    docs: IntArray
    starts: IntArray
    ends: IntArray
    doc_ids: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in ("offsets", "docs", "starts", "ends"):
            object.__setattr__(self, name, _as_int_array(getattr(self, name), name))
        object.__setattr__(self, "query_ids", tuple(self.query_ids))
        object.__setattr__(self, "doc_ids", tuple(self.doc_ids))
        _check_query_ids(self.query_ids, "hits")
        _check_offsets(self.offsets, len(self.query_ids), len(self.docs), "offsets")
        _check_intervals(self.docs, self.starts, self.ends, len(self.doc_ids), "hits")

    @classmethod
    def from_hits(cls, hits_by_query: Mapping[str, Sequence[Any]]) -> HitTable:
        """Build the table from ranked hits by query id.

        Args:
            hits_by_query: ``{query_id: hits}``, best first; a hit is a :class:`Hit` or any
                object with ``doc``, ``start`` and ``end`` (a chunk, a ``Span``).

        Returns:
            The columnar table.

        Raises:
            JudgmentError: On an invalid hit span (the message names the query).
        """
        query_ids: list[str] = []
        counts: list[int] = []
        docs: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        for query_id, hits in hits_by_query.items():
            query_ids.append(query_id)
            counts.append(len(hits))
            docs.extend(hit.doc for hit in hits)
            starts.extend(hit.start for hit in hits)
            ends.extend(hit.end for hit in hits)
        doc_ids, codes = _encode(docs)
        start_array = np.asarray(starts, dtype=np.int64)
        end_array = np.asarray(ends, dtype=np.int64)
        bad = np.flatnonzero((start_array < 0) | (end_array < start_array))
        if bad.size:
            offsets = _offsets(counts)
            row = int(bad[0])
            query = int(np.searchsorted(offsets, row, side="right")) - 1
            raise JudgmentError(
                f"hit at rank {row - int(offsets[query]) + 1} has an invalid span "
                f"[{starts[row]}, {ends[row]}) of {docs[row]!r}",
                item_id=query_ids[query],
            )
        return cls(
            query_ids=tuple(query_ids),
            offsets=_offsets(counts),
            docs=codes,
            starts=start_array,
            ends=end_array,
            doc_ids=doc_ids,
        )


@dataclass(frozen=True, eq=False)
class ChunkSpans:
    """Every chunk a stage indexed, in columnar form: what ``precision_omega`` reads.

    Row ``i`` is one chunk; ``docs`` are indices into ``doc_ids``. Sharing ``doc_ids`` (the
    same tuple object) with the :class:`GoldTable` skips re-encoding document ids.

    Attributes:
        docs: Document code of each chunk.
        starts: Start of each chunk.
        ends: End (exclusive) of each chunk.
        doc_ids: The document vocabulary.
    """

    docs: IntArray
    starts: IntArray
    ends: IntArray
    doc_ids: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in ("docs", "starts", "ends"):
            object.__setattr__(self, name, _as_int_array(getattr(self, name), name))
        object.__setattr__(self, "doc_ids", tuple(self.doc_ids))
        _check_intervals(self.docs, self.starts, self.ends, len(self.doc_ids), "chunks")

    @classmethod
    def from_chunks(cls, chunks: Sequence[Any]) -> ChunkSpans:
        """Build the table from chunk objects (anything with ``doc``, ``start`` and ``end``).

        Raises:
            JudgmentError: On an invalid chunk span.
        """
        doc_ids, codes = _encode([chunk.doc for chunk in chunks])
        return cls(
            docs=codes,
            starts=np.fromiter((c.start for c in chunks), np.int64, len(chunks)),
            ends=np.fromiter((c.end for c in chunks), np.int64, len(chunks)),
            doc_ids=doc_ids,
        )


def _offsets(counts: Sequence[int]) -> IntArray:
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(counts, dtype=np.int64), out=offsets[1:])
    return offsets


def _encode(values: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    codes_by_value: dict[str, int] = {}
    codes = np.fromiter(
        (codes_by_value.setdefault(value, len(codes_by_value)) for value in values),
        dtype=np.int64,
        count=len(values),
    )
    return tuple(codes_by_value), codes
