"""What ``grk eval adjudicate`` adds to a report (schema 1.3): scores beside the strict ones.

Adjudication judges the top-k hits that touch no gold with a relevance judge; a hit the judge
finds relevant counts as gold in the *adjudicated* scores only. The strict scores, aggregates
and comparisons are never changed. Since schema 2.0 the adjudication says whether the judge
was calibrated on this eval set (a calibration card for the same judge beside the report) and
carries the card's agreement figures.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from groundkit.judgments.report._statistics import MetricAggregate, StageComparison

__all__ = [
    "AdjudicatedStage",
    "AdjudicationInfo",
    "CalibrationFigures",
    "CalibrationStatus",
    "RateFigure",
]


_RATE_TOLERANCE = 1e-9  # the estimate is a float division of the counts


class CalibrationStatus(StrEnum):
    """Whether adjudicated scores rest on a judge calibrated on this eval set."""

    UNCALIBRATED = "uncalibrated"
    CALIBRATED = "calibrated"


class RateFigure(BaseModel):
    """A rate of a calibration sample with its interval.

    Attributes:
        successes: Items the judge got right in the stratum.
        n: Items of the stratum the judge decided.
        estimate: ``successes / n`` (``None`` when ``n`` is 0).
        low: Lower bound of the interval (``None`` when ``n`` is 0).
        high: Upper bound (``None`` when ``n`` is 0).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    successes: int = Field(ge=0)
    n: int = Field(ge=0)
    estimate: float | None = Field(default=None, ge=0.0, le=1.0)
    low: float | None = Field(default=None, ge=0.0, le=1.0)
    high: float | None = Field(default=None, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _consistent(self) -> RateFigure:
        # A rate read back (a report, a calibration card) says what its counts say.
        if self.successes > self.n:
            raise ValueError(f"{self.successes} successes out of {self.n}")
        figures = (self.estimate, self.low, self.high)
        if self.n == 0:
            if any(value is not None for value in figures):
                raise ValueError("a rate of no items has no estimate or interval")
            return self
        if self.estimate is None or self.low is None or self.high is None:
            raise ValueError(f"a rate of {self.n} items needs its estimate and interval")
        if abs(self.estimate - self.successes / self.n) > _RATE_TOLERANCE:
            raise ValueError(f"estimate {self.estimate!r} is not {self.successes}/{self.n}")
        tolerance = _RATE_TOLERANCE  # Wilson's bounds round to within an ulp of 0 and 1
        if not self.low - tolerance <= self.estimate <= self.high + tolerance:
            raise ValueError("the interval does not hold the estimate")
        return self


class CalibrationFigures(BaseModel):
    """How well a judge agrees with the gold on a calibration sample.

    Attributes:
        kappa: Cohen's kappa of the judge's decision and the sample's label (``None`` when
            undefined: every decided item in one class for both).
        agreement: Share of decided items where the judge agrees with the label.
        tpr: True-positive rate: hits touching gold judged relevant.
        tnr: True-negative rate: presumed negatives judged not relevant.
        confidence: Coverage of the rates' Wilson intervals.
        method: The interval's method.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kappa: float | None = Field(default=None, ge=-1.0, le=1.0)
    agreement: float | None = Field(default=None, ge=0.0, le=1.0)
    tpr: RateFigure
    tnr: RateFigure
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    method: str = "wilson"


class AdjudicatedStage(BaseModel):
    """A stage's adjudicated figures (per-query values are ``QueryResult.adjudicated_scores``).

    Attributes:
        aggregates: Metric name to mean and interval, with judged-relevant hits as gold.
        comparisons: Differences from the baseline on the adjudicated scores.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    aggregates: dict[str, MetricAggregate] = Field(default_factory=dict)
    comparisons: list[StageComparison] = Field(default_factory=list)


class AdjudicationInfo(BaseModel):
    """How a report was adjudicated and what it cost.

    Attributes:
        judge: The judge (``http:MODEL``, ``recorded:FILE``, ``python:MODULE:FUNCTION``).
        prompt_version: Version of the judge's prompt.
        stages: The stages whose hits were judged.
        k: Hits judged per query: the first ``k`` of each judged stage.
        repeats: Calls per hit; the majority decides.
        relevant_grade: Lowest majority grade counted as relevant.
        judged_hits: Distinct (query, span) hits judged.
        relevant: Of those, judged relevant.
        not_relevant: Judged not relevant.
        undecided: Every call failed (they count neither way).
        calls: Calls made in the run that wrote the report (cached ones excluded).
        cached: Calls answered from the cache.
        failed: Calls that failed.
        tokens: Tokens the judge reported.
        seconds: Seconds spent judging.
        calibration_status: Whether a calibration card for this judge (same judge, model
            and prompt version) was found beside the report (schema 2.0; older reports read
            as uncalibrated).
        calibration_card: The card's file name, when calibrated.
        calibration: The card's figures, when calibrated.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge: str
    prompt_version: str
    stages: list[str]
    k: int = Field(gt=0)
    repeats: int = Field(gt=0)
    relevant_grade: int = Field(ge=0, le=3)
    judged_hits: int = Field(ge=0)
    relevant: int = Field(ge=0)
    not_relevant: int = Field(ge=0)
    undecided: int = Field(ge=0)
    calls: int = Field(ge=0)
    cached: int = Field(ge=0)
    failed: int = Field(ge=0)
    tokens: int = Field(ge=0)
    seconds: float = Field(ge=0.0)
    calibration_status: CalibrationStatus = CalibrationStatus.UNCALIBRATED
    calibration_card: str | None = None
    calibration: CalibrationFigures | None = None
