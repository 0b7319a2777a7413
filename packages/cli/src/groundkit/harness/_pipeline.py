"""The evaluation pipeline: corpus and judgments in, an :class:`EvalReport` out."""

from __future__ import annotations

import contextlib
import gc
import importlib.metadata
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.harness._bm25 import Bm25Index
from groundkit.harness._config import (
    BASELINE_STAGE,
    Bm25Retriever,
    CallableRetriever,
    CommandRetriever,
    DenseRetriever,
    EvalSettings,
    HybridRetriever,
    PredictionsRetriever,
    RunConfig,
    StageConfig,
)
from groundkit.harness._duplicates import DuplicateFinder
from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness._evidence import QuoteGold, StageChunks, trace_run
from groundkit.harness._external import call_function, load_callable, run_command
from groundkit.harness._fusion import reciprocal_rank_fusion
from groundkit.harness._notes import build_notes
from groundkit.harness._predictions import HitNormalizer, PerQueryHits, read_predictions_jsonl
from groundkit.harness._ranking import ChunkTable, RankedRun
from groundkit.harness._scoring import (
    chunk_metric_names,
    collapse_to_documents,
    document_metric_names,
    score_chunk_level,
    score_document_level,
)
from groundkit.harness._stats import aggregate, compare_stages
from groundkit.judgments import (
    Chunk,
    Corpus,
    EvalReport,
    GoldEvidence,
    GoldTable,
    Judgment,
    QueryInfo,
    QueryResult,
    ResolvedJudgment,
    RunInfo,
    StageReport,
    chunk_corpus,
    judgments_fingerprint,
    load_judgments,
    read_trec_run,
    resolve_judgments,
    trec_ranking,
)

__all__ = ["ProgressCallback", "evaluate", "package_versions", "run_evaluation"]

