"""What the HTML report shows, computed from an :class:`EvalReport` (no HTML here).

Everything is derived from the report's recorded hits, gold spans and per-query scores with
core's scoring functions, so the page never disagrees with the JSON it was made from:

* recall curves over rank cutoffs ``k`` and over character budgets, from the recorded hits and
  gold spans (``groundkit.judgments.metrics.score_table``, credit-once and overlap semantics of
  core),
  with each point's interval from ``groundkit.stats.mean_interval`` (no statistics here);
* per-category and per-question-type means of the headline metrics;
* the worst queries of each stage with their first relevant hit.

The detection limits come from the harness (``groundkit.harness.analysis.detection_limits``), which
reads them from the report's comparisons.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from groundkit.judgments import EvalReport, StageReport
from groundkit.judgments.metrics import GoldItem, GoldTable, HitTable, overlaps, score_table
from groundkit.judgments.report import GoldEvidence, QueryInfo, ReportHit
from groundkit.stats import MeanInterval, mean_interval

__all__ = [
    "BUDGET_GRID",
    "BreakdownRow",
    "Curve",
    "CurveSet",
    "WorstQuery",
    "breakdown",
    "first_relevant_hit",
    "headline_metrics",
    "recall_curves",
    "scored_stages",
    "stage_scores",
    "worst_queries",
]

FloatArray = npt.NDArray[np.float64]

#: Character budgets of the equal-context curve: 250 to 20,000 characters (one short chunk to
#: a long prompt) in round numbers roughly evenly spaced on a log scale. The report's own
#: budgets are added to the grid so the curve passes through the numbers in the JSON.
BUDGET_GRID: tuple[int, ...] = (
    250, 300, 400, 500, 600, 800, 1000, 1250, 1500, 2000, 2500, 3000,
    4000, 5000, 6000, 8000, 10000, 12500, 15000, 20000,
)  # fmt: skip
_MAX_RANK = 100


@dataclass(frozen=True, eq=False)
class Curve:
    """A stage's mean recall at each x with its interval band.

    Attributes:
        stage: Stage name.
        x: Rank cutoffs or character budgets.
        mean: Mean recall over the answerable queries at each x.
        low: Lower end of each point's interval.
        high: Upper end of the band.
    """

    stage: str
    x: npt.NDArray[np.int64]
    mean: FloatArray
    low: FloatArray
    high: FloatArray


@dataclass(frozen=True)
class BreakdownRow:
    """Mean of each headline metric per stage over one group of answerable queries.

    Attributes:
        group: ``all``, ``category`` or ``qtype``.
        label: The category or question type (``all answerable`` for the whole set).
        query_count: Answerable queries in the group.
        means: ``{stage: {metric: mean}}``; missing results count as zero.
    """

    group: str
    label: str
    query_count: int
    means: dict[str, dict[str, float]]


@dataclass(frozen=True)
class WorstQuery:
    """One of a stage's lowest-scoring queries.

    Attributes:
        query: The query as the report lists it.
        score: Its value of the headline metric.
        hits: The stage's recorded hits for it.
        relevant_rank: Rank (1-based) of the first hit touching any gold span, or ``None``.
        missing: The retriever returned nothing for the query.
    """

    query: QueryInfo
    score: float
    hits: tuple[ReportHit, ...]
    relevant_rank: int | None
    missing: bool


def headline_metrics(report: EvalReport) -> list[str]:
    """The report's headline metrics, or every aggregated metric when none are named."""
    if report.run.headline_metrics:
        return list(report.run.headline_metrics)
    return sorted({m for s in report.stages for m in s.aggregates})


def scored_stages(report: EvalReport) -> list[StageReport]:
    """Stages that ran (failed stages have no results to plot)."""
    return [s for s in report.stages if s.error is None]


def _answerable(report: EvalReport) -> list[QueryInfo]:
    return [q for q in report.queries if q.answerable]


def stage_scores(stage: StageReport, query_ids: Sequence[str], metric: str) -> FloatArray:
    """Per-query values of ``metric`` in ``query_ids`` order (absent queries count as zero).

    A query without a result or without the metric scores 0, as in the report's means.
    """
    by_id = {r.query_id: r.scores for r in stage.queries}
    return np.fromiter(
        (by_id.get(q, {}).get(metric, 0.0) for q in query_ids),
        dtype=np.float64,
        count=len(query_ids),
    )


# --- curves ---------------------------------------------------------------------------------


