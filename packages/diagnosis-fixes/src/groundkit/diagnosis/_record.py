"""The track record: predicted gains next to the gains later measured, in one JSON Lines file.

Each line is one complete JSON object:

* a *prediction* (``"record": "prediction"``), appended by ``grk eval diagnose --track-record``:
  the stage, its configuration, the hash of its per-query recall@k (:func:`items_hash`) and
  every fix with its expected gain, ceiling, reference and basis;
* a *measurement* (``"record": "measurement"``), appended by ``grk eval compare A B
  --track-record``: when A's per-query recall@k hashes like a prediction's stage and B applied
  one of its fixes (named with ``--applied``, or inferred when the two stage configurations
  differ only at that fix's knobs), what B measured against A with its interval.

Appends are atomic line writes: the whole line is given to one ``os.write`` on a descriptor
opened with ``O_APPEND``, then ``fsync``-ed, so concurrent writers never interleave and a crash
never leaves half a line followed by a good one. A line that does not parse is reported with
its line number (a :class:`Caution`) and skipped; it is never silently dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import Field, ValidationError

from groundkit.diagnosis._applied import _applies, _fusion_mismatch, infer_applied_fix
from groundkit.diagnosis._errors import DiagnosisError
from groundkit.diagnosis._fixes import fixes as rank_fixes
from groundkit.diagnosis._hashing import canonical_json, items_hash
from groundkit.diagnosis._models import FIXES, Diagnosis, Fix, FixName
from groundkit.diagnosis._record_models import (
    _ENTRY,
    Caution,
    MeasuredSide,
    Measurement,
    PredictedFix,
    Prediction,
    Rows,
    TrackRecord,
    _Model,
)
from groundkit.judgments import JudgmentError
from groundkit.judgments.files import append_line, read_regular_bytes
from groundkit.judgments.report import flatten_stage_config
from groundkit.stats import ItemComparison, compare_items

__all__ = [
    "RECORD_FORMAT",
    "Caution",
    "MeasuredSide",
    "Measurement",
    "MeasurementOutcome",
    "PredictedFix",
    "Prediction",
    "TrackRecord",
    "append_record_line",
    "infer_applied_fix",
    "read_track_record",
    "record_measurement",
    "record_prediction",
]

RECORD_FORMAT = 1
"""Format of the lines this version writes."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def append_record_line(path: str | Path, entry: Prediction | Measurement) -> None:
    """Append one entry as one line, atomically (one ``os.write`` with ``O_APPEND``, fsync).

    If the file ends without a newline (a line cut by a crash elsewhere), the new line starts
    with one, so the damage stays confined to the line already there.

    Raises:
        DiagnosisError: The file cannot be written.
    """
    file = Path(path)
    try:
        append_line(file, canonical_json(entry.model_dump(mode="json")))
    except OSError as exc:
        raise DiagnosisError(
            f"cannot append to the track record: {exc.strerror or exc}", path=file
        ) from None


def _reason(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error.get("loc", ())) or "line"
    return f"not a valid track-record line ({where}: {error.get('msg', 'invalid')})"


def read_track_record(path: str | Path, *, missing_ok: bool = False) -> TrackRecord:
    """Read a record file; unreadable lines become cautions naming their line numbers.

    Args:
        path: The record file.
        missing_ok: Treat a missing file as an empty record instead of an error.

    Raises:
        DiagnosisError: The file is missing (unless ``missing_ok``) or unreadable.
    """
    file = Path(path)
    if not (file.exists() or file.is_symlink()):
        if missing_ok:
            return TrackRecord(path=str(file))
        raise DiagnosisError("track record not found", path=file)
    try:
        raw = read_regular_bytes(file)  # a pipe or a device is refused, never waited on
    except JudgmentError as exc:
        raise DiagnosisError(f"cannot read the track record: {exc.message}", path=file) from None
    predictions: list[Prediction] = []
    measurements: list[Measurement] = []
    cautions: list[Caution] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line.decode("utf-8"))
            entry = _ENTRY.validate_python(data)
        except UnicodeDecodeError:
            cautions.append(Caution(path=str(file), line=number, reason="not UTF-8"))
            continue
        except json.JSONDecodeError as exc:
            reason = f"not JSON ({exc.msg} at column {exc.colno})"
            cautions.append(Caution(path=str(file), line=number, reason=reason))
            continue
        except ValidationError as exc:
            cautions.append(Caution(path=str(file), line=number, reason=_reason(exc)))
            continue
        if isinstance(entry, Prediction):
            predictions.append(entry)
        else:
            measurements.append(entry)
    return TrackRecord(
        path=str(file), predictions=predictions, measurements=measurements, cautions=cautions
    )


