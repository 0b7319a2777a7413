"""A sweep's summary: each arm's figures, its comparisons with the baseline, the Pareto front.

The figures are read from the arms' reports (the headline metric's mean and interval, the
characters of context the candidate makes a reader read, the latency p95 of the stages it is
built from); the comparisons are one family over every arm (:func:`compare_with_baseline`, the
rule of a report's stage comparisons); the front is the set of arms no other arm beats on all
three of (metric ↑, context characters ↓, latency p95 ↓).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groundkit.harness._errors import HarnessError
from groundkit.harness.analysis._stats import compare_with_baseline
from groundkit.harness.run._config import BASELINE_STAGE
from groundkit.judgments import EvalReport, StageReport
from groundkit.judgments.report import StageComparison

__all__ = [
    "SWEEP_SCHEMA_VERSION",
    "SweepPoint",
    "SweepSummary",
    "compared_points",
    "context_chars",
    "load_sweep_summary",
    "pareto_front",
    "pipeline_latency_p95",
]

SWEEP_SCHEMA_VERSION = "1.0"
"""Version of the sweep summary's shape (a minor version only adds fields with defaults)."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class SweepPoint(BaseModel):
    """One point of the sweep: the baseline or an arm.

    Attributes:
        name: The arm's name (``bm25`` for the baseline).
        role: ``baseline`` or ``arm``.
        report: The arm's report, relative to the sweep folder (the baseline's: the first
            arm's, where it is stage zero).
        items: The arm's items file, relative to the sweep folder.
        config_hash: SHA-256 of the arm's run configuration (what resuming compares).
        stages: The stages the candidate is built from (its cost is theirs), candidate last.
        metric_mean: Mean of the sweep's metric over the answerable queries.
        metric_low: Lower end of its interval.
        metric_high: Upper end of its interval.
        context_chars: Mean characters in the candidate's first ``context_k`` hits.
        latency_p95: Sum of the stages' search latency p95 in seconds (an upper bound of the
            pipeline's p95; ``None`` when a stage has none).
        index_seconds: Sum of the stages' index seconds (work shared with an earlier arm is
            not counted again).
        same_as_baseline: The candidate is configured exactly as the baseline (not compared).
        comparisons: The candidate against the baseline, every headline metric.
        verdict: The comparison's verdict on the sweep's metric (``None``: not compared).
        on_front: On the Pareto front.
        resumed: Read from an earlier run's outputs (not recomputed by this one).
        seconds: Seconds this arm's run took, when it ran (``None`` when resumed).
        error: Why the arm has no figures (a stage failed).
    """

    model_config = _FROZEN
    name: str
    role: Literal["baseline", "arm"]
    report: str
    items: str | None = None
    config_hash: str | None = None
    stages: list[str] = Field(default_factory=list)
    metric_mean: float | None = None
    metric_low: float | None = None
    metric_high: float | None = None
    context_chars: float | None = None
    latency_p95: float | None = None
    index_seconds: float | None = None
    same_as_baseline: bool = False
    comparisons: list[StageComparison] = Field(default_factory=list)
    verdict: str | None = None
    on_front: bool = False
    resumed: bool = False
    seconds: float | None = None
    error: str | None = None


class SweepSummary(BaseModel):
    """``sweep.json``: what a sweep found, one point per arm plus the baseline.

    Attributes:
        schema_version: :data:`SWEEP_SCHEMA_VERSION`.
        format: Always ``groundkit-sweep``.
        created_at: When the summary was written (UTC, ISO 8601).
        source: The sweep file, when there was one.
        metric: The headline metric of the front.
        context_k: Hits whose characters count as context read.
        headline_metrics: The metrics every arm is compared on.
        adjustment: Multiplicity control of the family (``holm`` or ``bh``).
        confidence_level: Confidence level of every interval.
        family_size: Decisions in the family (arms compared × decision metrics).
        corpus_fingerprint: The corpus every arm was run on.
        judgments_fingerprint: The judgments every arm was scored on.
        points: The baseline first, then the arms in sweep order.
        front_axes: The axes of the front (``metric``, ``context_chars``, ``latency_p95``).
        front: Names of the points on the Pareto front.
        shared: Work done by this run: ``chunkings``, ``bm25_indexes``, ``embeddings``.
        ran: Arms this run computed.
        skipped: Arms read from complete outputs of an earlier run with the same config.
        seconds: Seconds this run took.
        package_versions: Versions of the packages the arms ran with.
    """

    model_config = _FROZEN
    schema_version: str = SWEEP_SCHEMA_VERSION
    format: Literal["groundkit-sweep"] = "groundkit-sweep"
    created_at: str
    source: str | None = None
    metric: str
    context_k: int = Field(gt=0)
    headline_metrics: list[str]
    adjustment: str
    confidence_level: float
    family_size: int = Field(ge=0)
    corpus_fingerprint: str
    judgments_fingerprint: str
    points: list[SweepPoint]
    front_axes: list[str] = Field(
        default_factory=lambda: ["metric", "context_chars", "latency_p95"]
    )
    front: list[str]
    shared: dict[str, int] = Field(default_factory=dict)
    ran: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    seconds: float = Field(ge=0.0)
    package_versions: dict[str, str] = Field(default_factory=dict)

    def point(self, name: str) -> SweepPoint:
        """The point called ``name``.

        Raises:
            HarnessError: No point has that name.
        """
        for point in self.points:
            if point.name == name:
                return point
        raise HarnessError(f"the sweep has no arm named {name!r}")