def _document_level(report: EvalReport) -> bool:
    return report.run.level == "document"


def _gold_items(report: EvalReport) -> dict[str, tuple[GoldItem, ...]]:
    gold: dict[str, tuple[GoldItem, ...]] = {}
    for query in _answerable(report):
        if _document_level(report):
            # trec_eval semantics: a relevant document is found when any hit is in it.
            grades: dict[str, int] = {}
            for item in query.gold:
                grades[item.doc] = max(grades.get(item.doc, 0), item.grade)
            gold[query.query_id] = tuple(
                GoldItem(grade=g, spans=((doc, 0, 1),)) for doc, g in grades.items()
            )
        else:
            gold[query.query_id] = tuple(
                GoldItem(grade=item.grade, spans=tuple((item.doc, s, e) for s, e in item.spans))
                for item in query.gold
            )
    return gold


class _DocumentSpan(NamedTuple):
    """A hit as its whole document, at document level."""

    doc: str
    start: int = 0
    end: int = 1


def _hit_table(report: EvalReport, stage: StageReport) -> HitTable:
    if _document_level(report):
        # Whole-document spans: plain tuples (HitTable reads doc, start and end only).
        whole = {r.query_id: [_DocumentSpan(h.doc) for h in r.hits] for r in stage.queries}
        return HitTable.from_hits(whole)
    return HitTable.from_hits({r.query_id: r.hits for r in stage.queries})


@dataclass(frozen=True)
class CurveSet:
    """Both recall curves of every stage that ran.

    Attributes:
        rank: ``recall@k`` for ``k = 1 ... min(100, depth)``.
        budget: ``recall@Nc`` on :data:`BUDGET_GRID` plus the report's budgets (empty at
            document level, where a hit has no meaningful length to budget).
    """

    rank: list[Curve]
    budget: list[Curve]


class _Bands:
    """Each point's interval from the statistics engine, asked once per distinct column.

    Neighbouring points often hold the same scores (recall@40 ... recall@100 once a stage
    finds no more gold, a budget that reads the same hits as a cutoff), and
    :func:`mean_interval` is a function of the scores and the settings alone, so a column
    seen before takes the interval already computed; the curves are the same numbers.
    """

    def __init__(self, level: float, seed: int) -> None:
        self._level = level
        self._seed = seed
        self._seen: dict[bytes, MeanInterval] = {}

    def _interval(self, column: FloatArray) -> MeanInterval:
        key = column.tobytes()
        interval = self._seen.get(key)
        if interval is None:
            interval = mean_interval(column, confidence_level=self._level, seed=self._seed)
            self._seen[key] = interval
        return interval

    def curve(self, stage: str, x: npt.NDArray[np.int64], values: FloatArray) -> Curve:
        """Each point's mean with its interval (one column of ``values`` per point)."""
        intervals = [self._interval(values[:, column]) for column in range(values.shape[1])]
        return Curve(
            stage=stage,
            x=x,
            mean=np.asarray([i.value for i in intervals], dtype=np.float64),
            low=np.asarray([i.low for i in intervals], dtype=np.float64),
            high=np.asarray([i.high for i in intervals], dtype=np.float64),
        )


def recall_curves(
    report: EvalReport, *, max_rank: int = _MAX_RANK, budgets: Sequence[int] = BUDGET_GRID
) -> CurveSet:
    """Recall by rank cutoff and by characters read, per stage, with bootstrap bands.

    Scores come from core's :func:`~groundkit.judgments.metrics.score_table` on the recorded hits
    and gold spans (with the report's ``min_overlap_fraction``); queries a stage has no
    result for count as zero. Each point's band is the interval
    :func:`groundkit.stats.mean_interval` chooses for its scores.

    Args:
        report: The report.
        max_rank: Largest rank cutoff.
        budgets: Character budgets (the report's own budgets are added).

    Returns:
        The curves (empty lists when nothing is answerable or no stage ran).
    """
    answerable = _answerable(report)
    stages = scored_stages(report)
    if not answerable or not stages:
        return CurveSet([], [])
    gold = GoldTable.from_items(_gold_items(report))
    settings = report.run.bootstrap
    bands = _Bands(settings.confidence_level, settings.seed)
    ks = np.arange(1, max(1, min(max_rank, report.run.depth)) + 1, dtype=np.int64)
    grid = np.asarray(sorted({*budgets, *report.run.budgets}), dtype=np.int64)
    by_budget = not _document_level(report)
    rank: list[Curve] = []
    budget: list[Curve] = []
    for stage in stages:
        hits = _hit_table(report, stage)
        names = [f"recall@{k}" for k in ks.tolist()]
        if by_budget:
            names += [f"recall@{n}c" for n in grid.tolist()]
        values = score_table(
            gold, hits, names, min_overlap_fraction=report.run.min_overlap_fraction
        ).values
        rank.append(bands.curve(stage.name, ks, values[:, : len(ks)]))
        if by_budget:
            budget.append(bands.curve(stage.name, grid, values[:, len(ks) :]))
    return CurveSet(rank, budget)


