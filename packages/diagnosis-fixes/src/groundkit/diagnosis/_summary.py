"""Predicted against measured, for every fix tried: how far the predictions can be trusted."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groundkit.diagnosis._models import FixName
from groundkit.diagnosis._record import Caution, TrackRecord

__all__ = ["TrackRow", "TrackSummary", "summarise_track_record"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class TrackRow(BaseModel):
    """One fix tried: its prediction beside its measurement.

    Attributes:
        created_at: When it was measured.
        stage: The diagnosed stage (A).
        stage_b: The stage with the fix (B).
        fix: The fix.
        how: ``named`` or ``inferred``.
        metric: The metric of the prediction.
        expected: Predicted gain.
        ceiling: Predicted ceiling.
        reference: Predicted gain at another stage's rate.
        exact: The prediction was an exact replay.
        measured: Measured gain B − A.
        low: Low end of its interval.
        high: High end of its interval.
        confidence_level: Coverage of the interval.
        verdict: The comparison's verdict.
        inside: The expected gain lies within the measured interval (``None``: no expected).
        error: ``measured − expected`` (``None``: no expected).
    """

    model_config = _FROZEN
    created_at: str
    stage: str | None
    stage_b: str | None
    fix: FixName
    how: Literal["named", "inferred"]
    metric: str
    expected: float | None
    ceiling: float | None
    reference: float | None
    exact: bool
    measured: float
    low: float
    high: float
    confidence_level: float
    verdict: str
    inside: bool | None
    error: float | None


class TrackSummary(BaseModel):
    """The whole record, summarised.

    Attributes:
        path: The record file.
        rows: One row per measurement, in file order.
        predictions: Prediction lines read.
        predicted_fixes: Fixes predicted with a positive expected gain.
        untried: Of those, how many were never measured.
        tried: Measurements read.
        inside: Measurements whose expected gain lies within the measured interval.
        with_expected: Measurements whose prediction had an expected gain.
        mean_absolute_error: Mean ``|measured − expected|`` over those (``None``: none).
        mean_error: Mean ``measured − expected`` (positive: predictions too cautious).
        cautions: Lines skipped.
    """

    model_config = _FROZEN
    path: str
    rows: list[TrackRow] = Field(default_factory=list)
    predictions: int
    predicted_fixes: int
    untried: int
    tried: int
    inside: int
    with_expected: int
    mean_absolute_error: float | None
    mean_error: float | None
    cautions: list[Caution] = Field(default_factory=list)


def summarise_track_record(record: TrackRecord) -> TrackSummary:
    """Pair every measurement with its prediction and summarise how close they came.

    Args:
        record: A record read with :func:`~groundkit.diagnosis.read_track_record`.

    Returns:
        The summary (rows in file order).
    """
    stages = {p.id: p.stage for p in record.predictions}
    rows: list[TrackRow] = []
    for m in record.measurements:
        expected = m.predicted.expected
        rows.append(
            TrackRow(
                created_at=m.created_at,
                stage=m.a.stage or stages.get(m.prediction_id),
                stage_b=m.b.stage,
                fix=m.fix,
                how=m.how,
                metric=m.a.metric if m.a.metric == m.b.metric else f"{m.b.metric} − {m.a.metric}",
                expected=expected,
                ceiling=m.predicted.ceiling,
                reference=m.predicted.reference,
                exact=m.predicted.exact,
                measured=m.measured,
                low=m.low,
                high=m.high,
                confidence_level=m.confidence_level,
                verdict=m.verdict,
                inside=m.inside,
                error=None if expected is None else m.measured - expected,
            )
        )
    tried = {(m.prediction_id, m.fix) for m in record.measurements}
    predicted = [
        (p.id, f.name)
        for p in record.predictions
        for f in p.fixes
        if f.expected is not None and f.expected > 0
    ]
    errors = [row.error for row in rows if row.error is not None]
    return TrackSummary(
        path=record.path,
        rows=rows,
        predictions=len(record.predictions),
        predicted_fixes=len(predicted),
        untried=sum(1 for key in predicted if key not in tried),
        tried=len(rows),
        inside=sum(1 for row in rows if row.inside),
        with_expected=len(errors),
        mean_absolute_error=math.fsum(abs(e) for e in errors) / len(errors) if errors else None,
        mean_error=math.fsum(errors) / len(errors) if errors else None,
        cautions=list(record.cautions),
    )
