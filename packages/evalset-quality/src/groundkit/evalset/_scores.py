"""Per-question scores of one or more systems, as given by a caller or read from a report."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from groundkit.evalset._errors import EvalSetError
from groundkit.judgments import EvalReport

__all__ = [
    "ScoreInput",
    "default_metric",
    "discriminating_power",
    "normalise_scores",
    "stage_scores",
]

#: Query id to one score in [0, 1], or to one score per system.
ScoreInput = Mapping[str, float | Sequence[float]]


def _check_score(value: object, query_id: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EvalSetError(f"score must be a number, got {value!r}", item_id=query_id)
    score = float(value)
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise EvalSetError(f"score must be in [0, 1], got {value!r}", item_id=query_id)
    return score


def normalise_scores(scores: ScoreInput) -> dict[str, tuple[float, ...]]:
    """Query id to a tuple of scores (one per system), checked to lie in [0, 1].

    Raises:
        EvalSetError: A score that is not a number in [0, 1], or an empty list of scores.
    """
    result: dict[str, tuple[float, ...]] = {}
    for query_id, value in scores.items():
        if isinstance(value, (int, float)):
            result[query_id] = (_check_score(value, query_id),)
            continue
        values = tuple(_check_score(item, query_id) for item in value)
        if not values:
            raise EvalSetError("an empty list of scores", item_id=query_id)
        result[query_id] = values
    return result


def discriminating_power(scores: Sequence[float]) -> float:
    """1 − |mean score − 0.5| · 2: 1 when systems get it half right, 0 when aced or failed."""
    mean = math.fsum(scores) / len(scores)
    return 1.0 - abs(mean - 0.5) * 2.0


def default_metric(report: EvalReport) -> str:
    """The report's first headline metric, else the first metric (sorted) the baseline scored.

    Raises:
        EvalSetError: The report scores nothing.
    """
    if report.run.headline_metrics:
        return report.run.headline_metrics[0]
    for stage in report.stages:
        for result in stage.queries:
            if result.scores:
                return sorted(result.scores)[0]
    raise EvalSetError("the report has no per-query scores")


def stage_scores(report: EvalReport, metric: str) -> dict[str, dict[str, float]]:
    """Stage name to (query id to score on ``metric``), for every stage that ran.

    Stages that failed (``error`` set) are left out.

    Raises:
        EvalSetError: The metric is not in the report.
    """
    tables: dict[str, dict[str, float]] = {}
    seen_metric = False
    for stage in report.stages:
        if stage.error is not None:
            continue
        table: dict[str, float] = {}
        for result in stage.queries:
            if metric in result.scores:
                seen_metric = True
                table[result.query_id] = result.scores[metric]
        tables[stage.name] = table
    if not seen_metric:
        raise EvalSetError(f"metric {metric!r} is not in the report's per-query scores")
    return tables
