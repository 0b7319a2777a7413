"""Quote-anchored judgments: the data contract, corpus loading and quote resolution.

A judgment names a query and the passages (quotes) of the corpus that answer it; quotes are
resolved to character spans of the documents, which the metrics compare with retrieved hits.

This top level holds what most callers use; the rest comes from the sub-package that names
it: ``groundkit.judgments.gold`` (judgments, their files, resolution), ``.corpus`` (corpus
and chunkers), ``.metrics``, ``.report`` (the report contract), ``.trec`` (trec_eval
semantics, export, id maps) and ``.files`` (path safety, output guard, output sets).
"""

from typing import TYPE_CHECKING

from groundkit.judgments.__about__ import __version__
from groundkit.judgments.lazy import lazy_exports

if TYPE_CHECKING:
    from groundkit.judgments.corpus import (
        CharsChunker,
        Chunk,
        ChunkerConfig,
        Corpus,
        DocumentChunker,
        ParagraphsChunker,
        SentencesChunker,
        TokensChunker,
        chunk_corpus,
        chunker_spec,
        parse_chunker_config,
        parse_chunker_spec,
    )
    from groundkit.judgments.files import OutputGuardError, OutputSetError, UnsafePathError
    from groundkit.judgments.gold import (
        GoldQuote,
        Judgment,
        JudgmentError,
        ResolvedJudgment,
        ResolvedQuote,
        Span,
        Unresolved,
        dump_judgments,
        load_judgments,
        resolve_judgments,
    )
    from groundkit.judgments.metrics import (
        RRF_K,
        Hit,
        MetricSpec,
        fuse_ranks,
        mean_scores,
        parse_metric,
        score_queries,
    )
    from groundkit.judgments.report import (
        SCHEMA_VERSION,
        EvalReport,
        QueryResult,
        ReportError,
        RunFailure,
        StageReport,
        canonical_json,
        config_hash,
        dump_report,
        load_report,
    )
    from groundkit.judgments.trec import evaluate_trec, export_stage, read_qrels, read_trec_run

# Each name comes from the public sub-package that holds it, when first used.
_EXPORTS: dict[str, str] = {
    "RRF_K": "groundkit.judgments.metrics",
    "SCHEMA_VERSION": "groundkit.judgments.report",
    "CharsChunker": "groundkit.judgments.corpus",
    "Chunk": "groundkit.judgments.corpus",
    "ChunkerConfig": "groundkit.judgments.corpus",
    "Corpus": "groundkit.judgments.corpus",
    "DocumentChunker": "groundkit.judgments.corpus",
    "EvalReport": "groundkit.judgments.report",
    "GoldQuote": "groundkit.judgments.gold",
    "Hit": "groundkit.judgments.metrics",
    "Judgment": "groundkit.judgments.gold",
    "JudgmentError": "groundkit.judgments.gold",
    "MetricSpec": "groundkit.judgments.metrics",
    "OutputGuardError": "groundkit.judgments.files",
    "OutputSetError": "groundkit.judgments.files",
    "ParagraphsChunker": "groundkit.judgments.corpus",
    "QueryResult": "groundkit.judgments.report",
    "ReportError": "groundkit.judgments.report",
    "ResolvedJudgment": "groundkit.judgments.gold",
    "ResolvedQuote": "groundkit.judgments.gold",
    "RunFailure": "groundkit.judgments.report",
    "SentencesChunker": "groundkit.judgments.corpus",
    "Span": "groundkit.judgments.gold",
    "StageReport": "groundkit.judgments.report",
    "TokensChunker": "groundkit.judgments.corpus",
    "Unresolved": "groundkit.judgments.gold",
    "UnsafePathError": "groundkit.judgments.files",
    "canonical_json": "groundkit.judgments.report",
    "chunk_corpus": "groundkit.judgments.corpus",
    "chunker_spec": "groundkit.judgments.corpus",
    "config_hash": "groundkit.judgments.report",
    "dump_judgments": "groundkit.judgments.gold",
    "dump_report": "groundkit.judgments.report",
    "evaluate_trec": "groundkit.judgments.trec",
    "export_stage": "groundkit.judgments.trec",
    "fuse_ranks": "groundkit.judgments.metrics",
    "load_judgments": "groundkit.judgments.gold",
    "load_report": "groundkit.judgments.report",
    "mean_scores": "groundkit.judgments.metrics",
    "parse_chunker_config": "groundkit.judgments.corpus",
    "parse_chunker_spec": "groundkit.judgments.corpus",
    "parse_metric": "groundkit.judgments.metrics",
    "read_qrels": "groundkit.judgments.trec",
    "read_trec_run": "groundkit.judgments.trec",
    "resolve_judgments": "groundkit.judgments.gold",
    "score_queries": "groundkit.judgments.metrics",
}

__all__ = [
    "RRF_K",
    "SCHEMA_VERSION",
    "CharsChunker",
    "Chunk",
    "ChunkerConfig",
    "Corpus",
    "DocumentChunker",
    "EvalReport",
    "GoldQuote",
    "Hit",
    "Judgment",
    "JudgmentError",
    "MetricSpec",
    "OutputGuardError",
    "OutputSetError",
    "ParagraphsChunker",
    "QueryResult",
    "ReportError",
    "ResolvedJudgment",
    "ResolvedQuote",
    "RunFailure",
    "SentencesChunker",
    "Span",
    "StageReport",
    "TokensChunker",
    "Unresolved",
    "UnsafePathError",
    "__version__",
    "canonical_json",
    "chunk_corpus",
    "chunker_spec",
    "config_hash",
    "dump_judgments",
    "dump_report",
    "evaluate_trec",
    "export_stage",
    "fuse_ranks",
    "load_judgments",
    "load_report",
    "mean_scores",
    "parse_chunker_config",
    "parse_chunker_spec",
    "parse_metric",
    "read_qrels",
    "read_trec_run",
    "resolve_judgments",
    "score_queries",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
