"""judged@k: the share of a stage's top-k hits anything is known about (schema 1.3).

A hit is *judged* when it touches a gold quote of its query (at document level: comes from a
gold document) or carries an adjudicated grade (``ReportHit.adjudicated_grade``, written by
``grk eval adjudicate``). An unjudged hit is not an irrelevant one: a low judged@10 means
precision and recall may understate a stage that finds passages the gold never quoted.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from groundkit.judgments.metrics._hits import overlaps
from groundkit.judgments.report._models import QueryInfo, ReportHit, StageReport
from groundkit.judgments.report._notes import NoteCode, ReportNote
from groundkit.judgments.report._query import HitFields, hit_fields

__all__ = [
    "JUDGED_CAUTION_BELOW",
    "JUDGED_CAUTION_CUTOFF",
    "hit_touches_gold",
    "judged_at",
    "judged_notes",
]

JUDGED_CAUTION_CUTOFF = 10
"""The cutoff whose judged share is checked for the caution."""

JUDGED_CAUTION_BELOW = 0.5
"""judged@10 below this share gets a CAUTION: most of the top 10 is then unknown."""


def hit_touches_gold(
    hit: ReportHit, query: QueryInfo, *, level: str = "chunk", min_overlap_fraction: float = 0.0
) -> bool:
    """Whether ``hit`` touches a gold quote of ``query`` (document level: a gold document)."""
    return _touches(hit.doc, hit.start, hit.end, query, level, min_overlap_fraction)


def _touches(
    doc: str, start: int, end: int, query: QueryInfo, level: str, min_overlap_fraction: float
) -> bool:
    if level == "document":
        return any(g.doc == doc for g in query.gold)
    return any(
        g.doc == doc and overlaps(start, end, s, e, min_overlap_fraction=min_overlap_fraction)
        for g in query.gold
        for s, e in g.spans
    )


def _judged_flags(
    hits: HitFields, query: QueryInfo, level: str, min_overlap_fraction: float
) -> list[bool]:
    """Per hit, whether it is judged: it has a grade or touches gold (:func:`_touches`)."""
    spans = zip(hits.docs, hits.starts, hits.ends, hits.adjudicated_grades, strict=True)
    return [
        grade is not None or _touches(doc, start, end, query, level, min_overlap_fraction)
        for doc, start, end, grade in spans
    ]


def judged_at(
    stage: StageReport,
    queries: Sequence[QueryInfo],
    cutoffs: Sequence[int],
    *,
    level: str = "chunk",
    min_overlap_fraction: float = 0.0,
) -> dict[str, float]:
    """``{"judged@k": share}`` for each cutoff, pooled over the stage's answerable queries.

    The share is judged hits over hits among each query's first ``k`` (a query with fewer
    hits adds fewer); a cutoff with no hits at all is left out.
    """
    by_id = {q.query_id: q for q in queries}
    ks = sorted(set(cutoffs))
    judged, total = [0] * len(ks), [0] * len(ks)
    deepest = ks[-1] if ks else 0
    for result in stage.queries:
        query = by_id.get(result.query_id)
        if query is None:
            continue
        # Each hit is judged once, for the deepest cutoff; every cutoff reads the running count.
        flags = _judged_flags(hit_fields(result.hits[:deepest]), query, level, min_overlap_fraction)
        running = list(itertools.accumulate(flags, initial=0))
        for i, k in enumerate(ks):
            seen = min(k, len(running) - 1)
            total[i] += seen
            judged[i] += running[seen]
    return {f"judged@{k}": judged[i] / total[i] for i, k in enumerate(ks) if total[i]}


def judged_notes(stages: Sequence[StageReport]) -> list[ReportNote]:
    """One CAUTION naming the stages whose judged@10 is below :data:`JUDGED_CAUTION_BELOW`."""
    key = f"judged@{JUDGED_CAUTION_CUTOFF}"
    low = [
        f"{stage.name} {100 * share:.0f}%"
        for stage in stages
        if (share := stage.judged.get(key)) is not None and share < JUDGED_CAUTION_BELOW
    ]
    if not low:
        return []
    text = (
        f"Few top-{JUDGED_CAUTION_CUTOFF} hits are judged (touch gold or carry an adjudicated "
        f"grade): {', '.join(low)}. Unjudged is not irrelevant: precision and recall may "
        "understate a stage that finds passages the gold never quoted; `grk eval adjudicate` "
        "judges them."
    )
    return [ReportNote(code=NoteCode.LOW_JUDGED, level="caution", text=text)]
