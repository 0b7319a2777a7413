"""A stage's part of the report: per-query results with their traces, and the stage entry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from groundkit.harness._heap import release_free_heap
from groundkit.harness.analysis._duplicates import DuplicateFinder
from groundkit.harness.analysis._evidence import QuoteGold, trace_run
from groundkit.harness.run._context import RunContext, StageOutcome
from groundkit.harness.run._ranking import RankedRun
from groundkit.judgments import QueryResult, StageReport
from groundkit.judgments.report import (
    HitList,
    MetricAggregate,
    NoteCode,
    ReportNote,
    RetrieverRecord,
)

__all__ = ["rebuilt", "stage_report", "stage_results", "unlocated_note"]

_Model = TypeVar("_Model", bound=BaseModel)


def rebuilt(model: _Model, **changes: Any) -> _Model:
    """``model`` with some fields changed, validated (``model_copy(update=...)`` is not).

    The models it holds are kept as they are (pydantic does not validate an instance of the
    field's own class again), so only the changed fields and the model's own validators cost
    anything. Every report the harness builds goes through validation this way, which is what
    lets the writer skip reading the text back (``checked_report_json(revalidate=False)``).
    """
    return type(model).model_validate({**dict(model), **changes})


def stage_results(
    ctx: RunContext,
    outcome: StageOutcome,
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
    # All the lists at once: one vectorised pass, then a closer look at the few that need it.
    duplicate_lists = duplicates.duplicates_in_lists(run.docs, run.starts, run.ends, run.offsets)
    # The stage's array work is done: its freed scratch goes back to the system before the
    # results and the report are made, instead of staying resident beneath them (see there).
    release_free_heap()
    for query, query_id in enumerate(run.query_ids):
        rows = run.rows(query)
        # The hits as columns (views of the run's arrays, the corpus's ids shared): a
        # SciFact run's 30,000 hit objects took 24 MiB of its peak and a tenth of its time.
        hits = HitList(
            ctx.doc_ids,
            run.docs[rows],
            run.starts[rows],
            run.ends[rows],
            run.scores[rows],
            {i: rank for i, rank in enumerate(duplicate_lists[query]) if rank is not None},
        )
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


def stage_report(
    outcome: StageOutcome,
    results: list[QueryResult],
    aggregates: dict[str, MetricAggregate],
    *,
    baseline: bool,
) -> StageReport:
    """The report entry of a stage (comparisons are added later, across stages)."""
    stage = outcome.config
    return StageReport(
        name=stage.name,
        kind=stage.retriever.kind,
        baseline=baseline,
        retriever=RetrieverRecord.from_settings(stage.retriever, **outcome.retriever_info),
        chunker=stage.chunker,  # recorded in full (every field), as 2.0 wrote it
        encoder_max_tokens=outcome.encoder_max_tokens,
        chunk_count=outcome.chunk_count,
        indexed_documents=outcome.indexed_documents,
        queries=results,
        aggregates=aggregates,
        timings={k: round(v, 6) for k, v in outcome.timings.items()},
        error=outcome.error,
        unlocated=outcome.unlocated,
        cost=outcome.cost,
    )


def unlocated_note(stage: StageReport) -> ReportNote | None:
    """The note saying a stage's text hits could not all be located (``None``: they were)."""
    if not stage.unlocated:
        return None
    first = stage.unlocated[0]
    where = f"document {first.doc!r}" if first.doc is not None else "the corpus"
    count = len(stage.unlocated)
    text = (
        f"Stage {stage.name!r}: {count} hit{'s' if count > 1 else ''} given as text could not "
        f"be located and {'are' if count > 1 else 'is'} left out of its ranking (first: query "
        f"{first.query_id!r} hit {first.rank}, not found in {where}: {first.text[:60]!r}); "
        "its scores are not comparable until its text matches the corpus (see the stage's "
        "'unlocated' list)."
    )
    return ReportNote(code=NoteCode.UNLOCATED_HITS, level="caution", text=text)
