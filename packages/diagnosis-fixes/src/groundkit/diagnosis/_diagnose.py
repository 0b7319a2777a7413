"""Diagnosis of one stage: every gold quote missed at k goes into the first bucket it fits.

The order of the buckets is part of the contract (see :data:`BUCKETS` and the README):

1. gold not resolvable: the quote has no span in its document (a judgment defect);
2. document never indexed: the trace says no chunk of the stage comes from its document;
3. split by the chunker: no chunk holds at least half of the quote's span;
4. beyond the encoder's window: the quote starts at or past ``encoder_max_tokens`` tokens
   into its best chunk (dense stages);
5. ranked just below the cutoff: its first touching hit ranks in ``(k, 5k]``;
6. found by another stage: another successful stage of the report finds it within k;
7. vocabulary mismatch: its best chunk shares no analysed term with the query (lexical stages);
8. crowded out by near-duplicates: the top k hold a hit marked as a near-duplicate of an
   earlier one;
9. not retrieved: none of the above.

A bucket whose measurement the stage lacks altogether is ``None`` (shown as —), never zero; a
miss lacking the measurement of a bucket the stage does measure goes on to the next bucket and
is counted in that bucket's ``unmeasured``.

At document level a miss is a gold *document* (the quotes of a query sharing a document count
once), so counts, weights, rates and replays agree with the report's recall@k, trec_eval's
``recall_k`` over documents; see :mod:`groundkit.diagnosis._quotes`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from groundkit.diagnosis._diagnose_text import _OVERLAP_NOTE, POOL_FACTOR, SPLIT_SHARE, shorten
from groundkit.diagnosis._errors import DiagnosisError
from groundkit.diagnosis._evidence import _Evidence, _example, _weight
from groundkit.diagnosis._hashing import config_hash, items_hash
from groundkit.diagnosis._models import (
    BUCKET_TITLES,
    BUCKETS,
    Bucket,
    BucketName,
    Diagnosis,
    StageSnapshot,
)
from groundkit.diagnosis._quotes import (
    QuoteCase,
    StageQuotes,
    case_indices,
    report_memo,
)
from groundkit.diagnosis.predictions._rerun import RerunStage
from groundkit.judgments import EvalReport, StageReport

__all__ = ["POOL_FACTOR", "SPLIT_SHARE", "default_stage", "diagnose", "shorten"]


def _views(report: EvalReport) -> dict[str, StageQuotes]:
    return dict(report_memo(report).views)


def _pick_default(views: Mapping[str, StageQuotes], k: int) -> str:
    best: tuple[float, str] | None = None
    for name, view in views.items():
        value = view.mean_recall(k)
        if best is None or value > best[0]:
            best = (value, name)
    if best is None:
        raise DiagnosisError("every stage of the report failed: nothing to diagnose")
    return best[1]


def default_stage(report: EvalReport, *, k: int = 10) -> str:
    """The stage diagnosed when none is named: the highest mean recall@k (ties: the earlier).

    Raises:
        DiagnosisError: Every stage failed.
    """
    return _pick_default(_views(report), k)


def _unknown_stage(report: EvalReport, name: str, source: str | None) -> DiagnosisError:
    known = ", ".join(s.name for s in report.stages)
    return DiagnosisError(f"no stage named {name!r} (stages: {known})", path=source)


def _reasons(
    report: EvalReport, stage: StageReport, k: int, has_others: bool
) -> dict[BucketName, str | None]:
    traces = [t for result in stage.queries for t in result.evidence]

    def recorded(field: str) -> bool:
        return any(getattr(t, field) is not None for t in traces)

    no_chunks = (
        "not measurable: the stage records no chunk list (its retriever brings its own spans)"
    )
    reasons: dict[BucketName, str | None] = dict.fromkeys(BUCKETS)
    if not recorded("doc_indexed"):
        reasons["document-not-indexed"] = no_chunks
    if not recorded("best_chunk_share"):
        reasons["split-by-chunker"] = no_chunks
    if stage.encoder_max_tokens is None or not recorded("tokens_before_quote"):
        reasons["beyond-encoder-window"] = (
            "not measurable: no encoder window recorded for this stage (not a dense stage, "
            "or an external one)"
        )
    if report.run.depth <= k:
        reasons["just-below-cutoff"] = (
            f"not measurable: only {report.run.depth} hits recorded per query (k = {k})"
        )
    if not has_others:
        reasons["found-by-other-stage"] = "not measurable: no other successful stage in the report"
    if not recorded("shares_query_term"):
        reasons["vocabulary-mismatch"] = (
            "not measurable: no query-term overlap recorded for this stage (not a lexical stage)"
        )
    return reasons


class _Classifier:
    """Puts each miss of the diagnosed stage into its bucket."""

    def __init__(
        self,
        view: StageQuotes,
        k: int,
        reasons: Mapping[BucketName, str | None],
        other_found: Mapping[str, set[tuple[str, int]]],
    ) -> None:
        self.view = view
        self.k = k
        self.reasons = reasons
        self.other_found = other_found
        self.max_tokens = view.stage.encoder_max_tokens
        self.unmeasured: dict[BucketName, int] = dict.fromkeys(BUCKETS, 0)

    def found_by(self, case: QuoteCase) -> list[str]:
        return [name for name, keys in self.other_found.items() if case.key in keys]

    def _check(self, bucket: BucketName, value: object, fits: Callable[[], bool]) -> bool:
        if self.reasons[bucket] is not None:
            return False
        if value is None:
            self.unmeasured[bucket] += 1
            return False
        return fits()

    def classify(self, case: QuoteCase) -> BucketName:
        k = self.k
        trace = case.trace
        if not case.gold.resolved:
            return "gold-not-resolvable"
        indexed = trace.doc_indexed if trace else None
        if self._check("document-not-indexed", indexed, lambda: indexed is False):
            return "document-not-indexed"
        share = trace.best_chunk_share if trace else None
        if self._check(
            "split-by-chunker", share, lambda: share is not None and share < SPLIT_SHARE
        ):
            return "split-by-chunker"
        before = trace.tokens_before_quote if trace else None
        limit = self.max_tokens
        if self._check(
            "beyond-encoder-window",
            before,
            lambda: before is not None and limit is not None and before >= limit,
        ):
            return "beyond-encoder-window"
        rank = case.first_rank
        if (
            self.reasons["just-below-cutoff"] is None
            and rank is not None
            and k < rank <= POOL_FACTOR * k
        ):
            return "just-below-cutoff"
        if self.reasons["found-by-other-stage"] is None and self.found_by(case):
            return "found-by-other-stage"
        shares = trace.shares_query_term if trace else None
        if self._check("vocabulary-mismatch", shares, lambda: shares is False):
            return "vocabulary-mismatch"
        if self.view.top_has_duplicate(case.query.query_id, k):
            return "crowded-by-duplicates"
        return "not-retrieved"


def _recorded(view: StageQuotes, metric: str) -> dict[str, float] | None:
    """The report's own per-query scores on ``metric``, when every result has one."""
    results = list(view.results.values())
    if not results or any(metric not in r.scores for r in results):
        return None
    return {r.query_id: r.scores[metric] for r in results}


