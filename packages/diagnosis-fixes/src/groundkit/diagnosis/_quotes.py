"""Per-quote facts of a stage: where each gold quote was first touched and what it weighs.

A hit *touches* a quote by exactly the rule of the metrics (``groundkit.judgments.metrics.overlaps``
with the report's ``min_overlap_fraction``); at document level, by coming from the quote's
document. A quote is *found* at k when its first touching hit ranks ``<= k``. A quote of a
query with ``G`` quotes, in a set of ``N`` answerable queries, weighs ``1 / (G * N)`` of the
stage's mean recall@k: that is what finding it adds.

At document level the unit is the gold *document*, not the quote, because that is what the
report's recall@k counts (trec_eval's ``recall_k`` over the gold collapsed per document, with
the largest grade of its quotes). A query's quotes sharing a document make one case, standing
for its document: a query with ``D`` gold documents weighs each ``1 / (D * N)``, and a "miss"
is a gold document. The case carries the document's first resolved quote (its first quote when
none is resolved), whose trace and text the buckets read.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from groundkit.judgments import EvalReport, QueryResult, StageReport
from groundkit.judgments.metrics import GoldItem, overlaps
from groundkit.judgments.report import EvidenceTrace, GoldEvidence, QueryInfo

__all__ = [
    "DOCUMENT_SPAN_END",
    "QuoteCase",
    "RankedSpan",
    "ReportMemo",
    "StageQuotes",
    "case_indices",
    "first_ranks",
    "gold_items",
    "report_memo",
]

DOCUMENT_SPAN_END = 1 << 62
"""End of the whole-document span standing for a quote at document level."""


class RankedSpan(Protocol):
    """What ranking replays read of a hit: a report's hit, or a replayed one."""

    @property
    def doc(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


def first_ranks(
    hits: Sequence[RankedSpan],
    gold: Sequence[GoldEvidence],
    *,
    level: str,
    min_overlap_fraction: float,
) -> list[int | None]:
    """For each gold quote, the 1-based rank of the first hit touching it (``None``: none)."""
    wanted = {quote.doc for quote in gold}  # most hits are in no gold document
    by_doc: dict[str, list[tuple[int, int, int]]] = {}
    for rank, hit in enumerate(hits, start=1):
        if hit.doc in wanted:
            by_doc.setdefault(hit.doc, []).append((rank, hit.start, hit.end))
    ranks: list[int | None] = []
    for quote in gold:
        candidates = by_doc.get(quote.doc, [])
        found: int | None = None
        if level == "document":
            found = candidates[0][0] if candidates else None
        else:
            for rank, start, end in candidates:
                if any(
                    overlaps(start, end, s, e, min_overlap_fraction=min_overlap_fraction)
                    for s, e in quote.spans
                ):
                    found = rank
                    break
        ranks.append(found)
    return ranks


def gold_items(queries: Sequence[QueryInfo], *, level: str) -> dict[str, list[GoldItem]]:
    """The gold of answerable queries in the form the core metrics score.

    At document level each gold document is one item (resolved or not) with the largest grade
    of its quotes: the qrels the harness scores document-level runs with.
    """
    items: dict[str, list[GoldItem]] = {}
    for query in queries:
        if not query.answerable:
            continue
        if level == "document":
            grades: dict[str, int] = {}
            for quote in query.gold:
                grades[quote.doc] = max(grades.get(quote.doc, 0), quote.grade)
            items[query.query_id] = [
                GoldItem(grade=grade, spans=((doc, 0, DOCUMENT_SPAN_END),))
                for doc, grade in grades.items()
            ]
            continue
        items[query.query_id] = [
            GoldItem(
                grade=quote.grade,
                spans=tuple((quote.doc, start, end) for start, end in quote.spans),
            )
            for quote in query.gold
        ]
    return items


def case_indices(gold: Sequence[GoldEvidence], *, level: str) -> list[int]:
    """Indices of the quotes that make the cases: every quote, or one quote per document.

    At document level a document's case carries its first resolved quote (its first quote
    when none is resolved), in the order the documents first appear.
    """
    if level != "document":
        return list(range(len(gold)))
    chosen: dict[str, int] = {}
    for index, quote in enumerate(gold):
        current = chosen.get(quote.doc)
        if current is None or (quote.resolved and not gold[current].resolved):
            chosen[quote.doc] = index
    return list(chosen.values())


@dataclass(frozen=True, slots=True)
class QuoteCase:
    """One gold quote (at document level: one gold document) of one answerable query.

    Attributes:
        query: The query.
        gold_index: Index of the quote in ``query.gold`` (at document level, the quote
            standing for its document, see :func:`case_indices`).
        weight: What finding it adds to the stage's mean recall@k.
        first_rank: Rank of the first touching hit of the stage (``None``: none recorded).
        trace: The stage's evidence trace of the quote (``None``: the report has none).
    """

    query: QueryInfo
    gold_index: int
    weight: float
    first_rank: int | None
    trace: EvidenceTrace | None

    @property
    def gold(self) -> GoldEvidence:
        """The quote."""
        return self.query.gold[self.gold_index]

    @property
    def key(self) -> tuple[str, int]:
        """``(query_id, gold_index)``."""
        return self.query.query_id, self.gold_index

    def found(self, k: int) -> bool:
        """Whether a hit within rank ``k`` touches the quote."""
        return self.first_rank is not None and self.first_rank <= k


@dataclass(frozen=True, eq=False)
class StageQuotes:
    """Every quote of a stage with its first rank, in report order.

    Attributes:
        stage: The stage.
        cases: One case per gold quote (document level: per gold document) of every
            answerable query.
        results: The stage's results by query id.
        query_count: Answerable queries of the report.
    """

    stage: StageReport
    cases: tuple[QuoteCase, ...]
    results: Mapping[str, QueryResult]
    query_count: int

    @classmethod
    def build(cls, report: EvalReport, stage: StageReport) -> StageQuotes:
        """Trace every answerable query's quotes through ``stage``'s recorded hits."""
        answerable = [q for q in report.queries if q.answerable]
        results = {result.query_id: result for result in stage.queries}
        count = len(answerable)
        cases: list[QuoteCase] = []
        for query in answerable:
            result = results.get(query.query_id)
            hits = result.hits if result is not None else []
            traces = {t.gold_index: t for t in result.evidence} if result is not None else {}
            ranks = first_ranks(
                hits,
                query.gold,
                level=report.run.level,
                min_overlap_fraction=report.run.min_overlap_fraction,
            )
            indices = case_indices(query.gold, level=report.run.level)
            weight = 1.0 / (len(indices) * count)
            cases.extend(
                QuoteCase(query, index, weight, ranks[index], traces.get(index))
                for index in indices
            )
        return cls(stage=stage, cases=tuple(cases), results=results, query_count=count)

    def found_keys(self, k: int) -> set[tuple[str, int]]:
        """Keys of the quotes found within ``k``."""
        return {case.key for case in self.cases if case.found(k)}

    def per_query_recall(self, k: int) -> dict[str, float]:
        """Recall@k of each answerable query (found cases over its cases)."""
        found: dict[str, int] = {}
        total: dict[str, int] = {}
        for case in self.cases:
            query_id = case.query.query_id
            total[query_id] = total.get(query_id, 0) + 1
            found[query_id] = found.get(query_id, 0) + (1 if case.found(k) else 0)
        return {query_id: found[query_id] / total[query_id] for query_id in total}

    def mean_recall(self, k: int) -> float:
        """Mean recall@k over the answerable queries (0 without queries)."""
        per_query = self.per_query_recall(k)
        return math.fsum(per_query.values()) / len(per_query) if per_query else 0.0

    def top_has_duplicate(self, query_id: str, k: int) -> bool:
        """Whether the top ``k`` hits of the query include a near-duplicate of an earlier hit."""
        result = self.results.get(query_id)
        return result is not None and any(h.duplicate_of is not None for h in result.hits[:k])


class ReportMemo:
    """What every diagnosis of one report shares, computed once for the report.

    The HTML page diagnoses each stage of a report in turn; each diagnosis reads every stage's
    quotes, and a stage's mean recall@k on its recorded ranking is the ``before`` of its own
    diagnosis and the ``measured`` of the others'. Both depend on the report alone.

    Attributes:
        views: Every successful stage's quotes, by stage name, in report order.
        means: Mean of a metric on a stage's recorded ranking, by ``(stage, metric)``.
    """

    def __init__(self, report: EvalReport) -> None:
        self.views = {
            stage.name: StageQuotes.build(report, stage)
            for stage in report.stages
            if stage.error is None
        }
        self.means: dict[tuple[str, str], float] = {}


# The last report's memo (a weak reference: no report is kept alive by the cache; reports are
# frozen, so what is computed from one never changes).
_LAST_MEMO: tuple[weakref.ref[EvalReport], ReportMemo] | None = None


def report_memo(report: EvalReport) -> ReportMemo:
    """The :class:`ReportMemo` of ``report``: the last one made when it is the same report."""
    global _LAST_MEMO
    if _LAST_MEMO is not None and _LAST_MEMO[0]() is report:
        return _LAST_MEMO[1]
    memo = ReportMemo(report)
    _LAST_MEMO = (weakref.ref(report), memo)
    return memo
