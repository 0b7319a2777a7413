"""The evaluation pipeline: corpus and judgments in, an :class:`EvalReport` out.

Each stage runs through the retriever registry (:mod:`groundkit.harness.run._stage_run`): the
pipeline knows no retriever kind.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness._unique import sorted_unique
from groundkit.harness.analysis._ablation import AblationScores, run_ablation
from groundkit.harness.analysis._duplicates import DuplicateFinder
from groundkit.harness.analysis._evidence import QuoteGold, StageChunks
from groundkit.harness.analysis._notes import build_notes
from groundkit.harness.analysis._stats import aggregate, compare_stages
from groundkit.harness.retrievers._builtin import CallableRetriever
from groundkit.harness.retrievers._registry import RetrieverSettings
from groundkit.harness.run._config import EvalSettings, RunConfig, StageConfig, added_baseline
from groundkit.harness.run._context import ProgressCallback, RunContext, SharedWork, StageOutcome
from groundkit.harness.run._gold import gold_structures, query_infos
from groundkit.harness.run._ranking import RankedRun
from groundkit.harness.run._record import (
    RunRecord,
    collector_relaxed,
    package_versions,
    run_info,
)
from groundkit.harness.run._results import rebuilt, stage_report, stage_results, unlocated_note
from groundkit.harness.run._scoring import (
    chunk_metric_names,
    collapse_to_documents,
    document_metric_names,
    measured_columns,
    score_chunk_level,
    score_document_level,
)
from groundkit.harness.run._stage_run import run_stage
from groundkit.harness.run._tokenizer import run_tokenizer
from groundkit.judgments import (
    Corpus,
    EvalReport,
    Judgment,
    QueryResult,
    ResolvedJudgment,
    StageReport,
    load_judgments,
    parse_metric,
    resolve_judgments,
)
from groundkit.judgments.gold import judgments_fingerprint
from groundkit.judgments.metrics import GoldTable, HitTokens
from groundkit.judgments.report import AblationRow, QueryInfo, ReportNote, judged_at, judged_notes

__all__ = [
    "ProgressCallback",
    "StagesArgument",
    "collector_relaxed",
    "evaluate",
    "evaluate_loaded",
    "load_run_inputs",
    "package_versions",
    "run_evaluation",
]

StagesArgument = Mapping[str, Any] | Sequence[StageConfig]
"""Stages given to :func:`evaluate` directly: ``{name: retriever}`` or a list of stage configs.

