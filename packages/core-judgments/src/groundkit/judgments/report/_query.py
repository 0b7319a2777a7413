"""A stage's result for one query as the report stores it: its hits and its evidence traces.

Apart from the report's other models so that the columns a report file stores them in
(:mod:`groundkit.judgments.report._columns`) can be built from them without the report itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Annotated, Any, NamedTuple, overload

import numpy as np
import numpy.typing as npt
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)

__all__ = [
    "EvidenceTrace",
    "FrozenModel",
    "HitFields",
    "HitList",
    "QueryResult",
    "ReportHit",
    "hit_fields",
]


class FrozenModel(BaseModel):
    """The base of every report model: frozen, and unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ReportHit(FrozenModel):
    """One retrieved hit; its rank is its position in the list (1-based).

    Attributes:
        doc: Document id.
        start: Start offset of the chunk in the document.
        end: End offset (exclusive).
        score: The retriever's score.
        duplicate_of: Rank of an earlier hit in the same list with the same or nearly the same
            text, when there is one.
        adjudicated_grade: The relevance judge's majority grade (0–3) of a hit that touches no
            gold, when ``grk eval adjudicate`` judged it (schema 1.3).
    """

    doc: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    score: float
    duplicate_of: int | None = None
    adjudicated_grade: int | None = Field(default=None, ge=0, le=3)


class EvidenceTrace(FrozenModel):
    """What a stage did with one gold quote of one query (what diagnosis reads).

    ``None`` always means *not measurable for this stage*, never zero or false.

    Attributes:
        gold_index: Index of the quote in the query's ``gold`` list.
        first_rank: Rank of the first recorded hit touching the quote, or ``None`` when no hit
            within the recorded depth touches it.
        doc_indexed: Whether any chunk of the stage comes from the quote's document.
        best_chunk_share: Largest share of the quote's span held by one chunk of the stage.
        best_chunk_rank: Rank at which that chunk was retrieved (``None``: not retrieved).
        tokens_before_quote: Encoder tokens before the quote starts inside that chunk (dense).
        shares_query_term: Whether that chunk shares a content term with the query (lexical).
    """

    gold_index: int = Field(ge=0)
    first_rank: int | None = Field(default=None, ge=1)
    doc_indexed: bool | None = None
    best_chunk_share: float | None = Field(default=None, ge=0.0, le=1.0)
    best_chunk_rank: int | None = Field(default=None, ge=1)
    tokens_before_quote: int | None = Field(default=None, ge=0)
    shares_query_term: bool | None = None


class HitFields(NamedTuple):
    """The fields of a list of hits, one plain list each (what a loop over hits reads)."""

    docs: list[str]
    starts: list[int]
    ends: list[int]
    scores: list[float]
    duplicate_of: list[int | None]
    adjudicated_grades: list[int | None]