def load_sweep_summary(path: str | Path) -> SweepSummary:
    """Read a ``sweep.json``.

    Raises:
        HarnessError: Unreadable, or not a sweep summary.
    """
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        return SweepSummary.model_validate(data)
    except (OSError, ValueError) as error:
        raise HarnessError(f"not a readable sweep summary: {error}", path=file) from None


def context_chars(stage: StageReport, query_count: int, k: int) -> float:
    """Mean characters of the stage's first ``k`` hits over ``query_count`` queries."""
    if query_count <= 0:
        return 0.0
    total = sum(hit.end - hit.start for result in stage.queries for hit in result.hits[:k])
    return total / query_count


def pipeline_latency_p95(report: EvalReport, stages: Sequence[str]) -> float | None:
    """Sum of the stages' latency p95 (``None`` when one has none)."""
    total = 0.0
    for name in stages:
        cost = report.stage(name).cost
        if cost is None or cost.latency_p95 is None:
            return None
        total += cost.latency_p95
    return total


def _dominates(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
    # a = (metric, chars, latency): higher metric, fewer characters, lower latency are better.
    no_worse = a[0] >= b[0] and a[1] <= b[1] and a[2] <= b[2]
    return no_worse and (a[0] > b[0] or a[1] < b[1] or a[2] < b[2])


def pareto_front(
    points: Mapping[str, tuple[float, float, float | None]],
    axes: Sequence[str] = ("metric", "context_chars", "latency_p95"),
) -> list[str]:
    """Names of the points no other point dominates on (metric ↑, chars ↓, latency ↓).

    Only the named ``axes`` count (an axis left out is the same for every point). A missing
    latency counts as the worst; equal points are all on the front.
    """
    keyed = {
        name: (
            metric if "metric" in axes else 0.0,
            chars if "context_chars" in axes else 0.0,
            (math.inf if latency is None else latency) if "latency_p95" in axes else 0.0,
        )
        for name, (metric, chars, latency) in points.items()
    }
    return [
        name
        for name, value in keyed.items()
        if not any(_dominates(other, value) for o, other in keyed.items() if o != name)
    ]


def _columns(report: EvalReport, stage: str, metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    order = [q.query_id for q in report.queries if q.answerable]
    scores = {r.query_id: r.scores for r in report.stage(stage).queries}
    return {m: {qid: scores.get(qid, {}).get(m, 0.0) for qid in order} for m in metrics}


def compared_points(
    points: Sequence[SweepPoint],
    reports: Mapping[str, EvalReport],
    metric: str,
    axes: Sequence[str] = ("metric", "context_chars", "latency_p95"),
) -> list[SweepPoint]:
    """The points with their comparisons (one family over every comparable arm) and front.

    ``reports`` maps each arm's name to its report; the baseline's scores are the first
    comparable arm's stage zero (the same stage, with the same settings, in every arm).
    ``metric`` is the sweep's metric, whose verdict each point shows; ``axes`` those of the
    front.
    """
    usable = [p for p in points if p.role == "arm" and p.error is None and p.name in reports]
    if not usable:
        return list(points)
    first = reports[usable[0].name]
    headline = list(first.run.headline_metrics)
    columns = {BASELINE_STAGE: _columns(first, BASELINE_STAGE, headline)}
    candidates = [p.name for p in usable if not p.same_as_baseline]
    for name in candidates:
        columns[name] = _columns(reports[name], name, headline)
    found = compare_with_baseline(
        columns, BASELINE_STAGE, candidates, headline, first.run.bootstrap
    )
    figures = {
        p.name: (p.metric_mean, p.context_chars, p.latency_p95)
        for p in points
        if p.error is None and p.metric_mean is not None and p.context_chars is not None
    }
    front = set(pareto_front(figures, axes))
    out = []
    for point in points:
        comparisons = found.get(point.name, [])
        metric_verdict = [c.verdict for c in comparisons if c.metric == metric]
        out.append(
            point.model_copy(
                update={
                    "comparisons": comparisons,
                    "verdict": metric_verdict[0] if metric_verdict else None,
                    "on_front": point.name in front,
                }
            )
        )
    return out