A retriever is its settings (``DenseRetriever()``, a ``{"kind": ...}`` mapping) or a live
Python retriever: a function ``query -> hits`` or an object with ``search(queries, depth)``."""


def _stage_list(stages: StagesArgument) -> list[StageConfig]:
    if isinstance(stages, Mapping):
        out = []
        for name, value in stages.items():
            if isinstance(value, StageConfig):
                out.append(value.model_copy(update={"name": name}) if value.name != name else value)
            elif isinstance(value, RetrieverSettings | Mapping):
                out.append(StageConfig.model_validate({"name": name, "retriever": value}))
            else:
                out.append(StageConfig(name=name, retriever=CallableRetriever(target=value)))
        return out
    return list(stages)


def _with_stages(
    settings: EvalSettings, stages: StagesArgument | None, baseline: str | None
) -> EvalSettings:
    if stages is None and (baseline is None or baseline == settings.baseline):
        return settings
    given = _stage_list(stages) if stages is not None else []
    names = {stage.name for stage in given}
    kept = [s for s in settings.stages if s.name not in names]
    data = {name: getattr(settings, name) for name in EvalSettings.model_fields}
    if baseline is not None:
        # Another baseline: the BM25 stage the default added is not run (one defined is).
        kept = [s for s in kept if not added_baseline(s)]
        data["baseline"] = baseline
    data["stages"] = kept + given
    return EvalSettings.model_validate(data)


def _context(
    loaded: Corpus,
    resolved: Sequence[ResolvedJudgment],
    settings: EvalSettings,
    progress: ProgressCallback | None,
    shared: SharedWork | None,
) -> RunContext:
    if shared is None:
        shared = SharedWork()
    else:
        shared.bind(loaded.fingerprint())
    answerable = [r for r in resolved if r.judgment.answerable]
    doc_ids = tuple(loaded)
    texts = [loaded[d] for d in doc_ids]
    return RunContext(
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
        shared=shared,
        judgments_key=judgments_fingerprint([r.judgment for r in resolved]),
    )


class _Scorer:
    """Scores each stage's run and assembles its report entry."""

    def __init__(self, ctx: RunContext, answerable: Sequence[ResolvedJudgment]) -> None:
        settings = ctx.settings
        self.ctx = ctx
        self.document_level = settings.level == "document"
        self.metrics = (
            document_metric_names(settings.cutoffs, settings.headline_metrics)
            if self.document_level
            else chunk_metric_names(settings.cutoffs, settings.budgets, settings.headline_metrics)
        )
        gold: tuple[GoldTable, list[list[QuoteGold]], dict[str, dict[str, int]]]
        gold = gold_structures(ctx, answerable)
        self.gold_table, self.traces_gold, self.qrels = gold
        self.duplicates = DuplicateFinder(ctx.texts)
        self.values: dict[str, npt.NDArray[np.float64]] = {}
        # Token budgets count the run's tokenizer's tokens, each hit span tokenized once a run.
        counted = any(parse_metric(m).budget_tokens is not None for m in self.metrics)
        self.tokens = HitTokens(ctx.corpus, run_tokenizer(settings)) if counted else None

    def score(
        self, run: RankedRun, chunks: StageChunks | None = None
    ) -> tuple[RankedRun, npt.NDArray[np.float64]]:
        """The run as scored (collapsed to documents at document level) and its values.

        Without the stage's ``chunks``, a metric that reads them is NaN (not measurable).
        """
        ctx = self.ctx
        if self.document_level:
            run = collapse_to_documents(run, ctx.doc_lengths)
            return run, score_document_level(self.qrels, run, ctx.doc_ids, self.metrics)
        values = score_chunk_level(
            self.gold_table,
            run,
            ctx.doc_ids,
            self.metrics,
            ctx.settings.min_overlap_fraction,
            None if chunks is None else chunks.table,
            self.tokens,
        )
        return run, values

    def expect_hits(self, chunks: StageChunks) -> None:
        """Start shingling a stage's spans beside the run when its hits will cover most of them.

        Near-duplicate marking needs the shingle sets of the spans the hits are; with at
        least as many hits (queries x depth) as spans, nearly all of them are hit (SciFact:
        5,074 of 5,183 documents), so a forked worker builds the sets while the stage indexes
        and searches (:meth:`DuplicateFinder.prefetch_in_background`). Below that, nothing
        is guessed: the sets are built for the hits once they are known.
        """
        ctx, table = self.ctx, chunks.table
        if self.document_level:  # hits are whole documents there
            docs = sorted_unique(table.docs).astype(np.int64, copy=False)
            starts, ends = np.zeros_like(docs), ctx.doc_lengths[docs]
        else:
            docs, starts, ends = table.docs, table.starts, table.ends
        if len(ctx.query_ids) * ctx.settings.depth >= docs.size:
            self.duplicates.prefetch_in_background(docs, starts, ends)

    def report(self, outcome: StageOutcome) -> StageReport:
        ctx, stage = self.ctx, outcome.config
        results: list[QueryResult] = []
        if outcome.run is not None:
            step = time.perf_counter()
            ctx.report(f"{stage.name}: score", 0, 1)
            run, values = self.score(outcome.run, outcome.chunks)
            self.values[stage.name] = values
            measured, names = measured_columns(values, self.metrics)
            assert measured is not None
            results = stage_results(
                ctx, outcome, run, measured, names, self.traces_gold, self.duplicates
            )
            outcome.timings["scoring"] = time.perf_counter() - step
            ctx.report(f"{stage.name}: score", 1, 1)
        measured, names = measured_columns(self.values.get(stage.name), self.metrics)
        aggregates = aggregate(measured, names, ctx.settings.bootstrap)
        baseline = stage.name == ctx.settings.baseline
        return stage_report(outcome, results, aggregates, baseline=baseline)