class HitList(Sequence[ReportHit]):
    """A query's ranked hits held as columns: a sequence of :class:`ReportHit`, compactly.

    A :class:`ReportHit` object takes about 660 bytes; a run of 10,000 queries x 100 hits held
    them as 660 MB. Here the documents are indices into a list of ids (shared by every list
    of a stage), the offsets and scores numpy arrays, and the rare ``duplicate_of`` and
    adjudicated grades sparse. Reading it gives :class:`ReportHit` objects equal to the ones
    it was made from; it is equal to any sequence of equal hits; it is immutable.

    Args:
        names: Document ids (shared, not copied).
        doc: Per hit, the index of its document in ``names``.
        start: Per hit, the start offset (>= 0).
        end: Per hit, the end offset (>= 0).
        score: Per hit, the score.
        duplicate_of: ``{position: rank}`` of the hits with a ``duplicate_of`` (0-based).
        adjudicated_grades: ``{position: grade}`` of the hits with an adjudicated grade (0-3).

    Raises:
        ValueError: The columns differ in length, or a value is outside what a hit allows.
    """

    __slots__ = ("_doc", "_duplicate_of", "_end", "_grades", "_names", "_score", "_start")

    def __init__(
        self,
        names: Sequence[str],
        doc: npt.ArrayLike,
        start: npt.ArrayLike,
        end: npt.ArrayLike,
        score: npt.ArrayLike,
        duplicate_of: Mapping[int, int] | None = None,
        adjudicated_grades: Mapping[int, int] | None = None,
    ) -> None:
        self._names = names
        # Views: made read-only below without touching the caller's arrays.
        self._doc = np.asarray(doc, dtype=np.int64).view()
        self._start = np.asarray(start, dtype=np.int64).view()
        self._end = np.asarray(end, dtype=np.int64).view()
        self._score = np.asarray(score, dtype=np.float64).view()
        self._duplicate_of = dict(duplicate_of or {})
        self._grades = dict(adjudicated_grades or {})
        self._check()
        for column in (self._doc, self._start, self._end, self._score):
            column.flags.writeable = False

    def _check(self) -> None:
        size = self._doc.size
        columns = (self._doc, self._start, self._end, self._score)
        if any(c.ndim != 1 or c.size != size for c in columns):
            raise ValueError("hits: the columns differ in length")
        if size and (int(self._doc.min()) < 0 or int(self._doc.max()) >= len(self._names)):
            raise ValueError("hits: a hit names a document that is not in the list")
        for name, column in (("start", self._start), ("end", self._end)):
            negative = np.flatnonzero(column < 0)
            if negative.size:
                raise ValueError(f"hit {int(negative[0]) + 1}: {name} must be >= 0")
        for position, grade in self._grades.items():
            if not 0 <= grade <= 3:
                raise ValueError(f"hit {position + 1}: adjudicated_grade must be 0-3")
        for position in (*self._duplicate_of, *self._grades):
            if not 0 <= position < size:
                raise ValueError(f"hits: no hit at position {position}")

    @classmethod
    def empty(cls) -> HitList:
        """No hits."""
        return cls((), (), (), (), ())

    @classmethod
    def from_hits(cls, hits: Iterable[ReportHit]) -> HitList:
        """The hits of a list of :class:`ReportHit` objects (validated already)."""
        fields = hit_fields(list(hits))
        names: dict[str, int] = {}
        doc = [names.setdefault(name, len(names)) for name in fields.docs]
        return cls(
            list(names),
            doc,
            fields.starts,
            fields.ends,
            fields.scores,
            _sparse(fields.duplicate_of),
            _sparse(fields.adjudicated_grades),
        )

    def fields(self) -> HitFields:
        """Every field of every hit, one plain list each."""
        size = len(self)
        return HitFields(
            [self._names[i] for i in self._doc.tolist()],
            self._start.tolist(),
            self._end.tolist(),
            self._score.tolist(),
            _dense(self._duplicate_of, size),
            _dense(self._grades, size),
        )

    def __len__(self) -> int:
        return int(self._doc.size)

    @overload
    def __getitem__(self, index: int) -> ReportHit: ...

    @overload
    def __getitem__(self, index: slice) -> HitList: ...

    def __getitem__(self, index: int | slice) -> ReportHit | HitList:
        if isinstance(index, slice):
            kept = np.arange(len(self), dtype=np.int64)[index].tolist()
            where = {position: i for i, position in enumerate(kept)}
            return HitList(
                self._names,
                self._doc[index],
                self._start[index],
                self._end[index],
                self._score[index],
                {where[p]: rank for p, rank in self._duplicate_of.items() if p in where},
                {where[p]: grade for p, grade in self._grades.items() if p in where},
            )
        position = range(len(self))[index]  # IndexError as a list's
        return _hit(
            self._names[int(self._doc[position])],
            int(self._start[position]),
            int(self._end[position]),
            float(self._score[position]),
            self._duplicate_of.get(position),
            self._grades.get(position),
        )

    def __iter__(self) -> Iterator[ReportHit]:
        for values in zip(*self.fields(), strict=True):
            yield _hit(*values)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        if len(other) != len(self):
            return False
        try:
            theirs = other.fields() if isinstance(other, HitList) else hit_fields(list(other))
        except AttributeError:  # not hits
            return False
        return self.fields() == theirs

    def __hash__(self) -> int:
        return hash(tuple(tuple(column) for column in self.fields()))

    def __repr__(self) -> str:
        return f"HitList({list(self)!r})"

    def __reduce__(self) -> tuple[Callable[..., HitList], tuple[Any, ...]]:
        # Only the documents the hits name travel (the shared list may hold a whole corpus).
        used, doc = np.unique(self._doc, return_inverse=True)
        names = [self._names[i] for i in used.tolist()]
        return HitList, (
            names,
            doc,
            self._start,
            self._end,
            self._score,
            self._duplicate_of,
            self._grades,
        )

    def __copy__(self) -> HitList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> HitList:
        return self


def _sparse(column: Sequence[int | None]) -> dict[int, int]:
    return {position: value for position, value in enumerate(column) if value is not None}


def _dense(values: Mapping[int, int], size: int) -> list[int | None]:
    column: list[int | None] = [None] * size
    for position, value in values.items():
        column[position] = value
    return column


def _hit(
    doc: str, start: int, end: int, score: float, duplicate: int | None, grade: int | None
) -> ReportHit:
    # Validated from the same keys as a hit given as a dict: the same object, fields set alike.
    data: dict[str, Any] = {"doc": doc, "start": start, "end": end, "score": score}
    if duplicate is not None:
        data["duplicate_of"] = duplicate
    if grade is not None:
        data["adjudicated_grade"] = grade
    return ReportHit.model_validate(data)


def hit_fields(hits: Sequence[ReportHit]) -> HitFields:
    """Every field of ``hits`` (a :class:`HitList`, or any sequence of hits), one list each."""
    if isinstance(hits, HitList):
        return hits.fields()
    return HitFields(
        [h.doc for h in hits],
        [h.start for h in hits],
        [h.end for h in hits],
        [h.score for h in hits],
        [h.duplicate_of for h in hits],
        [h.adjudicated_grade for h in hits],
    )


def _keep_hit_list(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    # A HitList is kept as it is (it checked its columns when it was made); anything else is
    # validated as a sequence of ReportHit (the same errors, the same JSON schema), then packed.
    return value if isinstance(value, HitList) else handler(value)


_Hits = Annotated[
    Sequence[ReportHit],
    AfterValidator(HitList.from_hits),
    WrapValidator(_keep_hit_list),
    PlainSerializer(list, return_type=list[ReportHit]),  # written as the list of hits
]


class QueryResult(FrozenModel):
    """One stage's result for one answerable query.

    Attributes:
        query_id: The query id.
        scores: Metric name to value (in a 2.0 file: in the stage's ``score_columns``).
        hits: The top hits in rank order (in a 2.0 file: in the stage's ``hit_columns``).
        evidence: One trace per gold quote.
        missing: True when the retriever returned nothing for the query (scored zero, kept in
            the mean).
        adjudicated_scores: The same metrics with judged-relevant hits counted as gold, when
            the report was adjudicated (schema 1.3).
    """

    query_id: str
    scores: dict[str, float] = Field(default_factory=dict)
    # Given as any list of hits (objects or dicts), held as a HitList (see there).
    hits: _Hits = Field(default_factory=HitList.empty)
    evidence: list[EvidenceTrace] = Field(default_factory=list)
    missing: bool = False
    adjudicated_scores: dict[str, float] = Field(default_factory=dict)
