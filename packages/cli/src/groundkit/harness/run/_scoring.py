"""Per-query scores of a stage: chunk level (quote-anchored spans) or document level.

Metric names are the same at both levels. At document level they are computed by
:func:`groundkit.judgments.evaluate_trec` (trec_eval semantics) on the hits collapsed to
documents, with these trec_eval measures:

=================  ===============
groundkit name     trec_eval name
=================  ===============
``recall@k``       ``recall_k``
``precision@k``    ``P_k``
``ndcg@k``         ``ndcg_cut_k``
``hit@k``          ``success_k``
``mrr``            ``recip_rank``
``map``            ``map``
``rprec``          ``Rprec``
=================  ===============

Documents with equal scores are ranked as trec_eval ranks them: score descending, then
document id descending (``comp_sim_docno`` in trec_eval's ``form_res_rels.c``), so that a
report, ``grk eval trec`` and trec_eval give the same figures on the same scores. Only hits
with equal scores next to each other are reordered: a predictions file whose scores do not
decrease keeps its own order between them. That order is then passed to trec_eval with
strictly decreasing scores, so its re-sorting cannot move anything. Document qrels come from
the gold: each gold document with the largest grade of its quotes, resolved or not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from groundkit.harness.run._hits import PerQueryHits
from groundkit.harness.run._ranking import ChunkTable, RankedRun
from groundkit.judgments import evaluate_trec, parse_metric
from groundkit.judgments.metrics import ChunkSpans, GoldTable, HitTable, HitTokens, score_table
from groundkit.judgments.trec import trec_tie_order

__all__ = [
    "chunk_metric_names",
    "collapse_to_documents",
    "document_metric_names",
    "measured_columns",
    "score_chunk_level",
    "score_document_level",
    "trec_measure_for",
    "trec_tie_order",
]

FloatArray = npt.NDArray[np.float64]
_SPAN_METRICS = ("recall", "hit", "precision", "ndcg", "span_recall", "span_precision")
_DOC_METRICS = ("recall", "hit", "precision", "ndcg")
_TREC_FAMILY = {"recall": "recall", "precision": "P", "ndcg": "ndcg_cut", "hit": "success"}
_TREC_PLAIN = {"mrr": "recip_rank", "map": "map", "rprec": "Rprec"}


def _merge(names: Sequence[str], extra: Sequence[str]) -> list[str]:
    out = list(dict.fromkeys(names))
    out.extend(name for name in extra if name not in out)
    return out


def chunk_metric_names(
    cutoffs: Sequence[int], budgets: Sequence[int], headline: Sequence[str]
) -> list[str]:
    """Every metric of a chunk-level report.

    Cutoffs x (recall, hit, precision, ndcg, span_recall, span_precision), mrr, map, rprec,
    precision_omega, budgets x (recall, ndcg), then any headline metric not yet listed.
    ``precision_omega`` describes the stage's chunker (it cannot be a headline metric), so it is
    always recorded, for the stages that have a chunk list.
    """
    names = [f"{kind}@{k}" for k in cutoffs for kind in _SPAN_METRICS]
    names += ["mrr", "map", "rprec", "precision_omega"]
    names += [f"{kind}@{b}c" for b in budgets for kind in ("recall", "ndcg")]
    return _merge(names, headline)


def document_metric_names(cutoffs: Sequence[int], headline: Sequence[str]) -> list[str]:
    """Every metric of a document-level report.

    Cutoffs x (recall, hit, precision, ndcg), mrr, map, rprec, then any headline metric not yet
    listed.
    """
    names = [f"{kind}@{k}" for k in cutoffs for kind in _DOC_METRICS]
    names += ["mrr", "map", "rprec"]
    return _merge(names, headline)


def trec_measure_for(metric: str) -> str:
    """The trec_eval measure computing a document-level metric (``ndcg@10`` -> ``ndcg_cut_10``)."""
    spec = parse_metric(metric)
    if spec.kind in _TREC_PLAIN:
        return _TREC_PLAIN[spec.kind]
    if spec.kind in _TREC_FAMILY and spec.cutoff is not None:
        return f"{_TREC_FAMILY[spec.kind]}_{spec.cutoff}"
    raise ValueError(f"metric {metric!r} has no document-level form")


def score_chunk_level(
    gold: GoldTable,
    run: RankedRun,
    doc_ids: tuple[str, ...],
    metrics: Sequence[str],
    fraction: float,
    chunks: ChunkTable | None = None,
    tokens: HitTokens | None = None,
) -> FloatArray:
    """``(queries, metrics)`` values in ``run.query_ids`` order (= the gold table's order).

    ``chunks`` is the stage's chunk list. Without one (a stage that brings its own spans) a
    metric that reads it (``precision_omega``) is not measurable: its column is NaN, which
    :func:`measured_columns` leaves out of the report. ``tokens`` (the corpus and the run's
    tokenizer) counts the tokens of the token budgets (``recall@Nt``, ``ndcg@Nt``).
    """
    hits = HitTable(
        query_ids=run.query_ids,
        offsets=run.offsets,
        docs=run.docs,
        starts=run.starts,
        ends=run.ends,
        doc_ids=doc_ids,
    )
    spans = (
        None
        if chunks is None
        else ChunkSpans(docs=chunks.docs, starts=chunks.starts, ends=chunks.ends, doc_ids=doc_ids)
    )
    measurable = [m for m in metrics if spans is not None or not parse_metric(m).needs_chunks]
    table = score_table(
        gold, hits, measurable, min_overlap_fraction=fraction, chunks=spans, tokens=tokens
    )
    if len(measurable) == len(metrics):
        return table.values
    values = np.full((len(run.query_ids), len(metrics)), np.nan, dtype=np.float64)
    where = {name: column for column, name in enumerate(metrics)}
    values[:, [where[name] for name in table.metrics]] = table.values
    return values


def measured_columns(
    values: FloatArray | None, metrics: Sequence[str]
) -> tuple[FloatArray | None, list[str]]:
    """The columns of a stage's values that were measured (not NaN), with their names.

    A metric not measurable for a stage (NaN, see :func:`score_chunk_level`) is left out of
    its per-query scores and aggregates, as a report leaves out any metric a stage did not
    record.
    """
    if values is None:
        return None, list(metrics)
    keep = [i for i in range(len(metrics)) if not np.isnan(values[:, i]).any()]
    if len(keep) == len(metrics):
        return values, list(metrics)
    return values[:, keep], [metrics[i] for i in keep]


def collapse_to_documents(run: RankedRun, doc_lengths: npt.NDArray[np.int64]) -> RankedRun:
    """Keep each document's first hit as a whole-document span, ranked as trec_eval ranks.

    Ties are broken by document id descending (see :func:`trec_tie_order`), unless the run
    says its ties already follow trec_eval on the ids it was written with.
    """
    per_query: list[PerQueryHits | None] = []
    for query in range(len(run.query_ids)):
        if not run.returned[query]:
            per_query.append(None)
            continue
        rows = run.rows(query)
        docs = run.docs[rows]
        _, first = np.unique(docs, return_index=True)
        keep = np.sort(first) + rows.start
        if not run.ties_ordered:
            keep = keep[trec_tie_order(run.docs[keep], run.scores[keep])]
        kept_docs = run.docs[keep]
        per_query.append(
            (
                kept_docs,
                np.zeros(keep.size, dtype=np.int64),
                doc_lengths[kept_docs],
                run.scores[keep],
                run.chunk_ids[keep],
            )
        )
    return RankedRun.from_lists(run.query_ids, per_query, ties_ordered=run.ties_ordered)


def score_document_level(
    qrels: Mapping[str, Mapping[str, int]],
    run: RankedRun,
    doc_ids: tuple[str, ...],
    metrics: Sequence[str],
) -> FloatArray:
    """``(queries, metrics)`` values of a collapsed run, in ``run.query_ids`` order."""
    measures = [trec_measure_for(m) for m in metrics]
    trec_run: dict[str, dict[str, float]] = {}
    for query, query_id in enumerate(run.query_ids):
        codes = run.docs[run.rows(query)].tolist()
        if codes:
            count = len(codes)
            trec_run[query_id] = {doc_ids[c]: float(count - i) for i, c in enumerate(codes)}
    result = evaluate_trec(
        {q: qrels[q] for q in run.query_ids}, trec_run, sorted(set(measures)), all_queries=True
    )
    values = np.zeros((len(run.query_ids), len(metrics)), dtype=np.float64)
    for row, query_id in enumerate(run.query_ids):
        scores = result.per_query[query_id]
        values[row] = [scores[m] for m in measures]
    return values
