"""What ``grk eval adjudicate`` adds to a report (schema 1.3): scores beside the strict ones.

Adjudication judges the top-k hits that touch no gold with a relevance judge; a hit the judge
finds relevant counts as gold in the *adjudicated* scores only. The strict scores, aggregates
and comparisons are never changed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from groundkit.judgments._report_statistics import MetricAggregate, StageComparison

__all__ = ["AdjudicatedStage", "AdjudicationInfo"]


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