def diagnose(
    report: EvalReport,
    stage: str | None = None,
    *,
    k: int = 10,
    examples: int = 3,
    source: str | Path | None = None,
    reruns: Sequence[RerunStage] = (),
) -> Diagnosis:
    """Where ``stage`` loses gold evidence at cutoff ``k``, and what each fix could gain.

    Args:
        report: The evaluation report.
        stage: The stage to diagnose (default: :func:`default_stage`, the highest recall@k).
        k: The cutoff (a quote is missed when no hit within rank ``k`` touches it).
        examples: Examples kept per bucket.
        source: Where the report came from (messages and the record).
        reruns: The stage re-run with chunk fixes applied (the harness's
            ``rerun_chunk_fixes``): those fixes are then replayed exactly from the re-runs'
            hits instead of estimated.

    Returns:
        The diagnosis; rank its fixes with :func:`~groundkit.diagnosis.fixes`.

    Raises:
        DiagnosisError: Unknown or failed stage, or a bad ``k``/``examples``.
    """
    where = None if source is None else str(source)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise DiagnosisError(f"k must be a positive integer, got {k!r}", path=where)
    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 0:
        raise DiagnosisError(f"examples must be an integer >= 0, got {examples!r}", path=where)
    views = _views(report)
    name = _pick_default(views, k) if stage is None else stage
    if name not in {s.name for s in report.stages}:
        raise _unknown_stage(report, name, where)
    target_stage = report.stage(name)
    if target_stage.error is not None:
        raise DiagnosisError(
            f"stage {name!r} failed in this run ({target_stage.error}): nothing to diagnose",
            path=where,
        )
    view = views[name]
    others = [v for n, v in views.items() if n != name]
    reasons = _reasons(report, target_stage, k, bool(others))
    classifier = _Classifier(view, k, reasons, {o.stage.name: o.found_keys(k) for o in others})
    misses: dict[BucketName, list[QuoteCase]] = {b: [] for b in BUCKETS}
    found_by: dict[tuple[str, int], list[str]] = {}
    missed = [case for case in view.cases if not case.found(k)]
    for case in missed:
        bucket = classifier.classify(case)
        misses[bucket].append(case)
        if bucket == "found-by-other-stage":
            found_by[case.key] = classifier.found_by(case)
    buckets = [
        _bucket(
            position, b, misses[b], reasons[b], classifier.unmeasured[b], missed, examples, found_by
        )
        for position, b in enumerate(BUCKETS, start=1)
    ]
    metric = f"recall@{k}"
    recall_per_query = view.per_query_recall(k)
    recorded = _recorded(view, metric)
    notes = _notes(report, view, k, recorded, recall_per_query)
    snapshot = StageSnapshot(
        kind=target_stage.kind,
        # As recorded (an older report's partial chunker too): its config_hash stays the same.
        retriever=target_stage.retriever.as_dict(),
        chunker=target_stage.chunker_record,
        encoder_max_tokens=target_stage.encoder_max_tokens,
    )
    evidence = _Evidence(report, view, others, k, misses, reasons, reruns).build()
    return Diagnosis(
        report=where,
        stage=name,
        config=snapshot,
        level=report.run.level,
        k=k,
        metric=metric,
        query_count=view.query_count,
        single_quote=all(
            len(case_indices(q.gold, level=report.run.level)) == 1
            for q in report.queries
            if q.answerable
        ),
        gold_count=len(view.cases),
        found_count=len(view.cases) - len(missed),
        miss_count=len(missed),
        recall=view.mean_recall(k),
        recorded_recall=(
            None
            if recorded is None or not view.query_count
            else math.fsum(recorded.values()) / view.query_count
        ),
        items_hash=items_hash(recorded if recorded is not None else recall_per_query, metric),
        config_hash=config_hash(snapshot.model_dump(mode="json")),
        other_stages=[o.stage.name for o in others],
        buckets=buckets,
        evidence=evidence,
        notes=notes,
    )


