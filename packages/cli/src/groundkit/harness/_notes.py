"""What a number in the report cannot say: the report's notes, and the detection limits."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from groundkit.harness._config import BASELINE_STAGE, EvalSettings
from groundkit.judgments import EvalReport, ResolvedJudgment, StageReport
from groundkit.stats import minimum_detectable_difference, paired_minimum_detectable_difference

__all__ = ["DetectionLimits", "build_notes", "detection_limits"]


class DetectionLimits(BaseModel):
    """The smallest differences an evaluation set can tell apart from noise.

    Attributes:
        query_count: Number of answerable queries.
        unpaired: Floor for two independent runs, for scores in [0, 1] (worst-case variance).
        paired: Stage -> headline metric -> floor from the observed per-query differences
            with the baseline (usually smaller: the runs agree on most queries).
        power: Power the floors are computed for.
        alpha: Two-sided significance level.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_count: int
    unpaired: float
    paired: dict[str, dict[str, float]]
    power: float = 0.8
    alpha: float = 0.05


def _paired_floors(
    stages: Sequence[StageReport],
    per_stage: dict[str, npt.NDArray[np.float64]],
    metrics: Sequence[str],
    headline: Sequence[str],
    power: float,
    alpha: float,
) -> dict[str, dict[str, float]]:
    base = per_stage.get(BASELINE_STAGE)
    paired: dict[str, dict[str, float]] = {}
    if base is None or base.shape[0] < 2:
        return paired
    columns = {m: i for i, m in enumerate(metrics)}
    for stage in stages:
        values = per_stage.get(stage.name)
        if stage.name == BASELINE_STAGE or values is None:
            continue
        paired[stage.name] = {
            metric: paired_minimum_detectable_difference(
                values[:, columns[metric]] - base[:, columns[metric]], power=power, alpha=alpha
            )
            for metric in headline
            if metric in columns
        }
    return paired


def detection_limits(
    report: EvalReport, *, power: float = 0.8, alpha: float = 0.05
) -> DetectionLimits:
    """Detection limits of a report's evaluation set and of each comparison with the baseline.

    Args:
        report: An evaluation report.
        power: Probability of detecting a difference of exactly the floor.
        alpha: Two-sided significance level.

    Returns:
        The unpaired floor for the set's size and, per stage and headline metric, the paired
        floor from the observed per-query differences.
    """
    headline = report.run.headline_metrics
    per_stage: dict[str, npt.NDArray[np.float64]] = {}
    order = [q.query_id for q in report.queries if q.answerable]
    for stage in report.stages:
        if stage.error is not None or not stage.queries:
            continue
        by_id = {r.query_id: r.scores for r in stage.queries}
        per_stage[stage.name] = np.asarray(
            [[by_id[q].get(m, 0.0) if q in by_id else 0.0 for m in headline] for q in order],
            dtype=np.float64,
        ).reshape(len(order), len(headline))
    count = len(order)
    return DetectionLimits(
        query_count=count,
        unpaired=minimum_detectable_difference(max(count, 1), power=power, alpha=alpha),
        paired=_paired_floors(report.stages, per_stage, headline, headline, power, alpha),
        power=power,
        alpha=alpha,
    )


def _points(value: float) -> str:
    return f"{100 * value:.1f}"


def build_notes(
    *,
    settings: EvalSettings,
    resolved: Sequence[ResolvedJudgment],
    stages: Sequence[StageReport],
    per_stage_values: dict[str, npt.NDArray[np.float64]],
    metrics: Sequence[str],
) -> list[str]:
    """The report's notes, in a fixed order."""
    notes: list[str] = []
    answerable = [r for r in resolved if r.judgment.answerable]
    if settings.level == "chunk":
        notes.append(
            "Chunk-level scores (hits must overlap the quoted gold spans) are not comparable to "
            'published BEIR document-level numbers; use level = "document" for those.'
        )
    else:
        notes.append(
            "Document-level scores: each stage's hits are collapsed to documents (first "
            "occurrence, rank order kept) and scored with trec_eval semantics; a gold document "
            "has the highest grade of its quotes."
        )
    unanswerable = len(resolved) - len(answerable)
    if unanswerable:
        notes.append(
            f"{unanswerable} unanswerable quer{'y is' if unanswerable == 1 else 'ies are'} "
            "listed but not ranked or scored."
        )
    quotes = [q for r in answerable for q in r.quotes]
    unresolved = [q for q in quotes if not q.resolved]
    if unresolved:
        effect = (
            "their documents still count as relevant"
            if settings.level == "document"
            else "no hit can touch them, which caps recall"
        )
        notes.append(
            f"{len(unresolved)} of {len(quotes)} gold quotes were not found in their documents; "
            f"{effect} (see the closest passages in queries[].gold)."
        )
        # A gold document absent from the corpus is usually a wrong corpus path or id: name it.
        absent = sorted(
            {
                q.gold.doc
                for r in answerable
                for q in r.quotes
                if q.reason is not None and q.reason.endswith("is not in the corpus")
            }
        )
        if absent:
            shown = ", ".join(repr(doc) for doc in absent[:5])
            more = f" and {len(absent) - 5} more" if len(absent) > 5 else ""
            notes.append(
                f"{len(absent)} gold document{'s are' if len(absent) > 1 else ' is'} not in the "
                f"corpus: {shown}{more}."
            )
    for stage in stages:
        if stage.error is not None:
            notes.append(f"Stage {stage.name!r} failed and has no results: {stage.error}")
            continue
        missing = sum(1 for r in stage.queries if r.missing)
        if missing:
            notes.append(
                f"Stage {stage.name!r}: {missing} of {len(stage.queries)} queries got no hits; "
                "queries missing from a run score zero and stay in the mean."
            )
    if any(k > settings.depth for k in settings.cutoffs):
        notes.append(
            f"Only {settings.depth} hits per query are recorded: metrics at a cutoff above "
            f"{settings.depth} equal their value at {settings.depth}."
        )
    count = len(answerable)
    floor = minimum_detectable_difference(max(count, 1))
    text = (
        f"Detection limit: with {count} answerable queries, a difference smaller than about "
        f"{_points(floor)} points between two stages cannot be told from noise (unpaired "
        "floor, 80% power, two-sided alpha 0.05)"
    )
    paired = _paired_floors(stages, per_stage_values, metrics, settings.headline_metrics, 0.8, 0.05)
    details = [
        f"{stage} on {metric}: {_points(value)}"
        for stage, floors in paired.items()
        for metric, value in floors.items()
    ]
    if details:
        text += "; paired floors from the observed differences with the baseline: " + ", ".join(
            details
        )
    notes.append(text + ".")
    return notes