def _run_stages(
    ctx: RunContext,
    scorer: _Scorer,
    outcomes: dict[str, StageOutcome],
    *,
    stop_on_failure: bool,
    failures: list[StageFailed] | None,
) -> list[StageReport]:
    reports: list[StageReport] = []
    keys: dict[str, str | None] = {}
    for stage in ctx.settings.stages:
        keys[stage.name] = key = ctx.stage_key(stage, keys)
        reused = None if key is None else ctx.shared.stages.get(key)
        if reused is not None:
            outcome, report, values = reused
            outcomes[stage.name] = dataclasses.replace(outcome, config=stage)
            scorer.values[stage.name] = values
            renamed = {"name": stage.name, "baseline": stage.name == ctx.settings.baseline}
            reports.append(rebuilt(report, **renamed))
            ctx.shared.count("stages_reused")
            continue
        outcome = StageOutcome(config=stage, doc_ids=ctx.doc_ids)
        outcomes[stage.name] = outcome
        try:
            run_stage(ctx, outcome, outcomes, chunked=scorer.expect_hits)
        except StageFailed as failure:
            if stop_on_failure:
                raise
            outcome.run, outcome.error, outcome.failure = None, str(failure), failure
            outcome.unlocated = []
            if failures is not None:
                failures.append(failure)
        reports.append(scorer.report(outcome))
        ctx.shared.count("stages_run")
        if key is not None and outcome.error is None and stage.name in scorer.values:
            ctx.shared.stages[key] = (outcome, reports[-1], scorer.values[stage.name])
    return reports


def _resolved(
    judgments: Sequence[Judgment],
    loaded: Corpus,
    progress: ProgressCallback | None,
    timings: dict[str, float],
    source: str | None = None,
) -> list[ResolvedJudgment]:
    """The judgments (unique ids checked) with their quotes resolved in the corpus.

    A pinned quote that is not at its offset raises a ``JudgmentError`` naming ``source``
    (the judgments file) and the judgment's line.
    """
    seen: set[str] = set()
    for judgment in judgments:
        if judgment.query_id in seen:
            raise HarnessError("query id listed twice in the judgments", item_id=judgment.query_id)
        seen.add(judgment.query_id)
    if progress is not None:
        progress("resolve", 0, len(judgments))
    step = time.perf_counter()
    resolved = resolve_judgments(list(judgments), loaded, source=source)
    timings["resolve"] = time.perf_counter() - step
    if progress is not None:
        progress("resolve", len(judgments), len(judgments))
    return resolved


@dataclasses.dataclass(frozen=True)
class _RunOptions:
    """How a run reports and records itself (the keywords of :func:`evaluate`).

    Attributes:
        progress: Optional ``(phase, done, total)`` callback, see :data:`ProgressCallback`.
        command: The command line to record in the report.
        stop_on_failure: Raise the first :class:`StageFailed` instead of recording it.
        failures: A list to which each recorded :class:`StageFailed` is appended (its cause is
            the user's exception, for a traceback).
        shared: Chunks and indexes kept for later runs on the same corpus (a sweep's arms);
            default: this run's own.
    """

    progress: ProgressCallback | None = None
    command: Sequence[str] | None = None
    stop_on_failure: bool = False
    failures: list[StageFailed] | None = None
    shared: SharedWork | None = None


