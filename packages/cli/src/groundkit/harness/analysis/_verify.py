"""A written report's comparisons, recomputed from its own per-query scores and compared.

Core checks that a report agrees with itself (a verdict with its own interval and p-value,
an aggregate with its mean); only the engine can say whether the stored comparison is the
one those scores give. A hand-edited verdict, p-value or interval is caught here, by the
same functions the run used (:func:`report_family`, :func:`stage_comparison`).
"""

from __future__ import annotations

import importlib.metadata
import math
from typing import Any

from groundkit.harness.analysis._stats import (
    holm_by_member,
    report_ablation_family,
    report_family,
    stage_comparison,
)
from groundkit.judgments import EvalReport
from groundkit.judgments.report import StageComparison

__all__ = ["comparison_problem"]

# Monte Carlo p-values and intervals are reproduced bit for bit from the recorded seed; the
# tolerance only absorbs the last bits of a float written to JSON and read back.
_RELATIVE = 1e-9
_ABSOLUTE = 1e-12


def comparison_problem(report: EvalReport) -> str | None:
    """The first stored comparison the report's per-query scores do not reproduce, if any.

    A report written by another version of groundkit-stats-bootstrap is not checked: its engine may
    draw its Monte Carlo samples differently.

    Returns:
        A sentence naming the stage, metric and field, or ``None``.
    """
    if not _same_engine(report):
        return None
    results = report_family(report)
    fresh = {
        (result.label, result.metric): stage_comparison(result, holm, baseline=report.baseline.name)
        for result, holm in zip(results, holm_by_member(results), strict=True)
    }
    for stage in report.stages:
        for stored in stage.comparisons:
            again = fresh.get((stage.name, stored.metric))
            if again is None:
                return (
                    f"stage {stage.name!r} stores a comparison on {stored.metric} that the "
                    "report's stages and settings do not make"
                )
            field = _first_difference(stored, again)
            if field is not None:
                name, was, now = field
                return (
                    f"stage {stage.name!r}, {stored.metric}: the stored {name} is {was!r} but "
                    f"the report's own per-query scores give {now!r}"
                )
    return _ablation_problem(report)


def _ablation_problem(report: EvalReport) -> str | None:
    """The first stored ablation comparison the report's scores do not reproduce, if any."""
    ran = {s.name for s in report.stages if s.error is None}
    for row in report.ablation:
        needed = [row.stage] + ([row.component] if row.source == "stage" else [])
        missing = [name for name in needed if name not in ran]
        if missing:
            return (
                f"ablation row {row.stage!r} / {row.component!r} names {missing[0]!r}, which "
                "is not a stage of the report that ran"
            )
    decided = report_ablation_family(report)
    holm = iter(holm_by_member([result for results in decided for result in results]))
    for row, results in zip(report.ablation, decided, strict=True):
        fresh = {
            r.metric: stage_comparison(r, next(holm), baseline=row.component, candidate=row.stage)
            for r in results
        }
        for stored in row.comparisons:
            again = fresh.get(stored.metric)
            where = f"ablation row {row.stage!r} / {row.component!r}, {stored.metric}"
            if again is None:
                return f"{where}: a comparison the report's settings do not make"
            field = _first_difference(stored, again)
            if field is not None:
                name, was, now = field
                return (
                    f"{where}: the stored {name} is {was!r} but the report's own per-query "
                    f"scores give {now!r}"
                )
    return None


def _same_engine(report: EvalReport) -> bool:
    recorded = report.run.package_versions.get("groundkit-stats-bootstrap")
    try:
        installed = importlib.metadata.version("groundkit-stats-bootstrap")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - cli depends on it
        return False
    return recorded == installed


def _first_difference(
    stored: StageComparison, again: StageComparison
) -> tuple[str, Any, Any] | None:
    was, now = stored.model_dump(), again.model_dump()
    # The verdict first: it is what an edit most likely changed, and what a reader acts on.
    for name in ("verdict", "decision", *was):
        if not _same(was[name], now.get(name)):
            return name, was[name], now.get(name)
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=_RELATIVE, abs_tol=_ABSOLUTE)
    return bool(a == b)
