"""Running one stage of any kind through the registry and the retriever protocol.

The only place the harness meets a retriever: build it from its registered kind, give it its
chunks (chunked kinds) or ask for its passages, search the batch of queries, and read what it
returned into a ranked run. Errors keep their meaning: a problem found while building a stage
is a configuration error (:class:`HarnessError`, exit 2); a retriever that raises, or returns
hits that cannot be read, fails its stage (:class:`StageFailed`: recorded in the report, the
other stages go on, exit 1).
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness._unique import sorted_unique
from groundkit.harness.analysis._evidence import StageChunks
from groundkit.harness.retrievers._protocol import (
    ChunkHits,
    ChunkSet,
    Query,
    Retriever,
    StageContext,
    UpstreamStage,
)
from groundkit.harness.retrievers._registry import RetrieverKind, retriever_kind
from groundkit.harness.run._config import StageConfig
from groundkit.harness.run._context import PreparedRun, RunContext, StageOutcome
from groundkit.harness.run._cost import CostMeter
from groundkit.harness.run._hits import HitNormalizer, PerQueryHits
from groundkit.harness.run._ranking import ChunkTable, RankedRun

__all__ = ["run_stage", "user_failure"]

IntArray = npt.NDArray[np.int64]
_TAIL_CHARS = 600


def user_failure(stage: str, what: str, error: BaseException) -> StageFailed:
    """A stage failed because user code raised: one line, the last frames, the cause kept."""
    frames = traceback.format_exception(type(error), error, error.__traceback__)
    done = (
        f"called sys.exit({error.code!r})"
        if isinstance(error, SystemExit)
        else f"raised {type(error).__name__}: {error}"
    )
    failure = StageFailed(
        stage,
        f"{what} {done}",
        stderr_tail="".join(frames[-2:]).strip()[-_TAIL_CHARS:],
    )
    failure.__cause__ = error
    return failure


def _bare(stage: str, error: HarnessError) -> str:
    prefix = f"stage {stage!r}: "
    message = error.message.removeprefix(prefix)
    return f"{error.path}: {message}" if error.path else message


def run_stage(
    ctx: RunContext,
    outcome: StageOutcome,
    done: Mapping[str, StageOutcome],
    *,
    chunked: Callable[[StageChunks], None] | None = None,
) -> None:
    """Run ``outcome.config`` and fill ``outcome``; a :class:`StageFailed` propagates.

    ``chunked`` is called with the stage's chunks before they are indexed (the scorer starts
    work that depends only on them).

    Raises:
        HarnessError: The stage's configuration cannot be used (a target that does not import,
            a missing model, an invalid predictions file...).
        StageFailed: The retriever failed or returned hits that cannot be read.
    """
    stage = outcome.config
    kind = retriever_kind(stage.retriever.kind)
    meter = CostMeter(price=stage.price)
    with meter.setting_up():
        retriever = _build(kind, stage, _stage_context(ctx, stage, done, meter))
    with meter.indexing():
        if kind.chunked:
            meter.chunked_on(_index(ctx, stage, retriever, outcome, chunked))
        else:
            _own_passages(ctx, stage, retriever, outcome)
    # Only the passages the harness gave to index(): a stage reading an earlier stage's
    # passages (rerank, hybrid) indexed nothing, and a retriever's own index is its to count.
    meter.passages(outcome.passages.texts if kind.chunked and outcome.passages else None)
    queries = [Query(qid, text) for qid, text in zip(ctx.query_ids, ctx.queries, strict=True)]
    start = time.perf_counter()
    ctx.report(f"{stage.name}: retrieve", 0, len(queries))
    results, latencies = _search(stage, retriever, queries, ctx.settings.depth)
    meter.searched(time.perf_counter() - start, latencies, len(queries))
    _collect(ctx, stage, outcome, results)
    ctx.report(f"{stage.name}: retrieve", len(queries), len(queries))
    outcome.timings["retrieval"] = time.perf_counter() - start
    _attach_hooks(stage, retriever, outcome)
    if outcome.chunks is not None:
        outcome.chunk_count = len(outcome.chunks.table)
        outcome.indexed_documents = int(sorted_unique(outcome.chunks.table.docs).size)
    outcome.cost = meter.record(retriever, len(queries))


def _search(
    stage: StageConfig, retriever: Retriever, queries: Sequence[Query], depth: int
) -> tuple[Any, list[float] | None]:
    """The retriever's results, with each query's seconds when it searches one at a time.

    A retriever that declares ``searches_each_query`` (a plain per-query function, a user's
    object that sets it) is given one query per call, each call timed; any other is given the
    whole batch once (its latency is then attributed evenly from the batch).
    """
    try:
        if getattr(retriever, "searches_each_query", False) is not True:
            return retriever.search(queries, depth), None
        results: list[Any] = []
        seconds: list[float] = []
        for query in queries:
            start = time.perf_counter()
            got = retriever.search([query], depth)
            seconds.append(time.perf_counter() - start)
            if isinstance(got, str | bytes | Mapping) or not isinstance(got, Sequence):
                raise StageFailed(
                    stage.name,
                    f"search() must return one hit list per query, got {type(got).__name__}",
                )
            if len(got) != 1:
                raise StageFailed(stage.name, f"search() returned {len(got)} hit lists for 1 query")
            results.append(got[0])
        return results, seconds
    except (HarnessError, StageFailed):
        raise
    except (Exception, SystemExit) as error:  # sys.exit in user code fails the stage
        raise user_failure(stage.name, "the retriever", error) from error


def _stage_context(
    ctx: RunContext, stage: StageConfig, done: Mapping[str, StageOutcome], meter: CostMeter
) -> StageContext:
    def upstream(name: str) -> UpstreamStage:
        outcome = done.get(name)
        if outcome is None:
            raise HarnessError(f"stage {stage.name!r}: no earlier stage named {name!r}")
        return UpstreamStage(
            name=name, error=outcome.error, passages=outcome.passages, outcome=outcome
        )

    return StageContext(
        stage=stage.name,
        corpus=ctx.corpus,
        depth=ctx.settings.depth,
        level=ctx.settings.level,
        cache_dir=ctx.embedding_cache_dir,
        known_queries=ctx.known_queries,
        run=ctx,
        _progress=lambda phase, d, t: _progress(ctx, stage.name, meter, phase, d, t),
        _upstream=upstream,
    )


def _progress(
    ctx: RunContext, stage: str, meter: CostMeter, phase: str, done: int, total: int
) -> None:
    """A stage's progress: shown as ``<stage>: <phase>``, and followed by its cost meter."""
    meter.observe(phase, done, total)
    ctx.report(f"{stage}: {phase}", done, total)


