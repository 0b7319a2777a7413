"""Where a retrieval stage loses gold evidence, which fix should gain most, and a track record.

``diagnose`` puts every gold quote a stage misses at k into the first of nine buckets its
evidence fits (gold not resolvable, document never indexed, split by the chunker, beyond the
encoder's window, ranked just below the cutoff, found by another stage, vocabulary mismatch,
crowded out by near-duplicates, not retrieved); ``fixes`` ranks the changes that address them
by the recall@k each is expected to gain, exact where the report's rankings allow a replay.
The track record keeps predicted gains beside the gains later measured.
"""

from groundkit.diagnosis.__about__ import __version__
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
    FIXES,
    Bucket,
    BucketName,
    Diagnosis,
    Fix,
    FixEvidence,
    FixName,
    MissExample,
    Rate,
    Reference,
    Replay,
    StageSnapshot,
)
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

__all__ = [
    "BUCKETS",
    "BUCKET_TITLES",
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
    "Rate",
    "Reference",
    "Replay",
    "StageSnapshot",
    "TrackRecord",
    "TrackRow",
    "TrackSummary",
    "__version__",
    "append_record_line",
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