def _bucket(
    position: int,
    name: BucketName,
    cases: Sequence[QuoteCase],
    reason: str | None,
    unmeasured: int,
    missed: Sequence[QuoteCase],
    examples: int,
    found_by: Mapping[tuple[str, int], list[str]],
) -> Bucket:
    if reason is not None:
        return Bucket(
            name=name,
            position=position,
            title=BUCKET_TITLES[name],
            count=None,
            share=None,
            weight=None,
            reason=reason,
        )
    return Bucket(
        name=name,
        position=position,
        title=BUCKET_TITLES[name],
        count=len(cases),
        share=len(cases) / len(missed) if missed else 0.0,
        weight=_weight(cases),
        unmeasured=unmeasured,
        examples=[_example(c, found_by.get(c.key, [])) for c in cases[:examples]],
    )


def _notes(
    report: EvalReport,
    view: StageQuotes,
    k: int,
    recorded: Mapping[str, float] | None,
    recomputed: Mapping[str, float],
) -> list[str]:
    notes = [_OVERLAP_NOTE]
    if report.run.level == "document":
        notes.append(
            "document level: a miss is a gold document, found when any hit comes from it; "
            "quotes sharing a document count once, as the report's recall (trec_eval's) does"
        )
    if k < report.run.depth < POOL_FACTOR * k:
        notes.append(
            f"only {report.run.depth} hits were recorded per query: 'ranked just below the "
            f"cutoff' covers ranks {k + 1} to {report.run.depth}, not {POOL_FACTOR * k}"
        )
    if recorded is not None:
        differing = sorted(q for q, v in recorded.items() if abs(v - recomputed.get(q, 0.0)) > 1e-9)
        if differing:
            notes.append(
                f"the report's recall@{k} differs from the recomputation from its recorded hits "
                f"for {len(differing)} queries (first: {differing[0]}); figures here use the "
                "recomputation"
            )
    missing = [
        q.query_id for q in report.queries if q.answerable and q.query_id not in view.results
    ]
    if missing:
        notes.append(
            f"{len(missing)} answerable queries have no result in stage {view.stage.name!r} "
            f"(first: {missing[0]}); they count as missed"
        )
    return notes
