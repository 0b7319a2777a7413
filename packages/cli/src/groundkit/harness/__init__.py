"""The evaluation harness: chunk, index, retrieve, score and compare retrieval stages.

``run_evaluation(load_run_config("groundkit.toml"))`` runs every stage of a config file and
returns an :class:`~groundkit.judgments.EvalReport`; :func:`run_sweep` runs every arm of a
sweep file (``run_sweep(load_sweep("sweep.toml"), "out")``); :func:`evaluate` does the same from
in-memory data (``evaluate(corpus, judgments, stages={"mine": my_search})``). Every stage kind
is a registered :class:`RetrieverKind` implementing the :class:`Retriever` protocol; other
distributions add kinds through the ``groundkit.retrievers`` entry-point group. See the package
README for the TOML format and the predictions format.

This top level holds what a user calls; the rest comes from the sub-package that names it:
``groundkit.harness.retrievers`` (a plugin author's contract: registry and protocol),
``.run`` (config, pipeline, items, reproduction), ``.sweep``, ``.analysis`` (statistics,
notes, detection limits) and ``.dense``.
"""

from typing import TYPE_CHECKING

from groundkit.harness._lazy import harness_exports

if TYPE_CHECKING:
    from groundkit.harness.dense import DENSE_INSTALL_HINT, dense_available
    from groundkit.harness.retrievers import (
        Retriever,
        RetrieverKind,
        RetrieverSettings,
        register_retriever,
    )
    from groundkit.harness.run import (
        BASELINE_STAGE,
        DEFAULT_MODEL,
        Bm25Retriever,
        CallableRetriever,
        CommandRetriever,
        ConfigError,
        ConfigProblem,
        DenseRetriever,
        EvalSettings,
        HarnessError,
        HaystackRetriever,
        HybridRetriever,
        ItemsFile,
        ItemsStage,
        LangChainRetriever,
        LlamaIndexRetriever,
        PredictionsRetriever,
        ProgressCallback,
        Reproduction,
        ReproductionRefusedError,
        RerankRetriever,
        RetrieverConfig,
        RunConfig,
        StageConfig,
        StageFailed,
        StagesArgument,
        evaluate,
        load_items,
        load_run_config,
        read_config_file,
        reproduce_report,
        run_config_from_dict,
        run_evaluation,
        write_items,
    )
    from groundkit.harness.sweep import SweepSummary, load_sweep, load_sweep_summary, run_sweep

# Each name comes from the public sub-package that holds it, when first used.
_EXPORTS: dict[str, str] = {
    "BASELINE_STAGE": "groundkit.harness.run",
    "DEFAULT_MODEL": "groundkit.harness.run",
    "DENSE_INSTALL_HINT": "groundkit.harness.dense",
    "Bm25Retriever": "groundkit.harness.run",
    "CallableRetriever": "groundkit.harness.run",
    "CommandRetriever": "groundkit.harness.run",
    "ConfigError": "groundkit.harness.run",
    "ConfigProblem": "groundkit.harness.run",
    "DenseRetriever": "groundkit.harness.run",
    "EvalSettings": "groundkit.harness.run",
    "HarnessError": "groundkit.harness.run",
    "HaystackRetriever": "groundkit.harness.run",
    "HybridRetriever": "groundkit.harness.run",
    "ItemsFile": "groundkit.harness.run",
    "ItemsStage": "groundkit.harness.run",
    "LangChainRetriever": "groundkit.harness.run",
    "LlamaIndexRetriever": "groundkit.harness.run",
    "PredictionsRetriever": "groundkit.harness.run",
    "ProgressCallback": "groundkit.harness.run",
    "Reproduction": "groundkit.harness.run",
    "ReproductionRefusedError": "groundkit.harness.run",
    "RerankRetriever": "groundkit.harness.run",
    "Retriever": "groundkit.harness.retrievers",
    "RetrieverConfig": "groundkit.harness.run",
    "RetrieverKind": "groundkit.harness.retrievers",
    "RetrieverSettings": "groundkit.harness.retrievers",
    "RunConfig": "groundkit.harness.run",
    "StageConfig": "groundkit.harness.run",
    "StageFailed": "groundkit.harness.run",
    "StagesArgument": "groundkit.harness.run",
    "SweepSummary": "groundkit.harness.sweep",
    "dense_available": "groundkit.harness.dense",
    "evaluate": "groundkit.harness.run",
    "load_items": "groundkit.harness.run",
    "load_run_config": "groundkit.harness.run",
    "load_sweep": "groundkit.harness.sweep",
    "load_sweep_summary": "groundkit.harness.sweep",
    "read_config_file": "groundkit.harness.run",
    "register_retriever": "groundkit.harness.retrievers",
    "reproduce_report": "groundkit.harness.run",
    "run_config_from_dict": "groundkit.harness.run",
    "run_evaluation": "groundkit.harness.run",
    "run_sweep": "groundkit.harness.sweep",
    "write_items": "groundkit.harness.run",
}

__all__ = [
    "BASELINE_STAGE",
    "DEFAULT_MODEL",
    "DENSE_INSTALL_HINT",
    "Bm25Retriever",
    "CallableRetriever",
    "CommandRetriever",
    "ConfigError",
    "ConfigProblem",
    "DenseRetriever",
    "EvalSettings",
    "HarnessError",
    "HaystackRetriever",
    "HybridRetriever",
    "ItemsFile",
    "ItemsStage",
    "LangChainRetriever",
    "LlamaIndexRetriever",
    "PredictionsRetriever",
    "ProgressCallback",
    "Reproduction",
    "ReproductionRefusedError",
    "RerankRetriever",
    "Retriever",
    "RetrieverConfig",
    "RetrieverKind",
    "RetrieverSettings",
    "RunConfig",
    "StageConfig",
    "StageFailed",
    "StagesArgument",
    "SweepSummary",
    "dense_available",
    "evaluate",
    "load_items",
    "load_run_config",
    "load_sweep",
    "load_sweep_summary",
    "read_config_file",
    "register_retriever",
    "reproduce_report",
    "run_config_from_dict",
    "run_evaluation",
    "run_sweep",
    "write_items",
]

__getattr__, __dir__ = harness_exports(__name__, _EXPORTS)
