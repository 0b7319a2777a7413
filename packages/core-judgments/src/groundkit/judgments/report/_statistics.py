"""The report's statistics: its settings, each metric's interval, each stage's comparisons.

These fields are written by the verdict engine (``groundkit.stats``, through the harness) and
read by every later tool; the report never computes statistics itself. Fields added in schema
1.1 are optional, so 1.0 reports still read.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groundkit.judgments._numbers import RealNumber, WholeNumber
from groundkit.judgments.report._defaults import (
    DEFAULT_MULTIPLICITY,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MAX_RESAMPLES,
)

__all__ = ["MAX_RESAMPLES", "BootstrapSettings", "MetricAggregate", "StageComparison"]


Decision = Literal["better", "worse", "inconclusive", "equivalent", "too few queries"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BootstrapSettings(_Model):
    """Settings of every interval and comparison in the report.

    Attributes:
        resamples: Random sign patterns (and bootstrap resamples) where a test or interval
            cannot be computed exactly (1 to :data:`MAX_RESAMPLES`).
        seed: Seed of every random step (a non-negative integer).
        confidence_level: Two-sided confidence level of the intervals; alpha = 1 − it.
        multiplicity: Family-wise control over every stage × headline metric: ``holm``
            (the chance of any false claim stays at alpha) or ``bh`` (Benjamini–Hochberg: the
            expected share of false claims among claims stays at alpha).
        primary_metric: When set, only this metric decides (the family is the stages on it);
            the other headline metrics are shown as guardrails.
        equivalence_margin: Margin of the equivalence test (TOST), or None for no test.
        power: Power the detection limits are computed for.
    """

    resamples: WholeNumber = Field(default=DEFAULT_RESAMPLES, gt=0, le=MAX_RESAMPLES)
    seed: WholeNumber = Field(default=DEFAULT_SEED, ge=0)
    confidence_level: RealNumber = Field(default=0.95, gt=0.0, lt=1.0)
    multiplicity: Literal["holm", "bh"] = DEFAULT_MULTIPLICITY
    primary_metric: str | None = None
    equivalence_margin: RealNumber | None = Field(default=None, gt=0.0, le=1.0, allow_inf_nan=False)
    power: RealNumber = Field(default=0.8, gt=0.0, lt=1.0)


class MetricAggregate(_Model):
    """Mean of a metric over the answerable queries with its interval.

    Attributes:
        mean: Mean over answerable queries (missing queries count as zero).
        low: Lower end of the interval.
        high: Upper end of the interval.
        query_count: Number of queries averaged.
        method: How the interval was computed (``clopper-pearson``, ``t``, ``betting``;
            None in 1.0 reports, which used a percentile bootstrap).
        caution: Why the interval's coverage is not assured, when it is not.
    """

    mean: float
    low: float
    high: float
    query_count: int = Field(ge=0)
    method: str | None = None
    caution: str | None = None


class StageComparison(_Model):
    """A stage against the baseline on one metric, decided by the verdict engine.

    Attributes:
        metric: Metric name.
        baseline: Baseline stage name.
        candidate: This stage's name.
        effect: Mean per-query difference, candidate minus baseline.
        low: Lower end of the interval on the difference.
        high: Upper end of the interval on the difference.
        p_value: Two-sided p-value of the gate (exact McNemar or sign-flip test).
        p_holm: Holm-adjusted p-value over the report's family.
        verdict: ``better``, ``worse`` or ``inconclusive`` (``decision`` says more).
        decision: ``better``, ``worse``, ``inconclusive``, ``equivalent`` or
            ``too few queries`` (None in 1.0 reports).
        role: ``decision`` (a claim under family-wise control) or ``guardrail``.
        interval_method: ``tango``, ``t``, ``betting`` or ``none``.
        interval_caution: Why the interval's coverage is not assured, when it is not.
        test: ``exact McNemar``, ``exact sign-flip`` or ``Monte Carlo sign-flip``.
        p_value_standard_error: Monte Carlo standard error of ``p_value`` (0 when exact).
        p_adjusted: ``p_value`` adjusted by the report's multiplicity method.
        adjustment: ``holm``, ``bh`` or ``none`` (guardrails).
        family_size: Decisions in the family.
        minimum_queries: Fewest queries with which the family could reach any verdict.
        detection_limit: Smallest true difference detected with the stated power at the
            family's level (None: none at this n).
        detection_caution: Why the limit's power is not assured, when it is not.
        power: Power of the detection limit.
        gained: Queries better in the candidate.
        lost: Queries worse in the candidate.
        ties: Queries equal in both.
        paired_t_p_value: Student's paired t-test p-value (reported, never the gate).
        effect_size: Cohen's d_z (mean difference over the differences' SD).
        effect_size_low: Lower end of d_z's interval.
        effect_size_high: Upper end.
        relative_change: Candidate mean over baseline mean, minus one.
        relative_change_low: Lower end of Fieller's interval.
        relative_change_high: Upper end.
        equivalence_margin: Margin of the equivalence test, when one was run.
        equivalence_p_value: Its p-value (TOST), adjusted over the family.
        equivalent: Whether equivalence within the margin was shown.
    """

    metric: str
    baseline: str
    candidate: str
    effect: float
    low: float
    high: float
    p_value: float = Field(gt=0.0, le=1.0)
    p_holm: float = Field(gt=0.0, le=1.0)
    verdict: Literal["better", "worse", "inconclusive"]
    decision: Decision | None = None
    role: Literal["decision", "guardrail"] = "decision"
    interval_method: str | None = None
    interval_caution: str | None = None
    test: str | None = None
    p_value_standard_error: float | None = Field(default=None, ge=0.0)
    p_adjusted: float | None = Field(default=None, gt=0.0, le=1.0)
    adjustment: Literal["holm", "bh", "none"] | None = None
    family_size: int | None = Field(default=None, ge=1)
    minimum_queries: int | None = Field(default=None, ge=1)
    detection_limit: float | None = Field(default=None, gt=0.0)
    detection_caution: str | None = None
    power: float | None = Field(default=None, gt=0.0, lt=1.0)
    gained: int | None = Field(default=None, ge=0)
    lost: int | None = Field(default=None, ge=0)
    ties: int | None = Field(default=None, ge=0)
    paired_t_p_value: float | None = Field(default=None, ge=0.0, le=1.0)
    effect_size: float | None = None
    effect_size_low: float | None = None
    effect_size_high: float | None = None
    relative_change: float | None = None
    relative_change_low: float | None = None
    relative_change_high: float | None = None
    equivalence_margin: float | None = Field(default=None, gt=0.0)
    equivalence_p_value: float | None = Field(default=None, ge=0.0, le=1.0)
    equivalent: bool | None = None

    @property
    def outcome(self) -> Decision:
        """What the comparison concludes: ``decision`` when recorded, else ``verdict``."""
        return self.decision if self.decision is not None else self.verdict
