"""A calibration card: how well a relevance judge agrees with this eval set's own gold.

The sample has two strata. *Positives* are distinct (query, span) hits that touch a gold quote
of their query. *Presumed negatives* are low-ranked hits of answerable queries (rank at least
``negative_from_rank``, by default beyond half the recorded depth) that touch no gold and are
not a near-duplicate (``ReportHit.duplicate_of``) of a hit that does. Each stratum is sampled
uniformly without replacement with a seeded generator, and its population size is recorded.

The judge grades every sampled hit; its decision (majority grade at least the relevant grade)
is compared with the stratum's label. The card reports Cohen's kappa of the two, the
true-positive rate (positives judged relevant) and the true-negative rate (negatives judged
not relevant) with Wilson intervals — kappa and intervals from :mod:`groundkit.stats` — over
the decided items (a hit whose every call failed counts neither way). Kappa is that of the
sample as drawn (``n_pos`` to ``n_neg``), not of the population's mix; the rates do not
depend on the mix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset.judge._judge import RELEVANT_GRADE, JudgeRun, PairVerdict, RelevanceJudge
from groundkit.judgments import EvalReport, ReportError
from groundkit.judgments.report import (
    CalibrationFigures,
    QueryInfo,
    RateFigure,
    ReportHit,
    hit_touches_gold,
)
from groundkit.stats import StatsError, cohen_kappa, wilson_interval

__all__ = [
    "CalibrationHit",
    "CalibrationSample",
    "Stratum",
    "calibration_figures",
    "decisions_of",
    "draw_calibration_sample",
    "figures_text",
    "judge_sample",
    "rate_text",
]

Stratum = Literal["positive", "negative"]


@dataclass(frozen=True)
class CalibrationHit:
    """One sampled hit: its stratum, where it is and the text the judge reads."""

    stratum: Stratum
    query_id: str
    query: str
    stage: str
    rank: int
    doc: str
    start: int
    end: int
    passage: str


@dataclass(frozen=True)
class CalibrationSample:
    """The drawn sample and the size of the population each stratum was drawn from."""

    hits: list[CalibrationHit]
    populations: dict[Stratum, int]
    stages: list[str]
    negative_from_rank: int
    seed: int


def _dedupe(found: list[CalibrationHit]) -> list[CalibrationHit]:
    seen: set[tuple[str, str, int, int]] = set()
    kept = []
    for hit in found:
        key = (hit.query_id, hit.doc, hit.start, hit.end)
        if key not in seen:
            seen.add(key)
            kept.append(hit)
    return kept


def _population(
    report: EvalReport,
    stages: Sequence[str],
    corpus: Mapping[str, str],
    negative_from_rank: int,
) -> tuple[list[CalibrationHit], list[CalibrationHit]]:
    queries = {q.query_id: q for q in report.queries if q.answerable}
    overlap = report.run.min_overlap_fraction
    positives: list[CalibrationHit] = []
    negatives: list[CalibrationHit] = []
    for name in stages:
        stage = report.stage(name)
        if stage.error is not None:
            continue
        for result in stage.queries:
            query = queries.get(result.query_id)
            if query is None:
                continue
            touches = [
                hit_touches_gold(h, query, min_overlap_fraction=overlap) for h in result.hits
            ]
            for rank, (hit, gold) in enumerate(zip(result.hits, touches, strict=True), start=1):
                if gold:
                    positives.append(_hit("positive", query, name, rank, hit, corpus))
                elif rank >= negative_from_rank and not _duplicates_gold(hit, touches):
                    negatives.append(_hit("negative", query, name, rank, hit, corpus))
    return _dedupe(positives), _dedupe(negatives)


def _duplicates_gold(hit: ReportHit, touches: Sequence[bool]) -> bool:
    # A near-duplicate of a hit that touches gold is likely relevant: not a presumed negative.
    return hit.duplicate_of is not None and touches[hit.duplicate_of - 1]


def _hit(
    stratum: Stratum,
    query: QueryInfo,
    stage: str,
    rank: int,
    hit: ReportHit,
    corpus: Mapping[str, str],
) -> CalibrationHit:
    if hit.doc not in corpus:
        raise EvalSetError(
            f"hit of query {query.query_id!r} names document {hit.doc!r}, which is not in "
            "the corpus"
        )
    passage = corpus[hit.doc][hit.start : hit.end]
    return CalibrationHit(
        stratum, query.query_id, query.query, stage, rank, hit.doc, hit.start, hit.end, passage
    )


def _draw(items: list[CalibrationHit], n: int, rng: np.random.Generator) -> list[CalibrationHit]:
    if len(items) <= n:
        return list(items)
    picked = sorted(rng.choice(len(items), size=n, replace=False).tolist())
    return [items[i] for i in picked]


def draw_calibration_sample(
    report: EvalReport,
    corpus: Mapping[str, str],
    *,
    n_pos: int = 50,
    n_neg: int = 50,
    seed: int = 0,
    stages: Sequence[str] | None = None,
    negative_from_rank: int | None = None,
) -> CalibrationSample:
    """Draw the stratified calibration sample of a chunk-level report.

    Args:
        report: The (strict) report.
        corpus: Document id to text (the report's corpus).
        n_pos: Positives to draw (all of them when fewer).
        n_neg: Presumed negatives to draw (all of them when fewer).
        seed: Seed of the draw (the same seed draws the same sample).
        stages: Stages to draw from (default: every stage that ran).
        negative_from_rank: Lowest rank of a presumed negative (default: depth // 2 + 1).

    Raises:
        EvalSetError: A document-level report, an unknown stage, a bad size, a hit naming a
            document not in the corpus, or a stratum with nothing to draw.
    """
    if report.run.level != "chunk":
        raise EvalSetError("calibration works on chunk-level reports (this one is document)")
    if n_pos < 1 or n_neg < 1:
        raise EvalSetError(f"--n-pos and --n-neg must be at least 1, got {n_pos} and {n_neg}")
    names = [s.name for s in report.stages if s.error is None] if stages is None else list(stages)
    try:
        for name in names:
            report.stage(name)
    except ReportError as error:
        raise EvalSetError(str(error)) from None
    start = report.run.depth // 2 + 1 if negative_from_rank is None else negative_from_rank
    positives, negatives = _population(report, names, corpus, start)
    if not positives:
        raise EvalSetError("no hit of the report touches gold: there are no positives to draw")
    if not negatives:
        raise EvalSetError(
            f"no hit at rank {start} or beyond touches no gold: there are no presumed negatives "
            "to draw (lower --negative-from-rank)"
        )
    rng = np.random.default_rng(seed)
    hits = _draw(positives, n_pos, rng) + _draw(negatives, n_neg, rng)
    return CalibrationSample(
        hits=hits,
        populations={"positive": len(positives), "negative": len(negatives)},
        stages=names,
        negative_from_rank=start,
        seed=seed,
    )


def _rate(successes: int, n: int, confidence: float) -> RateFigure:
    if n == 0:
        return RateFigure(successes=0, n=0)
    interval = wilson_interval(successes, n, confidence=confidence)
    return RateFigure(
        successes=successes,
        n=n,
        estimate=interval.estimate,
        low=interval.low,
        high=interval.high,
    )


def calibration_figures(
    labels: Sequence[bool],
    decisions: Sequence[bool | None],
    *,
    confidence: float = 0.95,
) -> CalibrationFigures:
    """Kappa, TPR and TNR of the judge's decisions against the sample's labels.

    Args:
        labels: ``True`` for a positive, ``False`` for a presumed negative.
        decisions: The judge's decision per item (``None``: undecided, counted neither way).
        confidence: Coverage of the Wilson intervals.
    """
    pairs = [(label, d) for label, d in zip(labels, decisions, strict=True) if d is not None]
    tp = sum(1 for label, d in pairs if label and d)
    fn = sum(1 for label, d in pairs if label and not d)
    tn = sum(1 for label, d in pairs if not label and not d)
    fp = sum(1 for label, d in pairs if not label and d)
    kappa: float | None = None
    if pairs:
        try:
            kappa = cohen_kappa([label for label, _ in pairs], [d for _, d in pairs])
        except StatsError:
            kappa = None  # one class for both: agreement beyond chance is undefined
    return CalibrationFigures(
        kappa=kappa,
        agreement=(tp + tn) / len(pairs) if pairs else None,
        tpr=_rate(tp, tp + fn, confidence),
        tnr=_rate(tn, tn + fp, confidence),
        confidence=confidence,
    )


def judge_sample(judge: RelevanceJudge, sample: CalibrationSample) -> JudgeRun:
    """Grade every hit of the sample (cached calls are not made again)."""
    return judge.judge([(h.query, h.passage) for h in sample.hits])


def decisions_of(
    verdicts: Sequence[PairVerdict], relevant_grade: int = RELEVANT_GRADE
) -> list[bool | None]:
    """The judge's decision per verdict (``None`` when every call failed)."""
    return [v.relevant(relevant_grade) for v in verdicts]


def rate_text(rate: RateFigure) -> str:
    """``0.900 [0.74, 0.97] (27/30)``, or ``n/a (0/0)`` for an empty stratum."""
    if rate.estimate is None or rate.low is None or rate.high is None:
        return f"n/a ({rate.successes}/{rate.n})"
    return f"{rate.estimate:.3f} [{rate.low:.2f}, {rate.high:.2f}] ({rate.successes}/{rate.n})"


def figures_text(figures: CalibrationFigures) -> str:
    """Kappa, TPR and TNR with their intervals on one line."""
    kappa = "undefined" if figures.kappa is None else f"{figures.kappa:.3f}"
    return f"kappa {kappa}, TPR {rate_text(figures.tpr)}, TNR {rate_text(figures.tnr)}"
