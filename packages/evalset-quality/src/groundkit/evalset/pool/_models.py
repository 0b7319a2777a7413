"""The data of a pooled evaluation (``grk eval pool``): strata, sample, estimates, comparisons.

Every model is frozen and JSON-serialisable; :data:`POOL_FORMAT` and :data:`POOL_VERSION`
name the file's format, so a reader can refuse one it does not know.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groundkit.evalset.judge._judge import JudgeUsage
from groundkit.stats import ProportionInterval

__all__ = [
    "POOL_FORMAT",
    "POOL_VERSION",
    "PoolComparison",
    "PoolItem",
    "PoolReport",
    "PoolStage",
    "PoolStratum",
]

POOL_FORMAT: Literal["groundkit-pool"] = "groundkit-pool"
POOL_VERSION = "1.0"

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class PoolStratum(BaseModel):
    """One stratum: the pool items whose home is a stage's rank band.

    Attributes:
        stage: The home stage (the first stage, in the order given, with the item in its top k).
        band: The rank band of the item in that stage, ``"1-3"``.
        size: Pool items in the stratum (its weight).
        sampled: Items drawn from it.
        decided: Drawn items the judge decided (a failed or split item counts neither way).
        relevant: Decided items judged relevant.
    """

    model_config = _FROZEN

    stage: str
    band: str
    size: int = Field(ge=1)
    sampled: int = Field(ge=0)
    decided: int = Field(ge=0)
    relevant: int = Field(ge=0)


class PoolItem(BaseModel):
    """One sampled pool item and what the judge said of it.

    Attributes:
        item_id: ``query_id|doc|start-end`` (the union span of the hits it merges).
        query_id: The query.
        doc: The document.
        start: Start of the union span (characters; 0 at document level).
        end: Its end.
        stratum: Index into :attr:`PoolReport.strata`.
        ranks: Best rank of the item in each stage that has it in its top k.
        majority: The judge's majority grade (``None``: undecided).
        grades: Every answered repeat's grade.
    """

    model_config = _FROZEN

    item_id: str
    query_id: str
    doc: str
    start: int
    end: int
    stratum: int = Field(ge=0)
    ranks: dict[str, int]
    majority: int | None = None
    grades: list[int] = Field(default_factory=list)


class PoolStage(BaseModel):
    """One stage's estimates on the pool.

    Attributes:
        stage: The stage's name in the pool (``LABEL:stage`` when several reports are pooled).
        report: The label of the report it comes from.
        hits: Distinct pool items in its top k (over all queries).
        sampled: Of those, items in the judged sample and decided.
        precision: Share of its top-k items that are relevant (pooled over queries), with a
            stratified Wilson interval (``None``: none of its items was decided).
        recall: Its relevant items over the pool's relevant items, with a stratified Wilson
            interval (``None``: no relevant item in the sample).
    """

    model_config = _FROZEN

    stage: str
    report: str
    hits: int = Field(ge=0)
    sampled: int = Field(ge=0)
    precision: ProportionInterval | None = None
    recall: ProportionInterval | None = None


class PoolComparison(BaseModel):
    """A stage against the first one on the judged sample, by the stats engine's verdict.

    Items are the decided sampled items; a stage finds an item when the item is relevant and
    in its top k. The difference is in recall over the pool's relevant items, each sampled
    item standing for the items of its stratum (strata weighted by their sizes, so the
    estimate is the whole pool's, not the sample's); the gate is Student's t on its linearised
    standard error, family-wise (Holm) over every comparison
    (:func:`~groundkit.stats.compare_stratified`).

    Attributes:
        stage: The compared stage.
        baseline: The stage it is compared with (the first one).
        items: Paired items.
        gained: Relevant items only the compared stage found.
        lost: Relevant items only the baseline found.
        difference: Estimated pooled recall of the stage minus the baseline's.
        low: Lower end of the interval of the difference.
        high: Upper end.
        p_value: The exact gate's p-value.
        p_adjusted: The same, adjusted over the family.
        verdict: ``better``, ``worse``, ``inconclusive`` or ``too few queries``.
    """

    model_config = _FROZEN

    stage: str
    baseline: str
    items: int
    gained: int
    lost: int
    difference: float
    low: float
    high: float
    p_value: float
    p_adjusted: float
    verdict: str


class PoolReport(BaseModel):
    """A pooled evaluation: precision@k and recall relative to the pool without gold.

    Attributes:
        format: :data:`POOL_FORMAT`.
        version: :data:`POOL_VERSION`.
        reports: Label → path (or name) of each pooled report.
        level: ``chunk`` (hits merge when their spans overlap) or ``document``.
        k: The cutoff pooled.
        bands: Upper rank of each band but the last (``[3]``: bands 1-3 and 4-k).
        requested: Sample size asked for.
        seed: Seed of the draw.
        pool_size: Distinct items in the pool.
        queries: Queries with at least one pooled item.
        judge: The judge's name (model or recorded file).
        prompt_version: The judge prompt's version.
        repeats: Calls per item; the majority decides.
        relevant_grade: Lowest majority grade counted as relevant.
        pool_relevant: Share of the pool that is relevant (stratified Wilson).
        strata: The strata, in order (stage, then band).
        stages: Each stage's estimates, in order.
        comparisons: Each stage after the first against the first.
        sample: The sampled items.
        usage: Calls, cached calls, failures, tokens and seconds of the judging.
        notes: What the figures cannot say.
    """

    model_config = _FROZEN

    format: Literal["groundkit-pool"] = POOL_FORMAT
    version: str = POOL_VERSION
    reports: dict[str, str]
    level: Literal["chunk", "document"]
    k: int = Field(ge=1)
    bands: list[int]
    requested: int = Field(ge=1)
    seed: int
    pool_size: int = Field(ge=0)
    queries: int = Field(ge=0)
    judge: str
    prompt_version: str
    repeats: int = Field(ge=1)
    relevant_grade: int
    pool_relevant: ProportionInterval | None = None
    strata: list[PoolStratum]
    stages: list[PoolStage]
    comparisons: list[PoolComparison] = Field(default_factory=list)
    sample: list[PoolItem] = Field(default_factory=list)
    usage: JudgeUsage
    notes: list[str] = Field(default_factory=list)
