"""Adjudication: judge a report's unjudged top-k hits; score again with the relevant ones as gold.

A hit is *unjudged* when it touches no gold quote of its query and has no adjudicated grade.
The judge's majority grade is written on every hit of the same (query, span) in every stage;
a hit judged relevant becomes one more gold quote (grade 1) of its query in the adjudicated
scores, which sit beside the strict ones (``QueryResult.adjudicated_scores``,
``StageReport.adjudicated``). The strict scores, aggregates and comparisons never change; the
adjudicated comparisons come from the same verdict engine as the strict ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from groundkit.evalset.judge import figures_text
from groundkit.harness._errors import HarnessError
from groundkit.harness.analysis._stats import (
    aggregate,
    holm_by_member,
    report_family,
    stage_comparison,
)
from groundkit.harness.run._tokenizer import recorded_tokenizer
from groundkit.judgments import EvalReport, StageReport, parse_metric
from groundkit.judgments.metrics import HitTokens, score_table, split_occurrences
from groundkit.judgments.report import (
    AdjudicatedStage,
    AdjudicationInfo,
    CalibrationStatus,
    HitList,
    MetricAggregate,
    NoteCode,
    QueryInfo,
    ReportNote,
    StageComparison,
    hit_touches_gold,
    judged_at,
    judged_notes,
)

__all__ = ["Candidate", "adjudicated_report", "adjudication_tokens", "unjudged_hits"]

SpanKey = tuple[str, str, int, int]
"""``(query_id, doc, start, end)``: what a judgment is about."""


@dataclass(frozen=True)
class Candidate:
    """An unjudged top-k hit: where it is and the text the judge reads."""

    query_id: str
    query: str
    stage: str
    rank: int
    doc: str
    start: int
    end: int
    passage: str

    @property
    def key(self) -> SpanKey:
        """The (query, span) this hit is."""
        return (self.query_id, self.doc, self.start, self.end)


def unjudged_hits(
    report: EvalReport, stages: Sequence[str], k: int, corpus: Mapping[str, str]
) -> list[Candidate]:
    """The distinct unjudged hits among the first ``k`` of each named stage, in rank order.

    Raises:
        HarnessError: Document-level report, a stage that failed, or a hit whose document is
            not in the corpus.
        ReportError: A stage that does not exist.
    """
    if report.run.level != "chunk":
        raise HarnessError("adjudication works on chunk-level reports (this one is document)")
    queries = {q.query_id: q for q in report.queries if q.answerable}
    seen: set[SpanKey] = set()
    found: list[Candidate] = []
    for name in stages:
        stage = report.stage(name)
        if stage.error is not None:
            raise HarnessError(f"stage {name!r} failed and has no hits to judge")
        for result in stage.queries:
            query = queries.get(result.query_id)
            if query is None:
                continue
            for rank, hit in enumerate(result.hits[:k], start=1):
                key = (result.query_id, hit.doc, hit.start, hit.end)
                if key in seen or hit.adjudicated_grade is not None:
                    continue
                if hit_touches_gold(
                    hit, query, min_overlap_fraction=report.run.min_overlap_fraction
                ):
                    continue
                if hit.doc not in corpus:
                    raise HarnessError(
                        f"hit of query {result.query_id!r} names document {hit.doc!r}, "
                        "which is not in the corpus"
                    )
                seen.add(key)
                passage = corpus[hit.doc][hit.start : hit.end]
                found.append(
                    Candidate(
                        result.query_id,
                        query.query,
                        name,
                        rank,
                        hit.doc,
                        hit.start,
                        hit.end,
                        passage,
                    )
                )
    return found


def adjudicated_report(
    report: EvalReport,
    grades: Mapping[SpanKey, int],
    info: AdjudicationInfo,
    tokens: HitTokens | None = None,
) -> EvalReport:
    """The report with grades on its hits and adjudicated scores beside the strict ones.

    Args:
        report: The report (its strict figures are kept as they are).
        grades: Majority grade of every decided (query, span), this run's and earlier ones'.
        info: What the adjudication was and cost.
        tokens: The corpus and the run's tokenizer (:func:`adjudication_tokens`); needed
            when a headline metric has a token budget (``recall@Nt``).

    Raises:
        JudgmentError: A token budget without ``tokens``.
    """
    relevant = {key for key, grade in grades.items() if grade >= info.relevant_grade}
    graded = [_graded_stage(stage, grades) for stage in report.stages]
    metrics = list(report.run.headline_metrics)
    gold = _augmented_gold(report.queries, relevant)
    order = list(gold)
    scored = [_score_stage(stage, gold, order, metrics, report, tokens) for stage in graded]
    comparisons = _adjudicated_comparisons(report, scored)
    stages = [
        stage.model_copy(
            update={
                "adjudicated": AdjudicatedStage(
                    aggregates=aggregates, comparisons=comparisons.get(stage.name, [])
                ),
                "judged": judged_at(
                    stage,
                    report.queries,
                    report.run.cutoffs,
                    min_overlap_fraction=report.run.min_overlap_fraction,
                ),
            }
        )
        for stage, aggregates in zip(
            scored, [_aggregates(s, metrics, report) for s in scored], strict=True
        )
    ]
    notes = [
        n for n in report.note_records if n.code not in {NoteCode.LOW_JUDGED, NoteCode.ADJUDICATED}
    ]
    notes += judged_notes(stages)
    notes.append(_adjudication_note(info))
    return report.model_copy(
        update={
            "stages": stages,
            "note_records": notes,
            "notes": [n.text for n in notes],
            "adjudication": info,
        }
    )


def _graded_stage(stage: StageReport, grades: Mapping[SpanKey, int]) -> StageReport:
    results = []
    for result in stage.queries:
        hits = [
            hit.model_copy(update={"adjudicated_grade": grade})
            if (grade := grades.get((result.query_id, hit.doc, hit.start, hit.end))) is not None
            else hit
            for hit in result.hits
        ]
        results.append(result.model_copy(update={"hits": HitList.from_hits(hits)}))
    return stage.model_copy(update={"queries": results})


@dataclass(frozen=True)
class _Quote:
    grade: int
    spans: list[tuple[str, int, int]]


def _augmented_gold(
    queries: Sequence[QueryInfo], relevant: set[SpanKey]
) -> dict[str, list[_Quote]]:
    extra: dict[str, list[_Quote]] = {}
    for query_id, doc, start, end in sorted(relevant):
        extra.setdefault(query_id, []).append(_Quote(1, [(doc, start, end)]))
    return {
        q.query_id: [_Quote(g.grade, [(g.doc, s, e) for s, e in g.spans]) for g in q.gold]
        + extra.get(q.query_id, [])
        for q in queries
        if q.answerable
    }


def _score_stage(
    stage: StageReport,
    gold: Mapping[str, list[_Quote]],
    order: Sequence[str],
    metrics: Sequence[str],
    report: EvalReport,
    tokens: HitTokens | None = None,
) -> StageReport:
    if stage.error is not None:
        return stage
    hits = {r.query_id: r.hits for r in stage.queries if r.query_id in gold}
    fraction = report.run.min_overlap_fraction
    table = score_table(gold, hits, metrics, min_overlap_fraction=fraction, tokens=tokens)
    rows = dict(zip(table.query_ids, table.values.tolist(), strict=True))
    columns = list(table.metrics)
    spans = [m for m in metrics if parse_metric(m).kind.startswith("span_")]
    if spans and report.run.span_gold == "every-occurrence":
        # A report of schema < 2.3: its span figures counted every occurrence of a repeated
        # quote, and so do the adjudicated ones beside them.
        old = score_table(split_occurrences(gold), hits, spans, min_overlap_fraction=fraction)
        for query_id, values in zip(old.query_ids, old.values.tolist(), strict=True):
            row = rows[query_id]
            for metric, value in zip(old.metrics, values, strict=True):
                row[columns.index(metric)] = value
    results = [
        r.model_copy(
            update={"adjudicated_scores": {m: rows[r.query_id][columns.index(m)] for m in metrics}}
        )
        if r.query_id in rows
        else r
        for r in stage.queries
    ]
    return stage.model_copy(update={"queries": results})


def adjudication_tokens(report: EvalReport, corpus: Mapping[str, str]) -> HitTokens | None:
    """The corpus and the run's tokenizer, when a headline metric counts tokens (else ``None``).

    Raises:
        HarnessError: The tokenizer installed now is not the one the run recorded.
        JudgmentError: The tokenizer cannot be read.
    """
    metrics = report.run.headline_metrics
    if not any(parse_metric(metric).budget_tokens is not None for metric in metrics):
        return None
    recorded = report.run.tokenizer
    tokenizer = recorded_tokenizer(
        report.run.config, None if recorded is None else recorded.model_dump()
    )
    return HitTokens(corpus, tokenizer)


def _aggregates(
    stage: StageReport, metrics: Sequence[str], report: EvalReport
) -> dict[str, MetricAggregate]:
    if stage.error is not None:
        return {}
    values = np.asarray(
        [[r.adjudicated_scores.get(m, 0.0) for m in metrics] for r in stage.queries],
        dtype=np.float64,
    ).reshape(len(stage.queries), len(metrics))
    return aggregate(values, metrics, report.run.bootstrap)


def _adjudicated_comparisons(
    report: EvalReport, scored: Sequence[StageReport]
) -> dict[str, list[StageComparison]]:
    # The strict family's own code, run on a copy whose per-query scores are the adjudicated
    # ones: the same members, settings and multiplicity control as the strict comparisons.
    shadow = report.model_copy(
        update={
            "stages": [
                s.model_copy(
                    update={
                        "queries": [
                            r.model_copy(update={"scores": r.adjudicated_scores}) for r in s.queries
                        ]
                    }
                )
                for s in scored
            ]
        }
    )
    results = report_family(shadow)
    found: dict[str, list[StageComparison]] = {}
    for result, holm in zip(results, holm_by_member(results), strict=True):
        comparison = stage_comparison(result, holm, baseline=report.baseline.name)
        found.setdefault(result.label or "", []).append(comparison)
    return found


def _calibration_text(info: AdjudicationInfo) -> str:
    figures = info.calibration
    if info.calibration_status is CalibrationStatus.UNCALIBRATED or figures is None:
        return "UNCALIBRATED: the judge is not calibrated on this eval set (grk eval calibrate)."
    return f"calibrated on this eval set ({info.calibration_card}): {figures_text(figures)}."


def _adjudication_note(info: AdjudicationInfo) -> ReportNote:
    text = (
        f"Adjudicated by {info.judge} (prompt {info.prompt_version}, {info.repeats} "
        f"repeat{'s' if info.repeats > 1 else ''}, majority grade >= {info.relevant_grade} "
        f"relevant) on the top {info.k} hits of {', '.join(info.stages)}: {info.judged_hits} "
        f"unjudged hits, {info.relevant} relevant, {info.not_relevant} not, {info.undecided} "
        "undecided. Adjudicated scores sit beside the strict ones, which are unchanged; "
        + _calibration_text(info)
    )
    return ReportNote(code=NoteCode.ADJUDICATED, level="caution", text=text)