def _build(kind: RetrieverKind, stage: StageConfig, context: StageContext) -> Retriever:
    try:
        retriever = kind.build(stage.retriever, context)
    except (HarnessError, StageFailed):
        raise
    except (Exception, SystemExit) as error:
        raise HarnessError(
            f"stage {stage.name!r}: the {kind.name} retriever cannot be built: "
            f"{type(error).__name__}: {error}"
        ) from error
    if not callable(getattr(retriever, "search", None)):
        raise HarnessError(
            f"stage {stage.name!r}: the {kind.name} kind built a {type(retriever).__name__}, "
            "which has no search(queries, depth) method"
        )
    return retriever


def _index(
    ctx: RunContext,
    stage: StageConfig,
    retriever: Retriever,
    outcome: StageOutcome,
    chunked: Callable[[StageChunks], None] | None,
) -> int:
    """Chunk (or reuse the run's chunks) and index them; returns the processes that chunked."""
    start = time.perf_counter()
    chunk_set, stage_chunks, chunk_workers = ctx.chunks_for(stage)
    outcome.timings["chunking"] = time.perf_counter() - start
    if not len(chunk_set):
        raise HarnessError(f"stage {stage.name!r}: the corpus has no text to index")
    outcome.passages, outcome.chunks = chunk_set, stage_chunks
    if chunked is not None:
        chunked(stage_chunks)
    index = getattr(retriever, "index", None)
    if callable(index):
        start = time.perf_counter()
        _calling(stage.name, "index", index, chunk_set)
        outcome.timings["indexing"] = time.perf_counter() - start
    return chunk_workers


