"""The evaluation harness: chunk, index, retrieve, score and compare retrieval stages.

``run_evaluation(load_run_config("groundkit.toml"))`` runs every stage of a config file and
returns an :class:`~groundkit.judgments.EvalReport`; :func:`run_sweep` runs every arm of a
sweep file (``run_sweep(load_sweep("sweep.toml"), "out")``); :func:`evaluate` does the same from
in-memory data (``evaluate(corpus, judgments, stages={"mine": my_search})``). Every stage kind
is a registered :class:`RetrieverKind` implementing the :class:`Retriever` protocol; other
distributions add kinds through the ``groundkit.retrievers`` entry-point group. See the package
README for the TOML format and the predictions format.
"""

from groundkit.harness._config import (
    BASELINE_STAGE,
    DEFAULT_MODEL,
    MAX_RESAMPLES,
    Bm25Retriever,
    CallableRetriever,
    CommandRetriever,
    DenseRetriever,
    EvalSettings,
    HaystackRetriever,
    HybridRetriever,
    LangChainRetriever,
    LlamaIndexRetriever,
    PredictionsRetriever,
    RerankRetriever,
    RetrieverConfig,
    RunConfig,
    StageConfig,
    canonical_json,
    check_stage_name,
    default_chunker,
    default_headline_metrics,
    stage_config_hash,
)
from groundkit.harness._config_load import (
    ConfigError,
    ConfigProblem,
    load_run_config,
    read_config_file,
    run_config_from_dict,
)
from groundkit.harness._context import ProgressCallback, SharedWork
from groundkit.harness._dense import DENSE_INSTALL_HINT, dense_available
from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness._items import ItemsFile, ItemsStage, items_text, load_items, write_items
from groundkit.harness._notes import DetectionLimits, detection_limits
from groundkit.harness._pipeline import StagesArgument, evaluate, package_versions, run_evaluation
from groundkit.harness._protocol import (
    ChunkHits,
    ChunkSet,
    Query,
    QueryHits,
    Retriever,
    StageContext,
    UpstreamStage,
)
from groundkit.harness._registry import (
    ENTRY_POINT_GROUP,
    RetrieverKind,
    RetrieverSettings,
    register_retriever,
    retriever_kind,
    retriever_kinds,
)
from groundkit.harness._reproduce import (
    InputMismatch,
    MismatchKind,
    Reproduction,
    ReproductionRefusedError,
    ScoreDifference,
    recorded_run_config,
    reproduce_report,
)
from groundkit.harness._scoring import trec_measure_for
from groundkit.harness._stats import family_settings, report_family
from groundkit.harness._sweep import SweepEvent, SweepProgress, arm_paths, run_sweep
from groundkit.harness._sweep_config import (
    SweepArm,
    SweepPlan,
    SweepSettings,
    expand_sweep,
    load_sweep,
)
from groundkit.harness._sweep_summary import (
    SWEEP_SCHEMA_VERSION,
    SweepPoint,
    SweepSummary,
    load_sweep_summary,
    pareto_front,
)
from groundkit.harness._verify import comparison_problem

__all__ = [
    "BASELINE_STAGE",
    "DEFAULT_MODEL",
    "DENSE_INSTALL_HINT",
    "ENTRY_POINT_GROUP",
    "MAX_RESAMPLES",
    "SWEEP_SCHEMA_VERSION",
    "Bm25Retriever",
    "CallableRetriever",
    "ChunkHits",
    "ChunkSet",
    "CommandRetriever",
    "ConfigError",
    "ConfigProblem",
    "DenseRetriever",
    "DetectionLimits",
    "EvalSettings",
    "HarnessError",
    "HaystackRetriever",
    "HybridRetriever",
    "InputMismatch",
    "ItemsFile",
    "ItemsStage",
    "LangChainRetriever",
    "LlamaIndexRetriever",
    "MismatchKind",
    "PredictionsRetriever",
    "ProgressCallback",
    "Query",
    "QueryHits",
    "Reproduction",
    "ReproductionRefusedError",
    "RerankRetriever",
    "Retriever",
    "RetrieverConfig",
    "RetrieverKind",
    "RetrieverSettings",
    "RunConfig",
    "ScoreDifference",
    "SharedWork",
    "StageConfig",
    "StageContext",
    "StageFailed",
    "StagesArgument",
    "SweepArm",
    "SweepEvent",
    "SweepPlan",
    "SweepPoint",
    "SweepProgress",
    "SweepSettings",
    "SweepSummary",
    "UpstreamStage",
    "arm_paths",
    "canonical_json",
    "check_stage_name",
    "comparison_problem",
    "default_chunker",
    "default_headline_metrics",
    "dense_available",
    "detection_limits",
    "evaluate",
    "expand_sweep",
    "family_settings",
    "items_text",
    "load_items",
    "load_run_config",
    "load_sweep",
    "load_sweep_summary",
    "package_versions",
    "pareto_front",
    "read_config_file",
    "recorded_run_config",
    "register_retriever",
    "report_family",
    "reproduce_report",
    "retriever_kind",
    "retriever_kinds",
    "run_config_from_dict",
    "run_evaluation",
    "run_sweep",
    "stage_config_hash",
    "trec_measure_for",
    "write_items",
]