def _finish(
    ctx: RunContext,
    scorer: _Scorer,
    stage_reports: list[StageReport],
    outcomes: dict[str, StageOutcome],
    resolved: Sequence[ResolvedJudgment],
    timings: dict[str, float],
) -> tuple[list[QueryInfo], list[StageReport], list[ReportNote], list[AblationRow]]:
    """Comparisons, ablation, judged shares and notes once every stage has run."""
    settings = ctx.settings
    step = time.perf_counter()
    ctx.report("compare", 0, 1)
    stage_reports = compare_stages(
        stage_reports, scorer.values, ctx.query_ids, scorer.metrics, settings
    )
    ctx.report("compare", 1, 1)
    timings["compare"] = time.perf_counter() - step
    step = time.perf_counter()
    ablation, ablation_notes = run_ablation(
        ctx, outcomes, stage_reports, AblationScores(scorer.values, scorer.metrics, scorer.score)
    )
    if ablation or ablation_notes:
        timings["ablation"] = time.perf_counter() - step
    queries = query_infos(resolved, ctx.doc_codes)
    stage_reports = [_with_judged(s, queries, settings) for s in stage_reports]
    notes = build_notes(settings=settings, resolved=resolved, stages=stage_reports)
    notes += [note for s in stage_reports if (note := unlocated_note(s)) is not None]
    notes += judged_notes(stage_reports)
    notes += ablation_notes
    return queries, stage_reports, notes, ablation


def _evaluate(
    loaded: Corpus,
    judgment_list: list[Judgment],
    settings: EvalSettings,
    record: RunRecord,
    options: _RunOptions,
) -> EvalReport:
    """:func:`evaluate` on a loaded corpus; the report is built once, through validation."""
    progress = options.progress
    started = time.perf_counter()
    timings: dict[str, float] = {} if record.loading is None else {"load": record.loading}
    resolved = _resolved(judgment_list, loaded, progress, timings, record.judgments_source)
    answerable = [r for r in resolved if r.judgment.answerable]
    ctx = _context(loaded, resolved, settings, progress, options.shared)
    if not answerable:
        raise HarnessError("the judgments have no answerable query: nothing to rank")
    scorer = _Scorer(ctx, answerable)
    outcomes: dict[str, StageOutcome] = {}
    try:
        stage_reports = _run_stages(
            ctx,
            scorer,
            outcomes,
            stop_on_failure=options.stop_on_failure,
            failures=options.failures,
        )
        queries, stage_reports, notes, ablation = _finish(
            ctx, scorer, stage_reports, outcomes, resolved, timings
        )
    finally:
        scorer.duplicates.close()  # a worker still shingling when a stage failed or Ctrl-C
    timings["total"] = time.perf_counter() - started
    return EvalReport(
        run=run_info(settings, loaded, judgment_list, options.command, record),
        queries=queries,
        stages=stage_reports,
        note_records=notes,
        timings={k: round(v, 6) for k, v in timings.items()},
        ablation=ablation,
    )


# Public API: each keyword is a documented option; grouping them would hide them from help().
@collector_relaxed()
def evaluate(  # noqa: PLR0913
    corpus: Corpus | Mapping[str, str],
    judgments: Sequence[Judgment],
    settings: EvalSettings | None = None,
    *,
    stages: StagesArgument | None = None,
    baseline: str | None = None,
    progress: ProgressCallback | None = None,
    command: Sequence[str] | None = None,
    config_record: Mapping[str, Any] | None = None,
    stop_on_failure: bool = False,
    failures: list[StageFailed] | None = None,
    shared: SharedWork | None = None,
) -> EvalReport:
    """Evaluate every stage on a corpus and judgments already in memory.

    Stages run in order (the baseline first), each through the retriever registry. A
    stage that fails (:class:`StageFailed`: a command that exits non-zero, times out or writes
    nothing, a retriever that raises or returns hits that cannot be read, a hybrid of a failed
    stage) is kept in the report with its ``error`` and no results; the other stages go on.
    Invalid input (bad settings, a predictions file naming unknown ids, a target that does not
    import, a missing extra) raises.

    Args:
        corpus: A :class:`~groundkit.judgments.Corpus` or a mapping of document id to text.
        judgments: The judgments (unique query ids).
        settings: Stages and scoring settings (default: the BM25 baseline alone).
        stages: More stages, ``{name: retriever}`` (a live function is a retriever, see
            :data:`StagesArgument`) or stage configs; they replace stages of the same name.
        baseline: The stage every other stage is compared with, one of the stages (default:
            ``settings.baseline``); naming one leaves out the BM25 baseline the default
            added (see :attr:`EvalSettings.baseline`).
        progress: Optional ``(phase, done, total)`` callback, see :data:`ProgressCallback`.
        command: The command line to record in the report.
        config_record: The configuration to record (default: ``settings`` as JSON).
        stop_on_failure: Raise the first :class:`StageFailed` instead of recording it.
        failures: A list to which each recorded :class:`StageFailed` is appended (its cause is
            the user's exception, for a traceback).
        shared: Chunks and indexes kept for later runs on the same corpus (a sweep's arms);
            default: this run's own.

    Returns:
        The report, every part of it built through validation (check it with
        :func:`groundkit.judgments.report.check_report`).

    Raises:
        HarnessError: Invalid input.
        StageFailed: Only with ``stop_on_failure``.
    """
    settings = _with_stages(settings if settings is not None else EvalSettings(), stages, baseline)
    loaded = corpus if isinstance(corpus, Corpus) else Corpus.from_texts(corpus)
    options = _RunOptions(progress, command, stop_on_failure, failures, shared)
    return _evaluate(loaded, list(judgments), settings, RunRecord(config=config_record), options)


