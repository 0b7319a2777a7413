"""A stage's hits and per-query scores stored as columns in the report file (schema 2.0).

One object per hit (``{"doc": ..., "start": ..., "end": ..., "score": ...}``) made nine
tenths of a report: the demo's was 20 MB. From 2.0 a stage writes its hits once as columns —
each distinct chunk once (document, start, end), then per hit the chunk's index and its score
as little-endian arrays in base64, with the rare ``duplicate_of`` and adjudicated grades as
(hit, value) pairs — and its per-query scores as one list of metric names and one row of
values per query. Nothing is rounded: a score is kept as float32 only when every score of the
stage is exactly a float32 (BM25 and dense scores are), and widening it gives back the same
float64. Reading expands the columns into the same :class:`ReportHit` lists and score dicts
as before, so every consumer sees what it saw in a 1.3 report; older reports, with hits and
scores inside each query, are read as they are.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from groundkit.judgments.report._query import QueryResult, hit_fields

__all__ = ["HitColumns", "PackedArray", "ScoreColumns", "expand_columns", "stage_columns"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

Dtype = Literal["<u2", "<u4", "<f4", "<f8"]


class PackedArray(BaseModel):
    """A numeric array as little-endian bytes in base64 (``dtype`` as numpy spells it).

    Attributes:
        dtype: ``<u2``/``<u4`` (unsigned 16/32-bit integers) or ``<f4``/``<f8`` (floats).
        data: The array's bytes, base64 (RFC 4648, with padding).
    """

    model_config = _FROZEN

    dtype: Dtype
    data: str

    @classmethod
    def pack(cls, values: np.ndarray[Any, Any], dtype: Dtype) -> PackedArray:
        """Pack ``values`` as ``dtype`` (the caller has checked that nothing is lost)."""
        raw = np.ascontiguousarray(values, dtype=np.dtype(dtype)).tobytes()
        return cls(dtype=dtype, data=base64.b64encode(raw).decode("ascii"))

    def unpack(self) -> np.ndarray[Any, Any]:
        """The array, widened to int64 or float64."""
        try:
            raw = base64.b64decode(self.data.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise ValueError("hit_columns: packed data is not base64") from None
        if len(raw) % np.dtype(self.dtype).itemsize:
            raise ValueError(f"hit_columns: packed data is not a whole number of {self.dtype}")
        found = np.frombuffer(raw, dtype=np.dtype(self.dtype))
        return found.astype(np.float64 if self.dtype.startswith("<f") else np.int64)


class HitColumns(BaseModel):
    """Every hit of a stage, query after query in the order of ``queries`` (schema 2.0).

    Attributes:
        docs: The documents the hits come from, each once.
        chunk_doc: Per distinct chunk, its document (index into ``docs``).
        chunk_start: Per distinct chunk, its start offset.
        chunk_end: Per distinct chunk, its end offset (exclusive).
        counts: Number of hits of each query, in the order of the stage's ``queries``.
        chunk: Per hit, its chunk (index into the chunk lists).
        score: Per hit, the retriever's score.
        duplicate_of: ``(hit, rank)`` for each hit with a ``duplicate_of`` (hit: position in
            the flat hit order).
        adjudicated_grade: ``(hit, grade)`` for each hit with an adjudicated grade.
    """

    model_config = _FROZEN

    docs: list[str]
    chunk_doc: list[int]
    chunk_start: list[int]
    chunk_end: list[int]
    counts: list[int]
    chunk: PackedArray
    score: PackedArray
    duplicate_of: list[tuple[int, int]] = Field(default_factory=list)
    adjudicated_grade: list[tuple[int, int]] = Field(default_factory=list)


class ScoreColumns(BaseModel):
    """Every query's scores of a stage: the metric names once, one row per query (schema 2.0).

    Attributes:
        metrics: Metric names, in the order each query's scores had them.
        values: Per query (in the order of ``queries``), the value of each metric.
    """

    model_config = _FROZEN

    metrics: list[str]
    values: list[list[float]]


def _is_float32(values: np.ndarray[Any, Any]) -> bool:
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = values.astype(np.float32)
    return bool(np.array_equal(narrow.astype(np.float64), values, equal_nan=True))


def _hit_columns(queries: Sequence[QueryResult]) -> HitColumns:
    docs: dict[str, int] = {}
    chunks: dict[tuple[int, int, int], int] = {}
    chunk_of: list[int] = []
    scores: list[float] = []
    duplicates: list[tuple[int, int]] = []
    grades: list[tuple[int, int]] = []
    for result in queries:
        fields = hit_fields(result.hits)  # plain lists: no hit object made
        first = len(scores)
        for doc_id, start, end in zip(fields.docs, fields.starts, fields.ends, strict=True):
            doc = docs.setdefault(doc_id, len(docs))
            chunk_of.append(chunks.setdefault((doc, start, end), len(chunks)))
        scores.extend(fields.scores)
        for pairs, column in (
            (duplicates, fields.duplicate_of),
            (grades, fields.adjudicated_grades),
        ):
            pairs.extend((first + i, v) for i, v in enumerate(column) if v is not None)
    values = np.asarray(scores, dtype=np.float64)
    return HitColumns(
        docs=list(docs),
        chunk_doc=[c[0] for c in chunks],
        chunk_start=[c[1] for c in chunks],
        chunk_end=[c[2] for c in chunks],
        counts=[len(result.hits) for result in queries],
        chunk=PackedArray.pack(np.asarray(chunk_of), "<u2" if len(chunks) < 2**16 else "<u4"),
        score=PackedArray.pack(values, "<f4" if _is_float32(values) else "<f8"),
        duplicate_of=duplicates,
        adjudicated_grade=grades,
    )


def stage_columns(
    queries: Sequence[QueryResult],
) -> tuple[HitColumns | None, ScoreColumns | None]:
    """The columns a stage's queries are written as (``None``: that part stays per query).

    Scores are columns only when every query has the same metrics in the same order.
    """
    if not queries:
        return None, None
    metrics = list(queries[0].scores)
    same = all(list(result.scores) == metrics for result in queries)
    scores = (
        ScoreColumns(metrics=metrics, values=[list(r.scores.values()) for r in queries])
        if same
        else None
    )
    return _hit_columns(queries), scores


def _hits_of(columns: HitColumns, queries: int) -> list[list[dict[str, Any]]]:
    if len(columns.counts) != queries:
        raise ValueError(
            f"hit_columns.counts has {len(columns.counts)} entries for {queries} queries"
        )
    chunk, score = columns.chunk.unpack(), columns.score.unpack().tolist()
    if not len(chunk) == len(score) == sum(columns.counts):
        raise ValueError("hit_columns: chunk, score and counts disagree on the number of hits")
    lengths = {len(columns.chunk_doc), len(columns.chunk_start), len(columns.chunk_end)}
    if len(lengths) != 1 or (len(chunk) and int(chunk.max()) >= lengths.pop()):
        raise ValueError("hit_columns: a hit names a chunk that is not in the chunk lists")
    if columns.chunk_doc and max(columns.chunk_doc) >= len(columns.docs):
        raise ValueError("hit_columns: a chunk names a document that is not in docs")
    extra: dict[int, dict[str, int]] = {}
    for field, pairs in (
        ("duplicate_of", columns.duplicate_of),
        ("adjudicated_grade", columns.adjudicated_grade),
    ):
        for position, value in pairs:
            extra.setdefault(position, {})[field] = value
    flat = [
        {
            "doc": columns.docs[columns.chunk_doc[c]],
            "start": columns.chunk_start[c],
            "end": columns.chunk_end[c],
            "score": s,
            **extra.get(position, {}),
        }
        for position, (c, s) in enumerate(zip(chunk.tolist(), score, strict=True))
    ]
    out, at = [], 0
    for count in columns.counts:
        out.append(flat[at : at + count])
        at += count
    return out


def expand_columns(data: dict[str, Any]) -> dict[str, Any]:
    """A stage's decoded JSON with its columns put back into each query (for validation).

    Raises:
        ValueError: Columns that do not fit the stage's queries.
    """
    hits, scores = data.get("hit_columns"), data.get("score_columns")
    if hits is None and scores is None:
        return data
    queries = [dict(q) if isinstance(q, dict) else q for q in data.get("queries", [])]
    if hits is not None:
        columns = hits if isinstance(hits, HitColumns) else HitColumns.model_validate(hits)
        for query, found in zip(queries, _hits_of(columns, len(queries)), strict=True):
            if isinstance(query, dict):
                query["hits"] = found
    if scores is not None:
        table = scores if isinstance(scores, ScoreColumns) else ScoreColumns.model_validate(scores)
        if len(table.values) != len(queries):
            raise ValueError(
                f"score_columns has {len(table.values)} rows for {len(queries)} queries"
            )
        for query, row in zip(queries, table.values, strict=True):
            if len(row) != len(table.metrics):
                raise ValueError("score_columns: a row does not have one value per metric")
            if isinstance(query, dict):
                query["scores"] = dict(zip(table.metrics, row, strict=True))
    return {**data, "queries": queries, "hit_columns": None, "score_columns": None}
