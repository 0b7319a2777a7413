"""A stage of a report as a TREC-style run and its qrels, for trec_eval, ranx and ir_measures.

**Document level** (a document-level report, or ``level="document"`` on a chunk-level one):
the run lists each document once per query, at the rank of its first hit (as the harness's
document-level scoring collapses hits); the qrels give every gold document of every
answerable query the largest grade of its quotes, resolved or not — the qrels the report was
scored with. trec_eval's ``ndcg_cut``, ``recall``, ``P``, ``success``, ``recip_rank``, ``map``
and ``Rprec`` on these files are the report's ``ndcg@k``, ``recall@k``, ``precision@k``,
``hit@k``, ``mrr``, ``map`` and ``rprec`` for every query.

**Chunk level**: each hit is a chunk named by its span, :func:`chunk_id` (``doc#start-end``);
the qrels judge every exported chunk of every query: its relevance is the largest grade of the
gold quotes it touches (the report's own overlap rule, with the report's
``min_overlap_fraction``) or 0. So ``P_k``, ``success_k`` and ``recip_rank`` equal the
report's ``precision@k``, ``hit@k`` and ``mrr``. Recall, nDCG, MAP and R-precision do not:
the report credits each gold *quote* once (two chunks touching one quote count once, one chunk
touching two quotes counts twice, and the denominators count quotes, also never retrieved
ones), while chunk qrels count judged *chunks*, and only the retrieved ones.

**Order and scores**: the run reproduces the report's ranking under every tool's sort (score
descending, ties broken by id in trec_eval and ranx in different directions). The scores are
the report's, except that a score that would not be strictly below the previous one in single
precision — trec_eval before version 10, which pytrec_eval bundles, reads scores as 32-bit
floats — is lowered to the next 32-bit float below it (``adjusted`` counts them). A hit whose
id appeared earlier in the same list (a repeated span) is left out (``repeated``), since a run
lists an id once per query.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from groundkit.judgments._errors import JudgmentError, ReportError
from groundkit.judgments.metrics._hits import overlaps
from groundkit.judgments.report._models import EvalReport, QueryInfo, ReportHit
from groundkit.judgments.trec._id_map import IdMap
from groundkit.judgments.trec._io import TrecRun, trec_tie_order

__all__ = [
    "ExportLevel",
    "StageExport",
    "chunk_id",
    "export_stage",
    "parse_chunk_id",
    "with_original_ids",
]

ExportLevel = Literal["document", "chunk"]


@dataclass(frozen=True)
class StageExport:
    """One stage's run and the qrels that score it as the report did.

    Attributes:
        stage: The stage name (also the run's ``run_id``).
        level: ``document`` (ids are document ids) or ``chunk`` (ids are :func:`chunk_id`).
        run: ``{query_id: {id: score}}``, each query's ids in the report's rank order.
        qrels: ``{query_id: {id: relevance}}``.
        query_count: Answerable queries of the report (the denominator of its means).
        missing: Answerable queries with no hit (absent from the run; the report scores them 0,
            as trec_eval ``-c`` or ranx's ``make_comparable=True`` do).
        repeated: Hits left out because their id was listed earlier for the same query.
        adjusted: Scores lowered so that every tool re-derives the report's order.
    """

    stage: str
    level: ExportLevel
    run: TrecRun
    qrels: dict[str, dict[str, int]]
    query_count: int
    missing: tuple[str, ...]
    repeated: int
    adjusted: int


def chunk_id(doc: str, start: int, end: int) -> str:
    """The id of a chunk in a chunk-level export: ``doc#start-end`` (end exclusive)."""
    return f"{doc}#{start}-{end}"


def parse_chunk_id(text: str) -> tuple[str, int, int]:
    """The ``(doc, start, end)`` of a :func:`chunk_id` (the document id may contain ``#``).

    Raises:
        JudgmentError: ``text`` is not ``doc#start-end``.
    """
    doc, hash_sign, span = text.rpartition("#")
    start, dash, end = span.partition("-")
    if not (doc and hash_sign and dash and start.isdigit() and end.isdigit()):
        raise JudgmentError(f"{text!r} is not a chunk id 'doc#start-end'")
    return doc, int(start), int(end)


def strict_scores(scores: Sequence[float]) -> tuple[list[float], int]:
    """Scores strictly decreasing in single and double precision, and how many changed.

    A score not strictly below its predecessor in 32-bit floats becomes the next 32-bit float
    below the predecessor; if a score does not fit a 32-bit float, the query's scores become
    ``n, n - 1, ..., 1``.
    """
    with np.errstate(over="ignore"):
        single = np.asarray(scores, dtype=np.float32)
    if not np.all(np.isfinite(single)):
        count = len(scores)
        return [float(count - rank) for rank in range(count)], count
    if bool(np.all(single[1:] < single[:-1])):
        return list(scores), 0
    out: list[float] = []
    adjusted = 0
    below = np.float32(-np.inf)
    previous: np.float32 | None = None
    for score, as_single in zip(scores, single.tolist(), strict=True):
        if previous is None or np.float32(as_single) < previous:
            out.append(float(score))
            previous = np.float32(as_single)
        else:
            previous = np.nextafter(previous, below)
            out.append(float(previous))
            adjusted += 1
    return out, adjusted


def _relevance(hit: ReportHit, query: QueryInfo, fraction: float) -> int:
    grade = 0
    for gold in query.gold:
        if (
            gold.doc == hit.doc
            and gold.grade > grade
            and any(
                overlaps(hit.start, hit.end, start, end, min_overlap_fraction=fraction)
                for start, end in gold.spans
            )
        ):
            grade = gold.grade
    return grade


def _document_qrels(query: QueryInfo) -> dict[str, int]:
    qrel: dict[str, int] = {}
    for gold in query.gold:
        qrel[gold.doc] = max(qrel.get(gold.doc, 0), gold.grade)
    return qrel


def export_stage(
    report: EvalReport, stage: str, *, level: ExportLevel | None = None
) -> StageExport:
    """The run of one stage and the qrels that score it as the report did.

    See the module documentation for the ids, the relevance and which measures agree.

    Args:
        report: The report.
        stage: The stage's name.
        level: ``document`` or ``chunk``; default: the report's level. A chunk-level report
            can be exported at document level (hits collapsed to documents), not the reverse.

    Returns:
        The run and qrels.

    Raises:
        ReportError: An unknown stage (the message lists the stages), a failed stage, a stage
            with no hits, or chunk level asked of a document-level report.
    """
    found = report.stage(stage)
    if found.error is not None:
        raise ReportError(f"stage {stage!r} failed in this report, so it has no run: {found.error}")
    chosen: ExportLevel = report.run.level if level is None else level
    if chosen == "chunk" and report.run.level == "document":
        raise ReportError(
            "a document-level report records whole documents, not chunks; export it at "
            "document level"
        )
    if not any(result.hits for result in found.queries):
        raise ReportError(f"stage {stage!r} has no hits in the report, so there is no run")
    queries = {query.query_id: query for query in report.queries if query.answerable}
    fraction = report.run.min_overlap_fraction
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    if chosen == "document":
        qrels = {query_id: _document_qrels(query) for query_id, query in queries.items()}
    repeated = adjusted = 0
    for result in found.queries:
        seen: dict[str, ReportHit] = {}
        for hit in result.hits:
            key = hit.doc if chosen == "document" else chunk_id(hit.doc, hit.start, hit.end)
            if key not in seen:
                seen[key] = hit
            elif chosen == "chunk":  # at document level, later chunks of a document are not
                repeated += 1
        if not seen:
            continue
        keys, hits = list(seen), list(seen.values())
        if chosen == "document" and report.run.level == "chunk":
            # Collapsed as the harness collapses a run it scores at document level.
            order = trec_tie_order(keys, [hit.score for hit in hits]).tolist()
            keys, hits = [keys[i] for i in order], [hits[i] for i in order]
        scores, changed = strict_scores([hit.score for hit in hits])
        adjusted += changed
        run[result.query_id] = dict(zip(keys, scores, strict=True))
        if chosen == "chunk":
            query = queries[result.query_id]
            qrels[result.query_id] = {
                key: _relevance(hit, query, fraction) for key, hit in seen.items()
            }
    return StageExport(
        stage=stage,
        level=chosen,
        run=TrecRun(run, run_id=stage),
        qrels=qrels,
        query_count=len(queries),
        missing=tuple(query_id for query_id in queries if query_id not in run),
        repeated=repeated,
        adjusted=adjusted,
    )


def with_original_ids(export: StageExport, id_map: IdMap) -> StageExport:
    """A document-level export written with the original dataset's ids, through its id map.

    The scores are kept: an export's scores already strictly decrease down each ranking (see
    ``adjusted``), so no tool reorders a ranking whose ids were renamed.

    Raises:
        JudgmentError: A chunk-level export (its ids are spans of groundkit's documents), or
            an id the map did not make.
    """
    if export.level != "document":
        raise JudgmentError("original ids exist for documents only: export at document level")
    doc, query = id_map.originals()
    run = TrecRun(
        {query(q): {doc(d): score for d, score in docs.items()} for q, docs in export.run.items()},
        run_id=export.run.run_id,
    )
    qrels = {
        query(q): {doc(d): grade for d, grade in docs.items()} for q, docs in export.qrels.items()
    }
    return dataclasses.replace(
        export, run=run, qrels=qrels, missing=tuple(query(q) for q in export.missing)
    )