def _calling(stage: str, hook: str, function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except (HarnessError, StageFailed):
        raise
    except (Exception, SystemExit) as error:  # sys.exit in user code fails the stage
        raise user_failure(stage, f"the retriever's {hook}()", error) from error


def _own_passages(
    ctx: RunContext, stage: StageConfig, retriever: Retriever, outcome: StageOutcome
) -> None:
    hook = getattr(retriever, "passages", None)
    if not callable(hook):
        return
    raw = _calling(stage.name, "passages", hook)
    if raw is not None:
        _passage_table(ctx, stage, raw, outcome)


def _passage_table(ctx: RunContext, stage: StageConfig, raw: Any, outcome: StageOutcome) -> None:
    """The chunk list of a stage from what its ``passages()`` returned (sorted, deduplicated)."""
    known = ctx.passage_tables.get(id(raw)) if isinstance(raw, ChunkSet) else None
    if known is not None:
        outcome.passages, outcome.chunks = known
        return
    if isinstance(raw, ChunkSet):
        codes, starts, ends = raw.doc_codes, raw.starts, raw.ends
    else:
        codes, starts, ends = _spans_of(ctx, stage, raw)
    keys = np.stack([codes, starts, ends], axis=1).reshape(-1, 3).astype(np.int64)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    table = ChunkTable(
        docs=unique[:, 0].copy(), starts=unique[:, 1].copy(), ends=unique[:, 2].copy()
    )
    outcome.chunks = StageChunks.build(table, len(ctx.doc_ids))
    outcome.passages = raw if isinstance(raw, ChunkSet) else ctx.chunk_set(table)
    # Rows the retriever knows (its passages) and rows of the sorted table, both ways.
    outcome.table_rows = inverse.reshape(-1).astype(np.int64)
    first = np.full(len(unique), -1, dtype=np.int64)
    first[outcome.table_rows[::-1]] = np.arange(len(outcome.table_rows) - 1, -1, -1)
    outcome.passage_rows = first


def _spans_of(
    ctx: RunContext, stage: StageConfig, items: Iterable[Any]
) -> tuple[IntArray, IntArray, IntArray]:
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise HarnessError(f"stage {stage.name!r}: passages() must return a list of passages")
    normalizer = HitNormalizer(ctx.corpus, ctx.doc_codes, stage.name, depth=2**62)
    try:
        docs, starts, ends, _, _ = normalizer.normalize("<passages>", list(items))
    except HarnessError as error:
        raise HarnessError(
            f"stage {stage.name!r}: passages(): {_bare(stage.name, error)}"
        ) from None
    if normalizer.unlocated:
        first = normalizer.unlocated[0]
        raise HarnessError(
            f"stage {stage.name!r}: passages(): {len(normalizer.unlocated)} passage(s) not found "
            f"in the corpus (first: passage {first.rank}: {first.text[:60]!r})"
        )
    return docs, starts, ends


def _collect(ctx: RunContext, stage: StageConfig, outcome: StageOutcome, results: Any) -> None:
    """Read what ``search`` returned into ``outcome.run`` (and ``outcome.unlocated``)."""
    if isinstance(results, PreparedRun):
        outcome.run, outcome.unlocated = results.run, list(results.unlocated)
        _fill_chunk_ids(outcome)
        return
    count = len(ctx.query_ids)
    if isinstance(results, str | bytes | Mapping) or not isinstance(results, Sequence):
        raise StageFailed(
            stage.name, f"search() must return one hit list per query, got {type(results).__name__}"
        )
    if len(results) != count:
        raise StageFailed(
            stage.name, f"search() returned {len(results)} hit lists for {count} queries"
        )
    normalizer = HitNormalizer(ctx.corpus, ctx.doc_codes, stage.name, ctx.settings.depth)
    per_query: list[PerQueryHits | None] = []
    try:
        for query_id, entry in zip(ctx.query_ids, results, strict=True):
            if entry is None:
                per_query.append(None)
            elif isinstance(entry, ChunkHits):
                per_query.append(_chunk_rows(ctx, stage, outcome, query_id, entry))
            else:
                per_query.append(normalizer.normalize(query_id, entry))
    except HarnessError as error:
        raise StageFailed(stage.name, _bare(stage.name, error)) from error
    outcome.run = RankedRun.from_lists(ctx.query_ids, per_query)
    outcome.unlocated = normalizer.unlocated
    _fill_chunk_ids(outcome)


def _chunk_rows(
    ctx: RunContext, stage: StageConfig, outcome: StageOutcome, query_id: str, hits: ChunkHits
) -> PerQueryHits:
    if outcome.chunks is None or outcome.passages is None:
        raise HarnessError(
            f"stage {stage.name!r}: query {query_id!r}: ChunkHits need the chunk set given to "
            "index() or returned by passages()"
        )
    rows = hits.rows[: ctx.settings.depth]
    scores = hits.scores[: ctx.settings.depth]
    size = len(outcome.passages) if outcome.table_rows is None else len(outcome.table_rows)
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= size):
        raise HarnessError(
            f"stage {stage.name!r}: query {query_id!r}: chunk row out of range (0..{size - 1})"
        )
    if not np.all(np.isfinite(scores)):
        raise HarnessError(f"stage {stage.name!r}: query {query_id!r}: scores must be finite")
    ids = rows if outcome.table_rows is None else outcome.table_rows[rows]
    table = outcome.chunks.table
    return table.docs[ids], table.starts[ids], table.ends[ids], scores, ids


