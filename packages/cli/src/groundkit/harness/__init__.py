"""The evaluation harness: chunk, index, retrieve, score and compare retrieval stages.

``run_evaluation(load_run_config("groundkit.toml"))`` runs every stage of a config file and
returns an :class:`~groundkit.judgments.EvalReport`; :func:`run_sweep` runs every arm of a
sweep file (``run_sweep(load_sweep("sweep.toml"), "out")``); :func:`evaluate` does the same from
in-memory data (``evaluate(corpus, judgments, stages={"mine": my_search})``). Every stage kind
is a registered :class:`RetrieverKind` implementing the :class:`Retriever` protocol; other
distributions add kinds through the ``groundkit.retrievers`` entry-point group. See the package
README for the TOML format and the predictions format.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from groundkit.harness._dense import DENSE_INSTALL_HINT, LOAD_MODEL_PHASE, dense_available
    from groundkit.harness._errors import HarnessError, StageFailed
    from groundkit.harness._items import ItemsFile, ItemsStage, items_text, load_items, write_items
    from groundkit.harness._notes import DetectionLimits, detection_limits
    from groundkit.harness._pipeline import StagesArgument, evaluate, run_evaluation
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
        AblationPart,
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
    from groundkit.harness._run_record import package_versions
    from groundkit.harness._scoring import trec_measure_for
    from groundkit.harness._stats import (
        family_settings,
        report_ablation_family,
        report_family,
    )
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

# Each name is imported from its module when first used (PEP 562), so a light command that
# needs one of them (``grk eval compare`` on items files) does not load the whole harness.
_EXPORTS: dict[str, str] = {
    "SharedWork": "groundkit.harness._context",
    "SweepEvent": "groundkit.harness._sweep",
    "SweepProgress": "groundkit.harness._sweep",
    "arm_paths": "groundkit.harness._sweep",
    "run_sweep": "groundkit.harness._sweep",
    "SweepArm": "groundkit.harness._sweep_config",
    "SweepPlan": "groundkit.harness._sweep_config",
    "SweepSettings": "groundkit.harness._sweep_config",
    "expand_sweep": "groundkit.harness._sweep_config",
    "load_sweep": "groundkit.harness._sweep_config",
    "SWEEP_SCHEMA_VERSION": "groundkit.harness._sweep_summary",
    "SweepPoint": "groundkit.harness._sweep_summary",
    "SweepSummary": "groundkit.harness._sweep_summary",
    "load_sweep_summary": "groundkit.harness._sweep_summary",
    "pareto_front": "groundkit.harness._sweep_summary",
    "LOAD_MODEL_PHASE": "groundkit.harness._dense",
    "AblationPart": "groundkit.harness._registry",
    "report_ablation_family": "groundkit.harness._stats",
    "BASELINE_STAGE": "groundkit.harness._config",
    "Bm25Retriever": "groundkit.harness._config",
    "CallableRetriever": "groundkit.harness._config",
    "ChunkHits": "groundkit.harness._protocol",
    "ChunkSet": "groundkit.harness._protocol",
    "CommandRetriever": "groundkit.harness._config",
    "ConfigError": "groundkit.harness._config_load",
    "ConfigProblem": "groundkit.harness._config_load",
    "DEFAULT_MODEL": "groundkit.harness._config",
    "DENSE_INSTALL_HINT": "groundkit.harness._dense",
    "DenseRetriever": "groundkit.harness._config",
    "DetectionLimits": "groundkit.harness._notes",
    "ENTRY_POINT_GROUP": "groundkit.harness._registry",
    "EvalSettings": "groundkit.harness._config",
    "HarnessError": "groundkit.harness._errors",
    "HaystackRetriever": "groundkit.harness._config",
    "HybridRetriever": "groundkit.harness._config",
    "InputMismatch": "groundkit.harness._reproduce",
    "ItemsFile": "groundkit.harness._items",
    "ItemsStage": "groundkit.harness._items",
    "LangChainRetriever": "groundkit.harness._config",
    "LlamaIndexRetriever": "groundkit.harness._config",
    "MAX_RESAMPLES": "groundkit.harness._limits",
    "MismatchKind": "groundkit.harness._reproduce",
    "PredictionsRetriever": "groundkit.harness._config",
    "ProgressCallback": "groundkit.harness._context",
    "Query": "groundkit.harness._protocol",
    "QueryHits": "groundkit.harness._protocol",
    "Reproduction": "groundkit.harness._reproduce",
    "ReproductionRefusedError": "groundkit.harness._reproduce",
    "RerankRetriever": "groundkit.harness._config",
    "Retriever": "groundkit.harness._protocol",
    "RetrieverConfig": "groundkit.harness._config",
    "RetrieverKind": "groundkit.harness._registry",
    "RetrieverSettings": "groundkit.harness._registry",
    "RunConfig": "groundkit.harness._config",
    "ScoreDifference": "groundkit.harness._reproduce",
    "StageConfig": "groundkit.harness._config",
    "StageContext": "groundkit.harness._protocol",
    "StageFailed": "groundkit.harness._errors",
    "StagesArgument": "groundkit.harness._pipeline",
    "UpstreamStage": "groundkit.harness._protocol",
    "canonical_json": "groundkit.harness._config",
    "check_stage_name": "groundkit.harness._config",
    "comparison_problem": "groundkit.harness._verify",
    "default_chunker": "groundkit.harness._config",
    "default_headline_metrics": "groundkit.harness._limits",
    "dense_available": "groundkit.harness._dense",
    "detection_limits": "groundkit.harness._notes",
    "evaluate": "groundkit.harness._pipeline",
    "family_settings": "groundkit.harness._stats",
    "items_text": "groundkit.harness._items",
    "load_items": "groundkit.harness._items",
    "load_run_config": "groundkit.harness._config_load",
    "package_versions": "groundkit.harness._run_record",
    "read_config_file": "groundkit.harness._config_load",
    "recorded_run_config": "groundkit.harness._reproduce",
    "register_retriever": "groundkit.harness._registry",
    "report_family": "groundkit.harness._stats",
    "reproduce_report": "groundkit.harness._reproduce",
    "retriever_kind": "groundkit.harness._registry",
    "retriever_kinds": "groundkit.harness._registry",
    "run_config_from_dict": "groundkit.harness._config_load",
    "run_evaluation": "groundkit.harness._pipeline",
    "stage_config_hash": "groundkit.harness._config",
    "trec_measure_for": "groundkit.harness._scoring",
    "write_items": "groundkit.harness._items",
}

__all__ = [
    "BASELINE_STAGE",
    "DEFAULT_MODEL",
    "DENSE_INSTALL_HINT",
    "ENTRY_POINT_GROUP",
    "LOAD_MODEL_PHASE",
    "MAX_RESAMPLES",
    "SWEEP_SCHEMA_VERSION",
    "AblationPart",
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
    "report_ablation_family",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module == "groundkit.harness._registry":
        import_module("groundkit.harness._config")  # the built-in kinds register with it
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