# --- breakdown ------------------------------------------------------------------------------


def _group_rows(
    report: EvalReport, group: str, labels: Mapping[str, str], metrics: Sequence[str]
) -> list[BreakdownRow]:
    counts = Counter(labels.values())
    rows: list[BreakdownRow] = []
    for label, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        members = [q for q, value in labels.items() if value == label]
        means = {
            stage.name: {
                metric: math.fsum(stage_scores(stage, members, metric).tolist()) / len(members)
                for metric in metrics
            }
            for stage in scored_stages(report)
        }
        rows.append(BreakdownRow(group=group, label=label, query_count=len(members), means=means))
    return rows


def breakdown(report: EvalReport) -> list[BreakdownRow]:
    """Mean of each headline metric per stage: all answerable queries, then per group.

    The first row is the whole set and repeats the report's aggregate means exactly; then
    one row per category (when there are several) and, when any query is labelled, one per
    question type (unlabelled queries under ``unlabelled``). Unanswerable queries are not
    scored, so they appear in no row.
    """
    metrics = headline_metrics(report)
    answerable = _answerable(report)
    overall = {
        stage.name: {
            metric: stage.aggregates[metric].mean
            if metric in stage.aggregates
            else math.fsum(stage_scores(stage, [q.query_id for q in answerable], metric).tolist())
            / max(1, len(answerable))
            for metric in metrics
        }
        for stage in scored_stages(report)
    }
    rows = [BreakdownRow("all", "all answerable", len(answerable), overall)]
    categories = {q.query_id: q.category for q in answerable}
    if len(set(categories.values())) > 1:  # one category would only repeat the first row
        rows += _group_rows(report, "category", categories, metrics)
    if any(q.qtype is not None for q in answerable):
        qtypes = {q.query_id: q.qtype or "unlabelled" for q in answerable}
        rows += _group_rows(report, "qtype", qtypes, metrics)
    return rows


# --- worst queries --------------------------------------------------------------------------


def _touches(report: EvalReport, hit: ReportHit, gold: GoldEvidence) -> bool:
    if hit.doc != gold.doc:
        return False
    if _document_level(report):
        return True
    fraction = report.run.min_overlap_fraction
    return any(
        overlaps(hit.start, hit.end, start, end, min_overlap_fraction=fraction)
        for start, end in gold.spans
    )


def first_relevant_hit(
    report: EvalReport, query: QueryInfo, hits: Sequence[ReportHit]
) -> tuple[int, ReportHit, GoldEvidence] | None:
    """The first hit touching any gold span: ``(rank, hit, gold)``, or ``None``."""
    for rank, hit in enumerate(hits, start=1):
        for gold in query.gold:
            if _touches(report, hit, gold):
                return rank, hit, gold
    return None


def worst_queries(
    report: EvalReport, stage: StageReport, metric: str, *, count: int = 5
) -> list[WorstQuery]:
    """The ``count`` answerable queries with the lowest ``metric`` for ``stage``.

    Ties are broken towards queries with no relevant hit at all, then a later first relevant
    hit, then the query id, so the order is stable.
    """
    results = {r.query_id: r for r in stage.queries}
    rows: list[tuple[tuple[float, int, str], WorstQuery]] = []
    for query in _answerable(report):
        result = results.get(query.query_id)
        hits = tuple(result.hits) if result is not None else ()
        score = result.scores.get(metric, 0.0) if result is not None else 0.0
        found = first_relevant_hit(report, query, hits)
        rank = None if found is None else found[0]
        key = (score, -(rank if rank is not None else len(hits) + 1), query.query_id)
        rows.append(
            (
                key,
                WorstQuery(
                    query=query,
                    score=score,
                    hits=hits,
                    relevant_rank=rank,
                    missing=result is None or result.missing,
                ),
            )
        )
    rows.sort(key=lambda row: row[0])
    return [row[1] for row in rows[:count]]
