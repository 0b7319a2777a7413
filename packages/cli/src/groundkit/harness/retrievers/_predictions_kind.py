"""The ``predictions`` kind: hits computed elsewhere, read from a JSON Lines or TREC run file.

A predictions file is input the user gives, like the judgments: a problem in it (an unknown
query or document, a bad span) is bad input naming the file and line (exit 2), not a failed
stage. Text hits that cannot be located are counted and listed like any stage's. A TREC run
written on an original dataset's ids (BEIR's ``4983`` for the adapted ``4983.txt``) is read
through an id map (:mod:`groundkit.harness.retrievers._trec_ids`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groundkit.harness._errors import HarnessError
from groundkit.harness.retrievers._builtin import PredictionsRetriever
from groundkit.harness.retrievers._predictions import read_predictions_jsonl
from groundkit.harness.retrievers._protocol import Query, StageContext
from groundkit.harness.retrievers._trec_ids import resolve_run_ids
from groundkit.harness.run._config import StageConfig
from groundkit.harness.run._context import PreparedRun, run_context
from groundkit.harness.run._context import RunContext as _Context
from groundkit.harness.run._hits import HitNormalizer, PerQueryHits
from groundkit.harness.run._ranking import RankedRun
from groundkit.judgments import JudgmentError, read_trec_run
from groundkit.judgments.trec import trec_ranking

__all__ = ["PredictionsStage"]


class PredictionsStage:
    """Hits read from ``settings.path`` (predictions JSON Lines, or a TREC run file).

    Args:
        settings: The predictions settings.
        context: The stage's context.
    """

    def __init__(self, settings: PredictionsRetriever, context: StageContext) -> None:
        self.settings = settings
        self.context = context

    def search(self, queries: Sequence[Query], depth: int) -> PreparedRun:
        """Read and check the file.

        Raises:
            HarnessError: An invalid line or hit (naming the file and line).
        """
        ctx = run_context(self.context.run)
        stage = ctx.settings.stage(self.context.stage)
        path = self.settings.path
        if self.settings.resolved_format == "trec":
            return PreparedRun(_trec_stage(ctx, stage, self.settings))
        lines = read_predictions_jsonl(path, stage=stage.name, known_queries=ctx.known_queries)
        normalizer = HitNormalizer(ctx.corpus, ctx.doc_codes, stage.name, depth, path=path)
        per_query: list[PerQueryHits | None] = []
        for query in queries:
            entry = lines.get(query.query_id)
            per_query.append(
                None
                if entry is None
                else normalizer.normalize(query.query_id, entry[1], line=entry[0])
            )
        return PreparedRun(RankedRun.from_lists(ctx.query_ids, per_query), normalizer.unlocated)


def _trec_stage(ctx: _Context, stage: StageConfig, settings: PredictionsRetriever) -> RankedRun:
    path = settings.path
    try:
        run = read_trec_run(path)
        rankings = resolve_run_ids(
            {query_id: trec_ranking(docs)[: ctx.settings.depth] for query_id, docs in run.items()},
            stage=stage.name,
            path=path,
            known_queries=ctx.known_queries,
            corpus=ctx.doc_codes,
            id_map=settings.id_map,
            corpus_source=ctx.corpus.source,
        )
    except HarnessError:
        raise
    except JudgmentError as error:
        # A bad run line or id map found by core is bad input (exit 2), not a failed stage.
        raise HarnessError(error.message, path=error.path, line=error.line) from None
    per_query: list[PerQueryHits | None] = []
    for query_id in ctx.query_ids:
        ranking = rankings.get(query_id)
        if ranking is None:
            per_query.append(None)
            continue
        code_array = np.asarray([ctx.doc_codes[doc] for doc, _ in ranking], dtype=np.int64)
        ends = ctx.doc_lengths[code_array] if ranking else np.zeros(0, dtype=np.int64)
        if np.any(ends == 0):
            raise HarnessError(
                f"stage {stage.name!r}: query {query_id!r}: an empty document cannot be a hit",
                path=path,
            )
        per_query.append(
            (
                code_array,
                np.zeros(len(ranking), dtype=np.int64),
                ends,
                np.asarray([score for _, score in ranking], dtype=np.float64),
                np.full(len(ranking), -1, dtype=np.int64),
            )
        )
    # trec_ranking ordered ties by the file's own ids, as trec_eval does on that file.
    return RankedRun.from_lists(ctx.query_ids, per_query, ties_ordered=True)