def _predicted(fix: Fix, diagnosis: Diagnosis) -> PredictedFix:
    evidence = next(e for e in diagnosis.evidence if e.fix == fix.name)
    return PredictedFix(
        name=fix.name,
        rank=fix.rank,
        misses=fix.misses,
        expected=fix.expected,
        ceiling=fix.ceiling,
        reference=fix.reference,
        reference_stage=fix.reference_stage,
        exact=fix.exact,
        basis=fix.basis,
        new_k=evidence.replay.new_k if evidence.replay is not None else None,
        partner=evidence.replay.other_stage if evidence.replay is not None else None,
    )


def record_prediction(
    path: str | Path,
    diagnosis: Diagnosis,
    ranked: Sequence[Fix] | None = None,
    *,
    created_at: str | None = None,
) -> Prediction:
    """Append a diagnosis's fixes to the record as one prediction line.

    Args:
        path: The record file (created when missing).
        diagnosis: The diagnosis.
        ranked: Its ranked fixes (default: ``fixes(diagnosis)``).
        created_at: Timestamp (default: now, UTC).

    Returns:
        The appended prediction.
    """
    chosen = list(ranked) if ranked is not None else rank_fixes(diagnosis)
    body: dict[str, Any] = {
        "created_at": created_at or _now(),
        "report": diagnosis.report,
        "stage": diagnosis.stage,
        "level": diagnosis.level,
        "k": diagnosis.k,
        "metric": diagnosis.metric,
        "query_count": diagnosis.query_count,
        "recall": diagnosis.recall,
        "items_hash": diagnosis.items_hash,
        "config_hash": diagnosis.config_hash,
        "config": diagnosis.config.model_dump(mode="json"),
        "fixes": [_predicted(fix, diagnosis).model_dump(mode="json") for fix in chosen],
    }
    identifier = hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()[:16]
    prediction = Prediction.model_validate({"id": identifier, **body})
    append_record_line(path, prediction)
    return prediction


# -- measurement ------------------------------------------------------------------------------


class MeasurementOutcome(_Model):
    """What ``record_measurement`` did.

    Attributes:
        status: ``recorded``; ``no-prediction`` (A matches no prediction); ``not-predicted``
            (the named fix was not predicted for A, or B's hybrid does not fuse the stages
            the predicted hybrid-fusion fused); ``undetermined`` (no fix named and none,
            or several, inferred); ``not-measured`` (a metric is missing or the comparison
            failed).
        message: One line for the user.
        measurement: The appended line, when recorded.
        cautions: Unreadable lines of the record.
    """

    status: Literal["recorded", "no-prediction", "not-predicted", "undetermined", "not-measured"]
    message: str
    measurement: Measurement | None = None
    cautions: list[Caution] = Field(default_factory=list)


def _column(rows: Rows, metric: str) -> dict[str, float] | None:
    if not rows or any(metric not in row for row in rows.values()):
        return None
    return {query_id: float(row[metric]) for query_id, row in rows.items()}


def _matching(record: TrackRecord, rows_a: Rows) -> list[Prediction]:
    hashes: dict[str, str | None] = {}
    found: list[Prediction] = []
    for prediction in reversed(record.predictions):  # latest first
        if prediction.metric not in hashes:
            column = _column(rows_a, prediction.metric)
            hashes[prediction.metric] = (
                None if column is None else items_hash(column, prediction.metric)
            )
        if hashes[prediction.metric] == prediction.items_hash:
            found.append(prediction)
    return found