ProgressCallback = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: phases are ``load``, ``resolve``, then per stage
``<stage>: chunk``, ``<stage>: index``, ``<stage>: embed``, ``<stage>: retrieve``,
``<stage>: score``, and finally ``compare``. ``total`` may be 0 when there is nothing to do."""

IntArray = npt.NDArray[np.int64]

# Every distribution of the project (scanning all installed distributions is slow).
_GROUNDKIT_DISTRIBUTIONS = (
    "groundkit-adapters-beir",
    "groundkit-cli",
    "groundkit-core-judgments",
    "groundkit-diagnosis-fixes",
    "groundkit-evalset-quality",
    "groundkit-stats-bootstrap",
)
_RETRIEVER_PACKAGES = {
    "bm25": ("bm25s", "PyStemmer"),
    "dense": ("sentence-transformers", "transformers", "torch"),
}


# Automatic collections run this much less often during a run (see _collector_relaxed).
_RELAXED_GC_THRESHOLDS = (100_000, 50, 50)


@contextlib.contextmanager
def _collector_relaxed() -> Iterator[None]:
    """Run Python's cyclic garbage collector far less often; its thresholds come back on exit.

    A run allocates millions of small containers (token lists, hits, report models) that stay
    alive until the report is built: collections at the default thresholds walk them again and
    again without freeing anything (about 0.2 s of a 1.3 s SciFact run). Raising the thresholds,
    rather than disabling the collector, keeps cyclic garbage bounded on long runs (a dense
    stage over a large corpus) while removing almost all of that cost.
    """
    previous = gc.get_threshold()
    gc.set_threshold(
        *(max(old, new) for old, new in zip(previous, _RELAXED_GC_THRESHOLDS, strict=True))
    )
    try:
        yield
    finally:
        gc.set_threshold(*previous)


def package_versions(kinds: Sequence[str] = ()) -> dict[str, str]:
    """Versions of the installed ``groundkit-*`` distributions and retriever libraries.

    The libraries are those the given retriever kinds use (``bm25s``, ``PyStemmer``,
    ``sentence-transformers``...).
    """
    versions: dict[str, str] = {}
    for name in _GROUNDKIT_DISTRIBUTIONS:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    for kind in kinds:
        for package in _RETRIEVER_PACKAGES.get(kind, ()):
            try:
                versions[package] = importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                continue
    return dict(sorted(versions.items()))


@dataclass
class _Context:
    corpus: Corpus
    doc_ids: tuple[str, ...]
    doc_codes: dict[str, int]
    texts: list[str]
    doc_lengths: IntArray
    settings: EvalSettings
    query_ids: list[str]
    queries: list[str]
    known_queries: dict[str, bool]
    progress: ProgressCallback | None
    embedding_cache_dir: Path | None
    chunk_cache: dict[str, tuple[list[Chunk], ChunkTable, StageChunks]] = field(
        default_factory=dict
    )

    def report(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(phase, done, total)


@dataclass
class _StageOutcome:
    config: StageConfig
    run: RankedRun | None = None
    chunks: StageChunks | None = None
    chunk_count: int | None = None
    indexed_documents: int | None = None
    encoder_max_tokens: int | None = None
    retriever_info: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    tokens_before: Callable[[list[tuple[int, int, int]]], list[int]] | None = None
    shares_term: Callable[[list[tuple[int, int]]], list[bool]] | None = None
    chunk_texts: list[str] | None = None


def _chunks_for(ctx: _Context, stage: StageConfig) -> tuple[list[Chunk], ChunkTable, StageChunks]:
    assert stage.chunker is not None
    key = stage.chunker.model_dump_json()
    cached = ctx.chunk_cache.get(key)
    if cached is None:
        ctx.report(f"{stage.name}: chunk", 0, 1)
        chunks = chunk_corpus(ctx.corpus, stage.chunker)
        table = ChunkTable.from_chunks(chunks, ctx.doc_codes)
        cached = (chunks, table, StageChunks.build(table, len(ctx.doc_ids)))
        ctx.chunk_cache[key] = cached
        ctx.report(f"{stage.name}: chunk", 1, 1)
    return cached


def _chunk_texts(ctx: _Context, chunks: Sequence[Chunk]) -> list[str]:
    texts = ctx.corpus
    return [texts[c.doc][c.start : c.end] for c in chunks]


def _run_from_ids(
    ctx: _Context, table: ChunkTable, found: Sequence[tuple[IntArray, npt.NDArray[np.float64]]]
) -> RankedRun:
    per_query: list[PerQueryHits | None] = [
        (table.docs[ids], table.starts[ids], table.ends[ids], scores, ids) for ids, scores in found
    ]
    return RankedRun.from_lists(ctx.query_ids, per_query)


def _chunked(
    ctx: _Context, stage: StageConfig, outcome: _StageOutcome
) -> tuple[ChunkTable, StageChunks, list[str]]:
    """Chunk the corpus for a stage that builds its own index (timed; refuses an empty index)."""
    start = time.perf_counter()
    chunks, table, stage_chunks = _chunks_for(ctx, stage)
    texts = _chunk_texts(ctx, chunks)
    outcome.timings["chunking"] = time.perf_counter() - start
    if not chunks:
        raise HarnessError(f"stage {stage.name!r}: the corpus has no text to index")
    return table, stage_chunks, texts


def _bm25_stage(ctx: _Context, stage: StageConfig, outcome: _StageOutcome) -> None:
    assert isinstance(stage.retriever, Bm25Retriever)
    table, stage_chunks, texts = _chunked(ctx, stage, outcome)
    start = time.perf_counter()
    index = Bm25Index(
        texts, stage.retriever, progress=lambda _p, d, t: ctx.report(f"{stage.name}: index", d, t)
    )
    outcome.timings["indexing"] = time.perf_counter() - start
    start = time.perf_counter()
    found = index.search(
        ctx.queries,
        ctx.settings.depth,
        progress=lambda _p, d, t: ctx.report(f"{stage.name}: retrieve", d, t),
    )
    outcome.timings["retrieval"] = time.perf_counter() - start
    outcome.run = _run_from_ids(ctx, table, found)
    outcome.chunks = stage_chunks
    outcome.chunk_texts = texts

    def shares_term(requests: list[tuple[int, int]]) -> list[bool]:
        return [index.shares_term(ctx.queries[q], chunk) for q, chunk in requests]

    outcome.shares_term = shares_term
    _describe_chunks(outcome, table)


def _describe_chunks(outcome: _StageOutcome, table: ChunkTable) -> None:
    outcome.chunk_count = len(table)
    outcome.indexed_documents = int(np.unique(table.docs).size)


def _dense_stage(ctx: _Context, stage: StageConfig, outcome: _StageOutcome) -> None:
    from groundkit.harness._dense import DenseIndex  # imports numpy only; the model loads lazily

    assert isinstance(stage.retriever, DenseRetriever)
    config = stage.retriever
    table, stage_chunks, texts = _chunked(ctx, stage, outcome)
    start = time.perf_counter()
    index = DenseIndex(
        texts,
        config,
        stage=stage.name,
        cache_dir=config.cache_dir or ctx.embedding_cache_dir,
        progress=lambda _p, d, t: ctx.report(f"{stage.name}: embed", d, t),
    )
    outcome.timings["indexing"] = time.perf_counter() - start
    start = time.perf_counter()
    found = index.search(
        ctx.queries,
        ctx.settings.depth,
        progress=lambda _p, d, t: ctx.report(f"{stage.name}: retrieve", d, t),
    )
    outcome.timings["retrieval"] = time.perf_counter() - start
    outcome.run = _run_from_ids(ctx, table, found)
    outcome.chunks = stage_chunks
    outcome.chunk_texts = texts
    outcome.encoder_max_tokens = index.encoder_max_tokens

    def tokens_before(requests: list[tuple[int, int, int]]) -> list[int]:
        prefix = config.document_prefix
        pieces = []
        for chunk, chunk_start, quote_start in requests:
            before = max(0, quote_start - chunk_start)
            pieces.append(prefix + texts[chunk][:before])
        return index.count_tokens(pieces)

    outcome.tokens_before = tokens_before
    _describe_chunks(outcome, table)


def _hybrid_stage(
    ctx: _Context, stage: StageConfig, outcome: _StageOutcome, done: Mapping[str, _StageOutcome]
) -> None:
    assert isinstance(stage.retriever, HybridRetriever)
    inputs = [done[name] for name in stage.retriever.stages]
    failed = [o.config.name for o in inputs if o.run is None]
    if failed:
        raise StageFailed(stage.name, f"it fuses stage {failed[0]!r}, which failed")
    start = time.perf_counter()
    tables = [o.chunks for o in inputs]
    lookup: dict[tuple[int, int, int], int] | None = None
    if all(t is not None for t in tables):
        first = tables[0]
        assert first is not None
        if all(t is first for t in tables):
            outcome.chunks = first
        else:
            outcome.chunks = _union_chunks(ctx, [t for t in tables if t is not None])
        table = outcome.chunks.table
        lookup = {
            key: row
            for row, key in enumerate(
                zip(table.docs.tolist(), table.starts.tolist(), table.ends.tolist(), strict=True)
            )
        }
        _describe_chunks(outcome, table)
    runs = [o.run for o in inputs if o.run is not None]
    outcome.run = reciprocal_rank_fusion(
        runs, k=stage.retriever.k, depth=ctx.settings.depth, chunk_lookup=lookup
    )
    outcome.timings["retrieval"] = time.perf_counter() - start


def _union_chunks(ctx: _Context, tables: Sequence[StageChunks]) -> StageChunks:
    keys = np.concatenate(
        [np.stack([t.table.docs, t.table.starts, t.table.ends], axis=1) for t in tables]
    )
    unique = np.unique(keys, axis=0)
    table = ChunkTable(
        docs=unique[:, 0].astype(np.int64),
        starts=unique[:, 1].astype(np.int64),
        ends=unique[:, 2].astype(np.int64),
    )
    return StageChunks.build(table, len(ctx.doc_ids))


def _external_stage(ctx: _Context, stage: StageConfig, outcome: _StageOutcome) -> None:
    retriever = stage.retriever
    answerable = list(zip(ctx.query_ids, ctx.queries, strict=True))
    start = time.perf_counter()
    lines: dict[str, tuple[int | None, Any]]
    path: Path | None = None
    if isinstance(retriever, CommandRetriever):
        ctx.report(f"{stage.name}: retrieve", 0, len(answerable))
        raw = run_command(
            retriever, stage=stage.name, queries=answerable, known_queries=ctx.known_queries
        )
        lines = dict(raw.items())
        label: str | Path | None = f"<output of stage {stage.name}>"
    elif isinstance(retriever, CallableRetriever):
        function = load_callable(retriever, stage=stage.name)
        ctx.report(f"{stage.name}: retrieve", 0, len(answerable))
        lines = {
            qid: (None, hits)
            for qid, hits in call_function(
                function, retriever, stage=stage.name, queries=answerable
            ).items()
        }
        label = None
    else:
        assert isinstance(retriever, PredictionsRetriever)
        path = retriever.path
        label = path
        if retriever.resolved_format == "trec":
            _trec_stage(ctx, stage, outcome, path)
            outcome.timings["retrieval"] = time.perf_counter() - start
            return
        raw = read_predictions_jsonl(path, stage=stage.name, known_queries=ctx.known_queries)
        lines = dict(raw.items())
    normalizer = HitNormalizer(
        ctx.corpus, ctx.doc_codes, stage.name, ctx.settings.depth, path=label
    )
    per_query: list[PerQueryHits | None] = []
    for qid in ctx.query_ids:
        entry = lines.get(qid)
        per_query.append(
            None if entry is None else normalizer.normalize(qid, entry[1], line=entry[0])
        )
    outcome.run = RankedRun.from_lists(ctx.query_ids, per_query)
    ctx.report(f"{stage.name}: retrieve", len(answerable), len(answerable))
    outcome.timings["retrieval"] = time.perf_counter() - start


def _trec_stage(ctx: _Context, stage: StageConfig, outcome: _StageOutcome, path: Path) -> None:
    run = read_trec_run(path)
    for query_id in run:
        if query_id not in ctx.known_queries:
            raise HarnessError(
                f"stage {stage.name!r}: unknown query id {query_id!r} (not in the judgments)",
                path=path,
            )
    per_query: list[PerQueryHits | None] = []
    for query_id in ctx.query_ids:
        docs = run.get(query_id)
        if docs is None:
            per_query.append(None)
            continue
        ranking = trec_ranking(docs)[: ctx.settings.depth]
        codes = []
        for doc, _ in ranking:
            code = ctx.doc_codes.get(doc)
            if code is None:
                raise HarnessError(
                    f"stage {stage.name!r}: query {query_id!r}: unknown document {doc!r}",
                    path=path,
                )
            codes.append(code)
        code_array = np.asarray(codes, dtype=np.int64)
        ends = ctx.doc_lengths[code_array] if codes else np.zeros(0, dtype=np.int64)
        if np.any(ends == 0):
            raise HarnessError(
                f"stage {stage.name!r}: query {query_id!r}: an empty document cannot be a hit",
                path=path,
            )
        per_query.append(
            (
                code_array,
                np.zeros(len(codes), dtype=np.int64),
                ends,
                np.asarray([score for _, score in ranking], dtype=np.float64),
                np.full(len(codes), -1, dtype=np.int64),
            )
        )
    outcome.run = RankedRun.from_lists(ctx.query_ids, per_query)


def _retriever_info(stage: StageConfig, outcome: _StageOutcome) -> dict[str, Any]:
    info = stage.retriever.model_dump(mode="json")
    info.pop("kind", None)
    return info


def _load_corpus(corpus: Corpus | Mapping[str, str]) -> Corpus:
    return corpus if isinstance(corpus, Corpus) else Corpus.from_texts(corpus)


def _corpus_doc(doc_codes: Mapping[str, int], doc: str) -> str:
    """The corpus's id for a gold document, also when the judgment spells it decomposed.

    Resolution matches ids up to Unicode NFC (corpus ids are NFC); the gold's spans, qrels and
    report entries must then name the corpus's spelling, the one hits carry.
    """
    if doc in doc_codes:
        return doc
    composed = unicodedata.normalize("NFC", doc)
    return composed if composed in doc_codes else doc


def _gold_structures(
    ctx: _Context, answerable: Sequence[ResolvedJudgment]
) -> tuple[GoldTable, list[list[QuoteGold]], dict[str, dict[str, int]]]:
    quote_counts: list[int] = []
    grades: list[int] = []
    span_counts: list[int] = []
    span_docs: list[int] = []
    span_starts: list[int] = []
    span_ends: list[int] = []
    traces_gold: list[list[QuoteGold]] = []
    qrels: dict[str, dict[str, int]] = {}
    for resolved in answerable:
        quotes: list[QuoteGold] = []
        qrel: dict[str, int] = {}
        quote_counts.append(len(resolved.quotes))
        for quote in resolved.quotes:
            grades.append(quote.gold.grade)
            doc = _corpus_doc(ctx.doc_codes, quote.gold.doc)
            code = ctx.doc_codes.get(doc, -1)
            spans = [(s.start, s.end) for s in quote.spans if s.doc in ctx.doc_codes]
            span_counts.append(len(spans))
            for s_start, s_end in spans:
                span_docs.append(code)
                span_starts.append(s_start)
                span_ends.append(s_end)
            quotes.append(
                QuoteGold(doc=code, spans=np.asarray(spans, dtype=np.int64).reshape(-1, 2))
            )
            qrel[doc] = max(qrel.get(doc, 0), quote.gold.grade)
        traces_gold.append(quotes)
        qrels[resolved.judgment.query_id] = qrel

    def offsets(counts: list[int]) -> IntArray:
        out = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(np.asarray(counts, dtype=np.int64), out=out[1:])
        return out

    table = GoldTable(
        query_ids=tuple(ctx.query_ids),
        quote_offsets=offsets(quote_counts),
        grades=np.asarray(grades, dtype=np.int64),
        span_offsets=offsets(span_counts),
        span_docs=np.asarray(span_docs, dtype=np.int64),
        span_starts=np.asarray(span_starts, dtype=np.int64),
        span_ends=np.asarray(span_ends, dtype=np.int64),
        doc_ids=ctx.doc_ids,
    )
    return table, traces_gold, qrels


def _query_infos(
    resolved: Sequence[ResolvedJudgment], doc_codes: Mapping[str, int]
) -> list[QueryInfo]:
    infos: list[QueryInfo] = []
    for item in resolved:
        judgment = item.judgment
        gold = [
            GoldEvidence(
                doc=_corpus_doc(doc_codes, quote.gold.doc),
                quote=quote.gold.quote,
                grade=quote.gold.grade,
                spans=[(s.start, s.end) for s in quote.spans],
                method=quote.method,
                closest=quote.closest,
                similarity=quote.similarity,
            )
            for quote in item.quotes
        ]
        infos.append(
            QueryInfo(
                query_id=judgment.query_id,
                query=judgment.query,
                category=judgment.category,
                qtype=judgment.qtype,
                gold=gold,
            )
        )
    return infos


def _stage_results(
    ctx: _Context,
    outcome: _StageOutcome,
    run: RankedRun,
    values: npt.NDArray[np.float64],
    metrics: Sequence[str],
    traces_gold: Sequence[Sequence[QuoteGold]],
    duplicates: DuplicateFinder,
) -> list[QueryResult]:
    settings = ctx.settings
    traces = trace_run(
        run,
        traces_gold,
        chunks=outcome.chunks,
        min_overlap_fraction=settings.min_overlap_fraction,
        document_level=settings.level == "document",
        tokens_before=outcome.tokens_before,
        shares_term=outcome.shares_term,
    )
    results: list[QueryResult] = []
    rows_values = values.tolist()
    docs_all = run.docs.tolist()
    starts_all = run.starts.tolist()
    ends_all = run.ends.tolist()
    scores_all = run.scores.tolist()
    # All the lists at once: one vectorised pass, then a closer look at the few that need it.
    duplicate_lists = duplicates.duplicates_in_lists(run.docs, run.starts, run.ends, run.offsets)
    for query, query_id in enumerate(run.query_ids):
        rows = run.rows(query)
        dup = duplicate_lists[query]
        # Plain dicts validated by pydantic's core in one call per query: the same checks as
        # building each ReportHit in Python, at a fraction of the cost on large runs.
        hits = [
            {
                "doc": ctx.doc_ids[docs_all[row]],
                "start": starts_all[row],
                "end": ends_all[row],
                "score": scores_all[row],
                "duplicate_of": dup[row - rows.start],
            }
            for row in range(rows.start, rows.stop)
        ]
        results.append(
            QueryResult.model_validate(
                {
                    "query_id": query_id,
                    "scores": dict(zip(metrics, rows_values[query], strict=True)),
                    "hits": hits,
                    "evidence": traces[query],
                    "missing": not hits,
                }
            )
        )
    return results


@_collector_relaxed()
def evaluate(
    corpus: Corpus | Mapping[str, str],
    judgments: Sequence[Judgment],
    settings: EvalSettings | None = None,
    *,
    progress: ProgressCallback | None = None,
    command: Sequence[str] | None = None,
    config_record: Mapping[str, Any] | None = None,
    stop_on_failure: bool = False,
) -> EvalReport:
    """Evaluate every stage of ``settings`` on a corpus and judgments already in memory.

    Stages run in order (the BM25 baseline first). A stage that fails (:class:`StageFailed`:
    a command that exits non-zero, times out or writes nothing, a callable that raises, a
    hybrid of a failed stage) is kept in the report with its ``error`` and no results; the
    other stages go on. Invalid input (bad hits, unknown ids, a missing extra) raises.

    Args:
        corpus: A :class:`~groundkit.judgments.Corpus` or a mapping of document id to text.
        judgments: The judgments (unique query ids).
        settings: Stages and scoring settings (default: the BM25 baseline alone).
        progress: Optional ``(phase, done, total)`` callback, see :data:`ProgressCallback`.
        command: The command line to record in the report.
        config_record: The configuration to record (default: ``settings`` as JSON).
        stop_on_failure: Raise the first :class:`StageFailed` instead of recording it.

    Returns:
        The report (check it with :func:`groundkit.judgments.check_report`).

    Raises:
        HarnessError: Invalid input.
        StageFailed: Only with ``stop_on_failure``.
    """
    settings = settings if settings is not None else EvalSettings()
    started = time.perf_counter()
    timings: dict[str, float] = {}
    loaded = _load_corpus(corpus)
    judgment_list = list(judgments)
    seen: set[str] = set()
    for judgment in judgment_list:
        if judgment.query_id in seen:
            raise HarnessError("query id listed twice in the judgments", item_id=judgment.query_id)
        seen.add(judgment.query_id)
    doc_ids = tuple(loaded)
    texts = [loaded[d] for d in doc_ids]
    if progress is not None:
        progress("resolve", 0, len(judgment_list))
    step = time.perf_counter()
    resolved = resolve_judgments(judgment_list, loaded)
    timings["resolve"] = time.perf_counter() - step
    if progress is not None:
        progress("resolve", len(judgment_list), len(judgment_list))
    answerable = [r for r in resolved if r.judgment.answerable]
    ctx = _Context(
        corpus=loaded,
        doc_ids=doc_ids,
        doc_codes={doc: code for code, doc in enumerate(doc_ids)},
        texts=texts,
        doc_lengths=np.fromiter((len(t) for t in texts), np.int64, len(texts)),
        settings=settings,
        query_ids=[r.judgment.query_id for r in answerable],
        queries=[r.judgment.query for r in answerable],
        known_queries={r.judgment.query_id: r.judgment.answerable for r in resolved},
        progress=progress,
        embedding_cache_dir=settings.embedding_cache_dir,
    )
    if not answerable:
        raise HarnessError("the judgments have no answerable query: nothing to rank")
    gold_table, traces_gold, qrels = _gold_structures(ctx, answerable)
    document_level = settings.level == "document"
    metrics = (
        document_metric_names(settings.cutoffs, settings.headline_metrics)
        if document_level
        else chunk_metric_names(settings.cutoffs, settings.budgets, settings.headline_metrics)
    )
    duplicates = DuplicateFinder(texts)
    outcomes: dict[str, _StageOutcome] = {}
    stage_reports: list[StageReport] = []
    per_stage_values: dict[str, npt.NDArray[np.float64]] = {}
    for stage in settings.stages:
        outcome = _StageOutcome(config=stage)
        outcomes[stage.name] = outcome
        try:
            if isinstance(stage.retriever, Bm25Retriever):
                _bm25_stage(ctx, stage, outcome)
            elif isinstance(stage.retriever, DenseRetriever):
                _dense_stage(ctx, stage, outcome)
            elif isinstance(stage.retriever, HybridRetriever):
                _hybrid_stage(ctx, stage, outcome, outcomes)
            else:
                _external_stage(ctx, stage, outcome)
        except StageFailed as failure:
            if stop_on_failure:
                raise
            outcome.run = None
            outcome.error = str(failure)
        results: list[QueryResult] = []
        if outcome.run is not None:
            step = time.perf_counter()
            ctx.report(f"{stage.name}: score", 0, 1)
            run = outcome.run
            if document_level:
                run = collapse_to_documents(run, ctx.doc_lengths)
                values = score_document_level(qrels, run, doc_ids, metrics)
            else:
                values = score_chunk_level(
                    gold_table, run, doc_ids, metrics, settings.min_overlap_fraction
                )
            per_stage_values[stage.name] = values
            results = _stage_results(ctx, outcome, run, values, metrics, traces_gold, duplicates)
            outcome.timings["scoring"] = time.perf_counter() - step
            ctx.report(f"{stage.name}: score", 1, 1)
        stage_reports.append(
            StageReport(
                name=stage.name,
                kind=stage.retriever.kind,
                baseline=stage.name == BASELINE_STAGE,
                retriever=_retriever_info(stage, outcome),
                chunker=None if stage.chunker is None else stage.chunker.model_dump(mode="json"),
                encoder_max_tokens=outcome.encoder_max_tokens,
                chunk_count=outcome.chunk_count,
                indexed_documents=outcome.indexed_documents,
                queries=results,
                aggregates=aggregate(per_stage_values.get(stage.name), metrics, settings.bootstrap),
                timings={k: round(v, 6) for k, v in outcome.timings.items()},
                error=outcome.error,
            )
        )
    step = time.perf_counter()
    ctx.report("compare", 0, 1)
    stage_reports = compare_stages(
        stage_reports, per_stage_values, ctx.query_ids, metrics, settings
    )
    ctx.report("compare", 1, 1)
    timings["compare"] = time.perf_counter() - step
    kinds = sorted({s.retriever.kind for s in settings.stages})
    run_info = RunInfo(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        package_versions=package_versions(kinds),
        command=None if command is None else list(command),
        config=dict(config_record)
        if config_record is not None
        else settings.model_dump(mode="json"),
        corpus_source=loaded.source,
        judgments_source=None,
        corpus_fingerprint=loaded.fingerprint(),
        judgments_fingerprint=judgments_fingerprint(judgment_list),
        level=settings.level,
        depth=settings.depth,
        cutoffs=list(settings.cutoffs),
        budgets=[] if document_level else list(settings.budgets),
        min_overlap_fraction=settings.min_overlap_fraction,
        headline_metrics=list(settings.headline_metrics),
        bootstrap=settings.bootstrap,
    )
    notes = build_notes(
        settings=settings,
        resolved=resolved,
        stages=stage_reports,
        per_stage_values=per_stage_values,
        metrics=metrics,
    )
    timings["total"] = time.perf_counter() - started
    return EvalReport(
        run=run_info,
        queries=_query_infos(resolved, ctx.doc_codes),
        stages=stage_reports,
        notes=notes,
        timings={k: round(v, 6) for k, v in timings.items()},
    )


@_collector_relaxed()
def run_evaluation(
    config: RunConfig,
    *,
    progress: ProgressCallback | None = None,
    command: Sequence[str] | None = None,
    stop_on_failure: bool = False,
) -> EvalReport:
    """Load the corpus and judgments named by ``config`` and evaluate every stage.

    Args:
        config: The run configuration (e.g. from :func:`load_run_config`).
        progress: Optional ``(phase, done, total)`` callback.
        command: The command line to record in the report.
        stop_on_failure: Raise the first :class:`StageFailed` instead of recording it.

    Returns:
        The report; stages that failed carry their ``error``.

    Raises:
        groundkit.judgments.JudgmentError: Unreadable or invalid corpus or judgments.
        HarnessError: Invalid retriever output or settings.
    """
    if progress is not None:
        progress("load", 0, 2)
    start = time.perf_counter()
    corpus = Corpus.load(config.corpus)
    if progress is not None:
        progress("load", 1, 2)
    judgments = load_judgments(config.judgments)
    if not any(judgment.gold for judgment in judgments):
        raise HarnessError(
            "no answerable query (every judgment has an empty gold): nothing to rank",
            path=config.judgments,
        )
    if progress is not None:
        progress("load", 2, 2)
    loading = time.perf_counter() - start
    report = evaluate(
        corpus,
        judgments,
        config.settings,
        progress=progress,
        command=command,
        config_record=config.model_dump(mode="json"),
        stop_on_failure=stop_on_failure,
    )
    run = report.run.model_copy(update={"judgments_source": str(config.judgments)})
    timings = {"load": round(loading, 6), **report.timings}
    return report.model_copy(update={"run": run, "timings": timings})
