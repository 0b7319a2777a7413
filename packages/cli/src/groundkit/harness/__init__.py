"""The evaluation harness: chunk, index, retrieve, score and compare retrieval stages.

``run_evaluation(load_run_config("groundkit.toml"))`` runs every stage of a config file and
returns an :class:`~groundkit.judgments.EvalReport`; :func:`evaluate` does the same from
in-memory data. See the package README for the TOML format and the predictions format.
"""

from groundkit.harness._config import (
    BASELINE_STAGE,
    MAX_RESAMPLES,
    Bm25Retriever,
    CallableRetriever,
    CommandRetriever,
    DenseRetriever,
    EvalSettings,
    HybridRetriever,
    PredictionsRetriever,
    RetrieverConfig,
    RunConfig,
    StageConfig,
    canonical_json,
    default_headline_metrics,
    load_run_config,
    run_config_from_dict,
    stage_config_hash,
)
from groundkit.harness._dense import DENSE_INSTALL_HINT, dense_available
from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness._items import ItemsFile, ItemsStage, items_text, load_items, write_items
from groundkit.harness._notes import DetectionLimits, detection_limits
from groundkit.harness._pipeline import ProgressCallback, evaluate, package_versions, run_evaluation
from groundkit.harness._scoring import trec_measure_for

__all__ = [
    "BASELINE_STAGE",
    "DENSE_INSTALL_HINT",
    "MAX_RESAMPLES",
    "Bm25Retriever",
    "CallableRetriever",
    "CommandRetriever",
    "DenseRetriever",
    "DetectionLimits",
    "EvalSettings",
    "HarnessError",
    "HybridRetriever",
    "ItemsFile",
    "ItemsStage",
    "PredictionsRetriever",
    "ProgressCallback",
    "RetrieverConfig",
    "RunConfig",
    "StageConfig",
    "StageFailed",
    "canonical_json",
    "default_headline_metrics",
    "dense_available",
    "detection_limits",
    "evaluate",
    "items_text",
    "load_items",
    "load_run_config",
    "package_versions",
    "run_config_from_dict",
    "run_evaluation",
    "stage_config_hash",
    "trec_measure_for",
    "write_items",
]
