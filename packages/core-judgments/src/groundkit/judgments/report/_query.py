"""A stage's result for one query as the report stores it: its hits and its evidence traces.

Apart from the report's other models so that the columns a report file stores them in
(:mod:`groundkit.judgments.report._columns`) can be built from them without the report itself.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EvidenceTrace", "FrozenModel", "QueryResult", "ReportHit"]


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
    hits: list[ReportHit] = Field(default_factory=list)
    evidence: list[EvidenceTrace] = Field(default_factory=list)
    missing: bool = False
    adjudicated_scores: dict[str, float] = Field(default_factory=dict)