# Public API: each keyword is a documented option; grouping them would hide them from
# help() and inspect.signature.
def record_measurement(  # noqa: PLR0913
    record_path: str | Path,
    items_a: Rows,
    items_b: Rows,
    comparison: ItemComparison | None = None,
    *,
    applied: str | None = None,
    path_a: str | Path | None = None,
    path_b: str | Path | None = None,
    stage_a: str | None = None,
    stage_b: str | None = None,
    config_a: Mapping[str, Any] | None = None,
    config_b: Mapping[str, Any] | None = None,
    created_at: str | None = None,
) -> MeasurementOutcome:
    """Append what B measured when B applied a fix predicted for A.

    A is matched to the latest prediction whose ``items_hash`` equals the hash of A's
    per-query recall@k (see :func:`items_hash`). The fix is ``applied`` when given, else
    inferred with :func:`infer_applied_fix` from the two configurations. The measurement is
    B − A on the prediction's metric (for raise-k: B's recall at the raised cutoff against A's
    recall@k), with the paired-bootstrap interval of :func:`groundkit.stats.compare_items`;
    ``comparison`` is reused when it is already on that metric.

    Args:
        record_path: The record file.
        items_a: A's per-query rows (query id to metric to value).
        items_b: B's per-query rows.
        comparison: The comparison the caller already made (its settings are reused).
        applied: The fix B applied, when the user names it.
        path_a: A's items file (recorded).
        path_b: B's items file (recorded).
        stage_a: A's stage name.
        stage_b: B's stage name.
        config_a: A's stage configuration (for inference).
        config_b: B's stage configuration.
        created_at: Timestamp (default: now, UTC).

    Returns:
        What was done; nothing is appended unless ``status == "recorded"``.

    Raises:
        DiagnosisError: ``applied`` is not a fix name, or the record cannot be read/written.
    """
    if applied is not None and applied not in FIXES:
        raise DiagnosisError(f"unknown fix {applied!r} (fixes: {', '.join(FIXES)})")
    record = read_track_record(record_path, missing_ok=True)
    cautions = list(record.cautions)
    try:
        matches = _matching(record, items_a)
        if not matches:
            raise _NotRecorded(
                "no-prediction",
                f"A matches no prediction in {record_path} (run grk eval diagnose on A's report "
                "with --track-record first)",
            )
        if applied is not None:
            prediction, fix_name, how = _named_fix(matches, applied, stage_a, config_b)
        else:
            prediction, fix_name, how = _inferred_fix(matches[0], stage_a, config_a, config_b)
        predicted = prediction.fix(fix_name)
        assert predicted is not None
        metric_b = prediction.metric
        if fix_name == "raise-k" and predicted.new_k is not None:
            metric_b = f"recall@{predicted.new_k}"
        result, column_b = _measured(
            items_a, items_b, prediction.metric, metric_b, fix_name, comparison
        )
    except _NotRecorded as stop:
        return MeasurementOutcome(
            status=stop.status, message=f"{stop.message}; nothing appended", cautions=cautions
        )
    measurement = Measurement(
        created_at=created_at or _now(),
        prediction_id=prediction.id,
        fix=fix_name,
        how=how,
        a=MeasuredSide(
            path=None if path_a is None else str(path_a),
            stage=stage_a,
            items_hash=prediction.items_hash,
            config=None if config_a is None else dict(config_a),
            metric=prediction.metric,
            mean=result.mean_a,
        ),
        b=MeasuredSide(
            path=None if path_b is None else str(path_b),
            stage=stage_b,
            items_hash=items_hash(column_b, metric_b) if metric_b == prediction.metric else None,
            config=None if config_b is None else dict(config_b),
            metric=metric_b,
            mean=result.mean_b,
        ),
        query_count=result.item_count,
        measured=result.difference,
        low=result.confidence_interval_low,
        high=result.confidence_interval_high,
        confidence_level=result.confidence_level,
        p_value=result.p_value,
        verdict=result.verdict,
        predicted=predicted,
    )
    append_record_line(record_path, measurement)
    return MeasurementOutcome(
        status="recorded",
        message=_recorded_message(measurement, prediction, stage_a, record_path),
        measurement=measurement,
        cautions=cautions,
    )