def _fill_chunk_ids(outcome: StageOutcome) -> None:
    """Give span hits the row of the same span in the stage's chunk list, when it has one."""
    run = outcome.run
    if run is None or outcome.chunks is None or not np.any(run.chunk_ids < 0):
        return
    table = outcome.chunks.table
    lookup = {
        key: row
        for row, key in enumerate(
            zip(table.docs.tolist(), table.starts.tolist(), table.ends.tolist(), strict=True)
        )
    }
    ids = run.chunk_ids.copy()
    for index in np.flatnonzero(ids < 0).tolist():
        key = (int(run.docs[index]), int(run.starts[index]), int(run.ends[index]))
        ids[index] = lookup.get(key, -1)
    outcome.run = dataclasses.replace(run, chunk_ids=ids)


def _attach_hooks(stage: StageConfig, retriever: Retriever, outcome: StageOutcome) -> None:
    """Wrap the retriever's optional evidence hooks in the form the traces call them."""
    limit = getattr(retriever, "encoder_max_tokens", None)
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        outcome.encoder_max_tokens = limit
    run_info = getattr(retriever, "run_info", None)
    info = run_info() if callable(run_info) else None  # the model kinds: the device used
    if isinstance(info, dict):
        outcome.retriever_info = {str(k): v for k, v in info.items() if isinstance(v, str)}
    if outcome.chunks is None:
        return
    to_passage = outcome.passage_rows
    shares = getattr(retriever, "shares_query_term", None)
    if callable(shares):

        def shares_term(requests: list[tuple[int, int]]) -> list[bool]:
            asked = [(q, _row(to_passage, c)) for q, c in requests]
            return _answers(stage.name, "shares_query_term", shares(asked), len(asked), bool)

        outcome.shares_term = shares_term
    counter = getattr(retriever, "tokens_before", None)
    if callable(counter):

        def tokens_before(requests: list[tuple[int, int, int]]) -> list[int]:
            asked = [(_row(to_passage, c), max(0, q - s)) for c, s, q in requests]
            return _answers(stage.name, "tokens_before", counter(asked), len(asked), int)

        outcome.tokens_before = tokens_before


def _row(to_passage: IntArray | None, chunk: int) -> int:
    return chunk if to_passage is None else int(to_passage[chunk])


def _answers(stage: str, hook: str, values: Any, count: int, kind: type) -> list[Any]:
    answers = list(values)
    if len(answers) != count or not all(
        isinstance(v, kind | np.integer | np.bool_) and not (kind is int and isinstance(v, bool))
        for v in answers
    ):
        raise HarnessError(
            f"stage {stage!r}: {hook}() must return one {kind.__name__} per request ({count} asked)"
        )
    return [kind(v) for v in answers]
