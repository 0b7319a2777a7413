"""The track record's entries: predictions, measurements and the cautions of reading them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from groundkit.diagnosis._models import FixName, StageSnapshot
from groundkit.stats import Verdict

__all__ = [
    "Caution",
    "MeasuredSide",
    "Measurement",
    "PredictedFix",
    "Prediction",
    "Rows",
    "TrackRecord",
]


_FROZEN = ConfigDict(frozen=True, extra="forbid")

Rows = Mapping[str, Mapping[str, float]]
"""Per-query rows of one stage: query id to metric name to value."""


class _Model(BaseModel):
    model_config = _FROZEN


class PredictedFix(_Model):
    """A fix as predicted for a stage.

    Attributes:
        name: The fix.
        rank: Its rank in the prediction.
        misses: Misses it addresses (``None``: not measurable).
        expected: Expected gain in recall@k.
        ceiling: Gain if every one of its misses were found.
        reference: Gain at another stage's rate.
        reference_stage: That stage.
        exact: Replayed exactly from the recorded rankings.
        basis: How ``expected`` was computed.
        new_k: For raise-k, the raised cutoff (the measurement compares B's recall@new_k).
        partner: For hybrid-fusion, the stage the replay fused the diagnosed stage with (a
            measurement must fuse exactly these two; ``None`` in lines written before it was
            recorded).
    """

    name: FixName
    rank: int
    misses: int | None
    expected: float | None
    ceiling: float | None
    reference: float | None = None
    reference_stage: str | None = None
    exact: bool = False
    basis: str
    new_k: int | None = None
    partner: str | None = None


class Prediction(_Model):
    """A prediction line.

    Attributes:
        record: Always ``"prediction"``.
        format: Line format version.
        id: Identifier (hash of the rest of the line).
        created_at: ISO-8601 UTC time of the diagnosis.
        report: The report diagnosed.
        stage: The stage.
        level: The report's level.
        k: The cutoff.
        metric: ``recall@k``.
        query_count: Answerable queries.
        recall: The stage's recall@k.
        items_hash: Hash of the stage's per-query recall@k.
        config_hash: Hash of ``config``.
        config: The stage's configuration.
        fixes: The ranked fixes.
    """

    record: Literal["prediction"] = "prediction"
    format: Literal[1] = 1
    id: str
    created_at: str
    report: str | None = None
    stage: str
    level: str
    k: int
    metric: str
    query_count: int
    recall: float
    items_hash: str
    config_hash: str
    config: StageSnapshot
    fixes: list[PredictedFix]

    def fix(self, name: str) -> PredictedFix | None:
        """The predicted fix called ``name``, if predicted."""
        return next((f for f in self.fixes if f.name == name), None)


class MeasuredSide(_Model):
    """One side of a measurement.

    Attributes:
        path: Its items file.
        stage: Its stage name.
        items_hash: Hash of its per-query recall@k (the prediction's metric).
        config: Its stage configuration, when the items file records one.
        metric: The metric measured on this side.
        mean: Its mean.
    """

    path: str | None = None
    stage: str | None = None
    items_hash: str | None = None
    config: dict[str, Any] | None = None
    metric: str
    mean: float


class Measurement(_Model):
    """A measurement line: what B measured after applying a predicted fix to A.

    Attributes:
        record: Always ``"measurement"``.
        format: Line format version.
        created_at: ISO-8601 UTC time of the comparison.
        prediction_id: The prediction it answers.
        fix: The fix B applied.
        how: ``named`` (``--applied``) or ``inferred`` (from the configurations).
        a: The diagnosed run.
        b: The run with the fix.
        query_count: Paired queries.
        measured: Mean difference B − A.
        low: Low end of its interval.
        high: High end of its interval.
        confidence_level: Coverage of the interval.
        p_value: The gating test's p-value.
        verdict: ``better``, ``worse``, ``inconclusive``, ``equivalent`` or
            ``too few queries`` (the verdict engine's).
        predicted: The prediction for this fix.
    """

    record: Literal["measurement"] = "measurement"
    format: Literal[1] = 1
    created_at: str
    prediction_id: str
    fix: FixName
    how: Literal["named", "inferred"]
    a: MeasuredSide
    b: MeasuredSide
    query_count: int
    measured: float
    low: float
    high: float
    confidence_level: float
    p_value: float
    verdict: Verdict
    predicted: PredictedFix

    @property
    def inside(self) -> bool | None:
        """Whether the expected gain lies within the measured interval (``None``: none)."""
        expected = self.predicted.expected
        return None if expected is None else self.low <= expected <= self.high


_ENTRY: TypeAdapter[Prediction | Measurement] = TypeAdapter(
    Annotated[Prediction | Measurement, Field(discriminator="record")]
)


class Caution(_Model):
    """A line of the record that could not be read (it is skipped, and said so).

    Attributes:
        path: The record file.
        line: 1-based line number.
        reason: What is wrong with it.
    """

    path: str
    line: int
    reason: str

    @property
    def message(self) -> str:
        """``CAUTION: <path>:<line>: <reason>; line skipped``."""
        return f"CAUTION: {self.path}:{self.line}: {self.reason}; line skipped"


class TrackRecord(_Model):
    """Every readable line of a record file, and a caution for every other one.

    Attributes:
        path: The file.
        predictions: Prediction lines, in file order.
        measurements: Measurement lines, in file order.
        cautions: Lines skipped, with their numbers.
    """

    path: str
    predictions: list[Prediction] = Field(default_factory=list)
    measurements: list[Measurement] = Field(default_factory=list)
    cautions: list[Caution] = Field(default_factory=list)

    def prediction(self, prediction_id: str) -> Prediction | None:
        """The prediction with that id."""
        return next((p for p in self.predictions if p.id == prediction_id), None)