class _NotRecorded(Exception):  # noqa: N818  (control flow inside this module, never raised out)
    """Why nothing is appended: the outcome's status and message."""

    def __init__(self, status: Any, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _named_fix(
    matches: Sequence[Prediction],
    applied: str,
    stage_a: str | None,
    config_b: Mapping[str, Any] | None,
) -> tuple[Prediction, FixName, Literal["named", "inferred"]]:
    candidates = [p for p in matches if p.fix(applied) is not None]
    if not candidates:
        raise _NotRecorded(
            "not-predicted",
            f"{applied} was not among the fixes predicted for A's stage {matches[0].stage!r}",
        )
    mismatches = [
        _fusion_mismatch(p.fix(applied), stage_a or p.stage, config_b)
        if applied == "hybrid-fusion"
        else None
        for p in candidates
    ]
    if all(m is not None for m in mismatches):
        raise _NotRecorded(
            "not-predicted", f"hybrid-fusion is not the predicted fix: {mismatches[0]}"
        )
    return candidates[mismatches.index(None)], cast(FixName, applied), "named"  # checked above


def _inferred_fix(
    prediction: Prediction,
    stage_a: str | None,
    config_a: Mapping[str, Any] | None,
    config_b: Mapping[str, Any] | None,
) -> tuple[Prediction, FixName, Literal["named", "inferred"]]:
    if config_a is None or config_b is None:
        raise _NotRecorded(
            "undetermined",
            "the items files record no stage configuration to infer the fix from; name it "
            "with --applied",
        )
    fusion = prediction.fix("hybrid-fusion")
    inferred = infer_applied_fix(
        config_a,
        config_b,
        [f.name for f in prediction.fixes],
        stage_a=stage_a,
        partner=None if fusion is None else fusion.partner,
    )
    a, b = flatten_stage_config(config_a), flatten_stage_config(config_b)
    fuses_a = stage_a is not None and _applies("hybrid-fusion", a, b, stage_a)
    if not inferred and fusion is not None and stage_a is not None and fuses_a:
        # B fuses A's stage, but not with the partner the prediction replayed
        mismatch = _fusion_mismatch(fusion, stage_a, config_b)
        if mismatch is not None:
            raise _NotRecorded(
                "not-predicted", f"hybrid-fusion is not the predicted fix: {mismatch}"
            )
    if len(inferred) != 1:
        differing = sorted(key for key in set(a) | set(b) if a.get(key) != b.get(key))
        where = ", ".join(differing) if differing else "nowhere"
        detail = (
            f"the configs differ at {where}, which no predicted fix's knobs explain"
            if not inferred
            else f"several fixes fit ({', '.join(inferred)})"
        )
        raise _NotRecorded(
            "undetermined", f"cannot tell which fix B applied: {detail}; name it with --applied"
        )
    return prediction, inferred[0], "inferred"


def _measured(
    items_a: Rows,
    items_b: Rows,
    metric_a: str,
    metric_b: str,
    fix_name: str,
    comparison: ItemComparison | None,
) -> tuple[ItemComparison, dict[str, float]]:
    """B − A on the prediction's metrics, reusing the caller's comparison when it fits."""
    column_a, column_b = _column(items_a, metric_a), _column(items_b, metric_b)
    if column_a is None or column_b is None:
        missing = metric_a if column_a is None else metric_b
        side = "A" if column_a is None else "B"
        raise _NotRecorded("not-measured", f"{side} has no {missing} for every query")
    if comparison is not None and comparison.metric == metric_a == metric_b:
        return comparison, column_b
    settings: dict[str, Any] = {}
    if comparison is not None:
        settings = {
            "resamples": comparison.resamples,
            "seed": comparison.seed,
            "confidence_level": comparison.confidence_level,
            "alpha": comparison.alpha,
            "power": comparison.power,
        }
    try:
        return compare_items(column_a, column_b, metric=metric_b, **settings), column_b
    except ValueError as exc:
        raise _NotRecorded("not-measured", f"cannot measure {fix_name}: {exc}") from None


def _recorded_message(
    measurement: Measurement, prediction: Prediction, stage_a: str | None, record_path: str | Path
) -> str:
    predicted = measurement.predicted
    expected = "—" if predicted.expected is None else f"{predicted.expected:+.3f}"
    level = round(measurement.confidence_level * 100)
    what: str = measurement.how
    if measurement.fix == "hybrid-fusion" and predicted.partner is not None:
        what += f", fusing {stage_a or prediction.stage} with {predicted.partner}"
    return (
        f"{measurement.fix} ({what}): B measured {measurement.measured:+.3f} "
        f"[{measurement.low:+.3f}, {measurement.high:+.3f}] "
        f"({level}% interval) against {expected} predicted; appended to {record_path}"
    )
