"""The report's ablation rows (schema 1.4): each part of a fused or re-ordered stage alone.

A hybrid stage's row for one of its inputs, a rerank stage's row for the stage it re-orders,
and, for a fusion of three or more stages, the fusion of all but one of them: each computed
once in the run from the ranked lists its stages already produced (nothing is searched again)
and compared with the whole stage by the verdict engine. The differences are *whole minus
component* and form a family of their own (see :class:`AblationRow`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groundkit.judgments.report._statistics import MetricAggregate, StageComparison

__all__ = ["AblationRow"]


class AblationRow(BaseModel):
    """One component of a stage, scored beside the whole stage.

    Attributes:
        stage: The whole stage (a hybrid or rerank stage of the report).
        component: The component's label: a stage of the report (``source == "stage"``) or
            ``"<stage> without <inputs>"`` for a fusion replayed without some inputs.
        source: ``stage``: the component is a stage of the report (its per-query scores are
            that stage's); ``replay``: a fusion recomputed from the run's ranked lists.
        removed: What the whole has and the component has not: names of the stages left out
            (a rerank stage's own name when its re-ordering is what is removed).
        inputs: The fused stages of a replayed fusion (empty for a stage).
        k: The fusion constant of a replayed fusion (the whole hybrid's own).
        aggregates: Mean and interval of each headline metric of the component.
        scores: Per-query scores of a replayed component (query id -> metric -> value);
            a stage's are in the stage.
        comparisons: Whole minus component on each headline metric, decided as one family of
            every ablation row (``baseline`` is the component, ``candidate`` the whole).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    stage: str
    component: str
    source: Literal["stage", "replay"]
    removed: list[str] = Field(default_factory=list)
    inputs: list[str] = Field(default_factory=list)
    k: int | None = Field(default=None, gt=0)
    aggregates: dict[str, MetricAggregate] = Field(default_factory=dict)
    scores: dict[str, dict[str, float]] = Field(default_factory=dict)
    comparisons: list[StageComparison] = Field(default_factory=list)