def _with_judged(
    stage: StageReport, queries: Sequence[QueryInfo], settings: EvalSettings
) -> StageReport:
    judged = judged_at(
        stage,
        queries,
        settings.cutoffs,
        level=settings.level,
        min_overlap_fraction=settings.min_overlap_fraction,
    )
    return rebuilt(stage, judged=judged)


def load_run_inputs(
    config: RunConfig, progress: ProgressCallback | None = None
) -> tuple[Corpus, list[Judgment]]:
    """Load the corpus and judgments named by ``config`` (what :func:`run_evaluation` reads).

    Raises:
        groundkit.judgments.JudgmentError: Unreadable or invalid corpus or judgments.
        HarnessError: No answerable query.
    """
    if progress is not None:
        progress("load", 0, 2)
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
    return corpus, judgments


@collector_relaxed()
def run_evaluation(
    config: RunConfig,
    *,
    progress: ProgressCallback | None = None,
    command: Sequence[str] | None = None,
    stop_on_failure: bool = False,
    failures: list[StageFailed] | None = None,
) -> EvalReport:
    """Load the corpus and judgments named by ``config`` and evaluate every stage.

    Args:
        config: The run configuration (e.g. from :func:`load_run_config`).
        progress: Optional ``(phase, done, total)`` callback.
        command: The command line to record in the report.
        stop_on_failure: Raise the first :class:`StageFailed` instead of recording it.
        failures: Collects each recorded :class:`StageFailed` (see :func:`evaluate`).

    Returns:
        The report; stages that failed carry their ``error``.

    Raises:
        groundkit.judgments.JudgmentError: Unreadable or invalid corpus or judgments.
        HarnessError: Invalid retriever output or settings.
    """
    start = time.perf_counter()
    corpus, judgments = load_run_inputs(config, progress)
    return evaluate_loaded(
        config,
        corpus,
        judgments,
        loading=time.perf_counter() - start,
        progress=progress,
        command=command,
        stop_on_failure=stop_on_failure,
        failures=failures,
    )


# The keywords of evaluate, plus the loading time: the same documented options.
@collector_relaxed()
def evaluate_loaded(  # noqa: PLR0913
    config: RunConfig,
    corpus: Corpus,
    judgments: Sequence[Judgment],
    *,
    loading: float = 0.0,
    progress: ProgressCallback | None = None,
    command: Sequence[str] | None = None,
    stop_on_failure: bool = False,
    failures: list[StageFailed] | None = None,
    shared: SharedWork | None = None,
) -> EvalReport:
    """:func:`run_evaluation` on inputs already loaded by :func:`load_run_inputs`.

    ``loading`` is the seconds the loading took (the report's ``load`` timing); the other
    keywords as for :func:`evaluate`.
    """
    record = RunRecord(
        config=config.model_dump(mode="json"),
        judgments_source=str(config.judgments),
        loading=round(loading, 6),
    )
    options = _RunOptions(progress, command, stop_on_failure, failures, shared)
    return _evaluate(corpus, list(judgments), config.settings, record, options)
