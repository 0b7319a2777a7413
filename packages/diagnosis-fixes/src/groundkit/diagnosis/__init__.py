"""Where a retrieval stage loses gold evidence, which fix should gain most, and a track record.

``diagnose`` puts every gold quote a stage misses at k into the first of nine buckets its
evidence fits (gold not resolvable, document never indexed, split by the chunker, beyond the
encoder's window, ranked just below the cutoff, found by another stage, vocabulary mismatch,
crowded out by near-duplicates, not retrieved); ``fixes`` ranks the changes that address them
by the recall@k each is expected to gain, exact where the report's rankings allow a replay.
The track record keeps predicted gains beside the gains later measured.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from groundkit.diagnosis.__about__ import __version__

if TYPE_CHECKING:
    from groundkit.diagnosis._diagnose import POOL_FACTOR, SPLIT_SHARE, default_stage, diagnose
    from groundkit.diagnosis._errors import DiagnosisError
    from groundkit.diagnosis._fixes import fixes
    from groundkit.diagnosis._hashing import config_hash, items_hash
    from groundkit.diagnosis._models import (
        BUCKET_TITLES,
        BUCKETS,
        FIX_BUCKETS,
        FIX_CONFIG_KEYS,
        FIX_KNOBS,
        Bucket,
        BucketName,
        Diagnosis,
        Fix,
        FixEvidence,
        MissExample,
        Rate,
        Reference,
        Replay,
        StageSnapshot,
    )
    from groundkit.diagnosis._names import FIXES, FixName
    from groundkit.diagnosis._record import (
        RECORD_FORMAT,
        Caution,
        MeasuredSide,
        Measurement,
        MeasurementOutcome,
        PredictedFix,
        Prediction,
        TrackRecord,
        append_record_line,
        infer_applied_fix,
        read_track_record,
        record_measurement,
        record_prediction,
    )
    from groundkit.diagnosis._replay import RRF_K, deduplicate, reciprocal_rank_fusion
    from groundkit.diagnosis._summary import TrackRow, TrackSummary, summarise_track_record
    from groundkit.diagnosis.predictions._benchmark import BENCHMARK_FIGURES, PredictionBenchmark
    from groundkit.diagnosis.predictions._rerun import (
        CHUNK_FIXES,
        RerunStage,
        chunk_variant,
        chunker_text,
    )

# Each name is imported from its module when first used (PEP 562), so a light command that
# needs one of them (``grk eval compare`` on items files) does not load the whole harness.
_EXPORTS: dict[str, str] = {
    "BENCHMARK_FIGURES": "groundkit.diagnosis.predictions._benchmark",
    "PredictionBenchmark": "groundkit.diagnosis.predictions._benchmark",
    "FIX_CONFIG_KEYS": "groundkit.diagnosis._models",
    "BUCKETS": "groundkit.diagnosis._models",
    "BUCKET_TITLES": "groundkit.diagnosis._models",
    "Bucket": "groundkit.diagnosis._models",
    "BucketName": "groundkit.diagnosis._models",
    "CHUNK_FIXES": "groundkit.diagnosis.predictions._rerun",
    "Caution": "groundkit.diagnosis._record",
    "Diagnosis": "groundkit.diagnosis._models",
    "DiagnosisError": "groundkit.diagnosis._errors",
    "FIXES": "groundkit.diagnosis._names",
    "FIX_BUCKETS": "groundkit.diagnosis._models",
    "FIX_KNOBS": "groundkit.diagnosis._models",
    "Fix": "groundkit.diagnosis._models",
    "FixEvidence": "groundkit.diagnosis._models",
    "FixName": "groundkit.diagnosis._names",
    "MeasuredSide": "groundkit.diagnosis._record",
    "Measurement": "groundkit.diagnosis._record",
    "MeasurementOutcome": "groundkit.diagnosis._record",
    "MissExample": "groundkit.diagnosis._models",
    "POOL_FACTOR": "groundkit.diagnosis._diagnose",
    "PredictedFix": "groundkit.diagnosis._record",
    "Prediction": "groundkit.diagnosis._record",
    "RECORD_FORMAT": "groundkit.diagnosis._record",
    "RRF_K": "groundkit.diagnosis._replay",
    "Rate": "groundkit.diagnosis._models",
    "Reference": "groundkit.diagnosis._models",
    "Replay": "groundkit.diagnosis._models",
    "RerunStage": "groundkit.diagnosis.predictions._rerun",
    "SPLIT_SHARE": "groundkit.diagnosis._diagnose",
    "StageSnapshot": "groundkit.diagnosis._models",
    "TrackRecord": "groundkit.diagnosis._record",
    "TrackRow": "groundkit.diagnosis._summary",
    "TrackSummary": "groundkit.diagnosis._summary",
    "append_record_line": "groundkit.diagnosis._record",
    "chunk_variant": "groundkit.diagnosis.predictions._rerun",
    "chunker_text": "groundkit.diagnosis.predictions._rerun",
    "config_hash": "groundkit.diagnosis._hashing",
    "deduplicate": "groundkit.diagnosis._replay",
    "default_stage": "groundkit.diagnosis._diagnose",
    "diagnose": "groundkit.diagnosis._diagnose",
    "fixes": "groundkit.diagnosis._fixes",
    "infer_applied_fix": "groundkit.diagnosis._record",
    "items_hash": "groundkit.diagnosis._hashing",
    "read_track_record": "groundkit.diagnosis._record",
    "reciprocal_rank_fusion": "groundkit.diagnosis._replay",
    "record_measurement": "groundkit.diagnosis._record",
    "record_prediction": "groundkit.diagnosis._record",
    "summarise_track_record": "groundkit.diagnosis._summary",
}

__all__ = [
    "BENCHMARK_FIGURES",
    "BUCKETS",
    "BUCKET_TITLES",
    "CHUNK_FIXES",
    "FIXES",
    "FIX_BUCKETS",
    "FIX_CONFIG_KEYS",
    "FIX_KNOBS",
    "POOL_FACTOR",
    "RECORD_FORMAT",
    "RRF_K",
    "SPLIT_SHARE",
    "Bucket",
    "BucketName",
    "Caution",
    "Diagnosis",
    "DiagnosisError",
    "Fix",
    "FixEvidence",
    "FixName",
    "MeasuredSide",
    "Measurement",
    "MeasurementOutcome",
    "MissExample",
    "PredictedFix",
    "Prediction",
    "PredictionBenchmark",
    "Rate",
    "Reference",
    "Replay",
    "RerunStage",
    "StageSnapshot",
    "TrackRecord",
    "TrackRow",
    "TrackSummary",
    "__version__",
    "append_record_line",
    "chunk_variant",
    "chunker_text",
    "config_hash",
    "deduplicate",
    "default_stage",
    "diagnose",
    "fixes",
    "infer_applied_fix",
    "items_hash",
    "read_track_record",
    "reciprocal_rank_fusion",
    "record_measurement",
    "record_prediction",
    "summarise_track_record",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
