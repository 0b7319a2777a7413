"""What makes a report agree with itself, checked whenever one is built or read.

The schema says what each field may hold; these checks say that the fields agree: one
baseline first, unique names and ids, per-query results only for answerable queries, metric
values inside [0, 1], each aggregate the mean of its per-query scores, each comparison's effect
the difference of the two stages' means and its verdict consistent with its own interval and
p-value. A hand-edited report — a changed mean, a verdict turned into "better", a recall of
7.5, a query repeated within a stage — is refused with the first inconsistency named.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments._metrics_spec import parse_metric

if TYPE_CHECKING:
    from groundkit.judgments._report import EvalReport, StageReport

__all__ = ["BASELINE_STAGE", "semantic_problems"]

BASELINE_STAGE = "bm25"
# Means are recomputed with math.fsum; a stored mean written by another summation order may
# differ in the last bits, never by more than this.
_TOLERANCE = 1e-9


def semantic_problems(report: EvalReport) -> list[str]:
    """Every way the report disagrees with itself (empty when it agrees)."""
    problems = _structure_problems(report)
    if problems:
        return problems
    for stage in report.stages:
        found = _stage_problems(stage)
        if found:
            return found
    return _comparison_problems(report)


def _structure_problems(report: EvalReport) -> list[str]:
    problems: list[str] = []
    if not report.stages:
        return ["a report needs at least the baseline stage"]
    names = [s.name for s in report.stages]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"stage names must be unique: {', '.join(duplicates)} repeated")
    if [r.text for r in report.note_records] != list(report.notes):
        problems.append("note_records must hold the same texts as notes, in the same order")
    first = report.stages[0]
    if first.name != BASELINE_STAGE or not first.baseline:
        problems.append(f"the first stage must be the baseline named {BASELINE_STAGE!r}")
    baselines = [s.name for s in report.stages if s.baseline]
    if len(baselines) != 1:
        problems.append(f"exactly one baseline stage expected, found {len(baselines)}")
    query_ids = [q.query_id for q in report.queries]
    if len(set(query_ids)) != len(query_ids):
        problems.append("query ids must be unique")
    answerable = {q.query_id: len(q.gold) for q in report.queries if q.answerable}
    for stage in report.stages:
        for result in stage.queries:
            gold_count = answerable.get(result.query_id)
            if gold_count is None:
                problems.append(
                    f"stage {stage.name!r}: query {result.query_id!r} is not an answerable "
                    "query of the report"
                )
                break
            if any(t.gold_index >= gold_count for t in result.evidence):
                problems.append(
                    f"stage {stage.name!r}: query {result.query_id!r} traces a gold quote "
                    "it does not have"
                )
                break
            bad = [m for m, v in result.scores.items() if not math.isfinite(v)]
            if bad:
                problems.append(
                    f"stage {stage.name!r}: query {result.query_id!r} has a non-finite {bad[0]}"
                )
                break
    return problems


def _bounded(metric: str) -> bool:
    """Every metric groundkit defines lies in [0, 1]; an unknown name is left alone."""
    try:
        parse_metric(metric)
    except JudgmentError:
        return False
    return True


def _stage_problems(stage: StageReport) -> list[str]:
    seen: set[str] = set()
    for result in stage.queries:
        if result.query_id in seen:
            return [f"stage {stage.name!r}: query {result.query_id!r} is listed twice"]
        seen.add(result.query_id)
        for metric, value in result.scores.items():
            if _bounded(metric) and not (-_TOLERANCE <= value <= 1.0 + _TOLERANCE):
                return [
                    f"stage {stage.name!r}: query {result.query_id!r} has {metric} = {value!r}, "
                    "outside [0, 1]"
                ]
    for metric, aggregate in stage.aggregates.items():
        values = [r.scores[metric] for r in stage.queries if metric in r.scores]
        if not stage.queries or len(values) != len(stage.queries):
            continue
        mean = math.fsum(values) / len(values)
        if aggregate.query_count != len(values) or abs(aggregate.mean - mean) > _TOLERANCE:
            return [
                f"stage {stage.name!r}: the aggregate {metric} ({aggregate.mean!r} over "
                f"{aggregate.query_count} queries) is not the mean of its per-query scores "
                f"({mean!r} over {len(values)})"
            ]
        if not (aggregate.low - _TOLERANCE <= aggregate.mean <= aggregate.high + _TOLERANCE):
            return [f"stage {stage.name!r}: the interval of {metric} does not hold its mean"]
    return []


def _column(stage: StageReport, metric: str) -> dict[str, float] | None:
    column = {r.query_id: r.scores[metric] for r in stage.queries if metric in r.scores}
    return column if column and len(column) == len(stage.queries) else None


def _comparison_problems(report: EvalReport) -> list[str]:
    alpha = 1.0 - report.run.bootstrap.confidence_level
    baseline = report.stages[0]
    for stage in report.stages[1:]:
        for c in stage.comparisons:
            where = f"stage {stage.name!r}: the comparison on {c.metric}"
            base, cand = _column(baseline, c.metric), _column(stage, c.metric)
            if base is not None and cand is not None and base.keys() == cand.keys():
                effect = math.fsum(cand[q] - base[q] for q in base) / len(base)
                if abs(effect - c.effect) > _TOLERANCE:
                    return [
                        f"{where} says the difference is {c.effect!r}; the per-query scores "
                        f"give {effect!r}"
                    ]
            if not (c.low - _TOLERANCE <= c.effect <= c.high + _TOLERANCE):
                return [f"{where}: its interval does not hold its difference"]
            claimed = c.decision if c.decision is not None else c.verdict
            if c.decision is not None and c.verdict != (
                c.decision if c.decision in ("better", "worse") else "inconclusive"
            ):
                return [f"{where}: verdict {c.verdict!r} contradicts decision {c.decision!r}"]
            adjusted = c.p_adjusted if c.p_adjusted is not None else c.p_holm
            if claimed == "better" and not (c.low > 0.0 and adjusted < alpha):
                return [f"{where} says 'better' without an interval above zero and p < {alpha:g}"]
            if claimed == "worse" and not (c.high < 0.0 and adjusted < alpha):
                return [f"{where} says 'worse' without an interval below zero and p < {alpha:g}"]
    return []
