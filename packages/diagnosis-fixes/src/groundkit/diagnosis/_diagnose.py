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
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from groundkit.diagnosis._errors import DiagnosisError
from groundkit.diagnosis._hashing import config_hash, items_hash
from groundkit.diagnosis._models import (
    BUCKET_TITLES,
    BUCKETS,
    FIX_BUCKETS,
    FIXES,
    Bucket,
    BucketName,
    Diagnosis,
    FixEvidence,
    FixName,
    Measured,
    MissExample,
    Rate,
    Reference,
    Replay,
    StageSnapshot,
)
from groundkit.diagnosis._quotes import (
    QuoteCase,
    StageQuotes,
    case_indices,
    first_ranks,
    gold_items,
)
from groundkit.diagnosis._replay import (
    RRF_K,
    deduplicate,
    mean_metric,
    reciprocal_rank_fusion,
)
from groundkit.judgments import EvalReport, ReportHit, StageReport

__all__ = ["POOL_FACTOR", "SPLIT_SHARE", "default_stage", "diagnose", "shorten"]

SPLIT_SHARE = 0.5
"""A quote is split when no chunk holds at least this share of its span."""

POOL_FACTOR = 5
"""``ranked just below the cutoff`` covers ranks ``(k, POOL_FACTOR * k]``."""

_QUOTE_WIDTH = 80
_OVERLAP_NOTE = (
    "gains overlap and are never summed: finding one bucket's misses changes what the others "
    "could add"
)


def shorten(text: str, width: int = _QUOTE_WIDTH) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``width`` characters with ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def _views(report: EvalReport) -> dict[str, StageQuotes]:
    return {s.name: StageQuotes.build(report, s) for s in report.stages if s.error is None}


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


def _rate(label: str, cases: Iterable[QuoteCase], k: int) -> Rate:
    chosen = list(cases)
    return Rate(label=label, found=sum(1 for c in chosen if c.found(k)), total=len(chosen))


def _weight(cases: Iterable[QuoteCase]) -> float:
    return math.fsum(case.weight for case in cases)


def _example(case: QuoteCase, found_by: list[str]) -> MissExample:
    return MissExample(
        query_id=case.query.query_id,
        gold_index=case.gold_index,
        quote=shorten(case.gold.quote),
        first_rank=case.first_rank,
        best_chunk_rank=case.trace.best_chunk_rank if case.trace else None,
        found_by=found_by,
    )


def _overlap_can_hold(case: QuoteCase, chunker: Mapping[str, object]) -> bool:
    """Whether a window of the current size, well placed, holds at least half of the quote.

    More overlap only moves windows; it never makes one longer. So it can bring a split quote
    above the half mark only when the quote is at most twice the window size.
    """
    size = chunker.get("size")
    if not isinstance(size, int):
        return False
    if chunker.get("kind") == "tokens":
        return len(case.gold.quote.split()) <= 2 * size
    return min(end - start for start, end in case.gold.spans) <= 2 * size


# The retriever kind of a stage that applies a fix outright: its measured difference from the
# diagnosed stage is the fix's whole effect in this very report.
_APPLIED_BY_KIND: dict[FixName, str] = {
    "dense": "dense",
    "rerank": "rerank",
    "hybrid-fusion": "hybrid",
}


class _Evidence:
    """Measures, for each fix, its misses, a comparable rate, a reference and replays."""

    def __init__(
        self,
        report: EvalReport,
        view: StageQuotes,
        others: Sequence[StageQuotes],
        k: int,
        misses: Mapping[BucketName, list[QuoteCase]],
        reasons: Mapping[BucketName, str | None],
    ) -> None:
        self.report = report
        self.view = view
        self.others = others
        self.k = k
        self.misses = misses
        self.reasons = reasons
        self.other_found = {o.stage.name: o.found_keys(k) for o in others}
        level = report.run.level
        self.gold = gold_items(report.queries, level=level)
        self.fraction = 0.0 if level == "document" else report.run.min_overlap_fraction
        self.metric = f"recall@{k}"
        self._before: float | None = None
        self.bucket_of = {case.key: name for name, cases in misses.items() for case in cases}

    # -- shared measurements -------------------------------------------------------------
    def hits(self, view: StageQuotes) -> dict[str, list[ReportHit]]:
        return {query_id: list(result.hits) for query_id, result in view.results.items()}

    @property
    def before(self) -> float:
        if self._before is None:
            self._before = mean_metric(
                self.gold, self.hits(self.view), self.metric, min_overlap_fraction=self.fraction
            )
        return self._before

    def traced(self, read: Callable[[QuoteCase], object]) -> list[QuoteCase]:
        return [c for c in self.view.cases if c.gold.resolved and c.trace and read(c) is True]

    def reference(
        self, cases: Sequence[QuoteCase], keep: Callable[[StageQuotes], bool]
    ) -> Reference | None:
        candidates = [o for o in self.others if keep(o)]
        if not cases or not candidates:
            return None
        best: Reference | None = None
        for other in candidates:
            keys = self.other_found[other.stage.name]
            found = [c for c in cases if c.key in keys]
            if best is None or len(found) > best.found:
                best = Reference(stage=other.stage.name, found=len(found), gain=_weight(found))
        return best

    # -- per fix -------------------------------------------------------------------------
    def build(self) -> list[FixEvidence]:
        stage = self.view.stage
        evidence: list[FixEvidence] = []
        for fix in FIXES:
            if (
                fix == "chunk-overlap"
                and stage.chunker is not None
                and (stage.chunker.get("kind") not in ("chars", "tokens"))
            ):
                continue  # the chunker has no overlap to turn
            if fix == "dense" and stage.kind == "dense":
                continue
            evidence.append(self.for_fix(fix))
        return evidence

    def measured(self, fix: FixName) -> Measured | None:
        """The best stage of the report that already applies ``fix``, and its difference."""
        kind = _APPLIED_BY_KIND.get(fix)
        applying = [o for o in self.others if kind is not None and o.stage.kind == kind]
        if not applying:
            return None
        scored = [
            (
                mean_metric(
                    self.gold, self.hits(o), self.metric, min_overlap_fraction=self.fraction
                )
                - self.before,
                o.stage.name,
            )
            for o in applying
        ]
        difference, name = max(scored)
        return Measured(stage=name, metric=self.metric, difference=difference)

    def for_fix(self, fix: FixName) -> FixEvidence:
        evidence = self._for_fix(fix)
        measured = self.measured(fix)
        return evidence if measured is None else evidence.model_copy(update={"measured": measured})

    def _for_fix(self, fix: FixName) -> FixEvidence:
        buckets = list(FIX_BUCKETS[fix])
        if any(self.reasons[b] is not None for b in buckets):
            return FixEvidence(
                fix=fix,
                buckets=buckets,
                misses=None,
                query_equivalents=None,
                ceiling=None,
                note="; ".join(r for b in buckets if (r := self.reasons[b]) is not None),
            )
        cases = [c for b in buckets for c in self.misses[b]]
        chunker = self.view.stage.chunker
        note: str | None = None
        if fix == "chunk-overlap" and chunker is not None:
            fitting = [c for c in cases if _overlap_can_hold(c, chunker)]
            if len(fitting) < len(cases):
                note = (
                    f"{len(cases) - len(fitting)} of the {len(cases)} split quotes are longer "
                    "than twice a chunk: only larger chunks can hold half of them"
                )
            cases = fitting
        ceiling = _weight(cases)
        rate, reference, replay = self.measure(fix, cases)
        return FixEvidence(
            fix=fix,
            buckets=buckets,
            misses=len(cases),
            query_equivalents=ceiling * self.view.query_count,
            ceiling=ceiling,
            rate=rate,
            reference=reference,
            replay=replay,
            note=note,
        )

    def measure(
        self, fix: FixName, cases: Sequence[QuoteCase]
    ) -> tuple[Rate | None, Reference | None, Replay | None]:
        k = self.k
        view = self.view
        chunker = view.stage.chunker

        def anyone(_: StageQuotes) -> bool:
            return True

        def other_chunks(other: StageQuotes) -> bool:
            return other.stage.chunker is not None and other.stage.chunker != chunker

        if fix == "repair-judgments":
            resolved = [c for c in view.cases if c.gold.resolved]
            return _rate("resolved quotes", resolved, k), None, None
        if fix == "index-coverage":
            indexed = self.traced(lambda c: c.trace.doc_indexed if c.trace else None)
            rate = _rate("resolved quotes in indexed documents", indexed, k)
            return rate, self.reference(cases, anyone), None
        if fix in ("chunk-overlap", "larger-chunks"):
            whole = [
                c
                for c in view.cases
                if c.gold.resolved
                and c.trace is not None
                and c.trace.best_chunk_share is not None
                and c.trace.best_chunk_share >= SPLIT_SHARE
            ]
            rate = _rate("quotes one chunk holds at least half of", whole, k)
            return rate, self.reference(cases, other_chunks), None
        if fix == "smaller-chunks":
            limit = view.stage.encoder_max_tokens
            window = [
                c
                for c in view.cases
                if c.gold.resolved
                and c.trace is not None
                and c.trace.best_chunk_share is not None
                and c.trace.best_chunk_share >= SPLIT_SHARE
                and c.trace.tokens_before_quote is not None
                and limit is not None
                and c.trace.tokens_before_quote < limit
            ]
            rate = _rate("quotes within the encoder's window", window, k)
            return rate, self.reference(cases, other_chunks), None
        if fix == "rerank":
            pool = POOL_FACTOR * k
            pooled = [c for c in view.cases if c.first_rank is not None and c.first_rank <= pool]
            rate = _rate(f"quotes ranked within {pool} (share within {k})", pooled, k)
            return rate, self.reference(cases, anyone), None
        if fix == "raise-k":
            return None, None, self.replay_raise_k()
        if fix == "hybrid-fusion":
            return None, None, self.replay_fusion()
        if fix == "query-expansion":
            sharing = self.traced(lambda c: c.trace.shares_query_term if c.trace else None)
            rate = _rate("quotes whose best chunk shares a query term", sharing, k)
            return rate, self.reference(cases, anyone), None
        if fix == "dense":
            indexed = self.traced(lambda c: c.trace.doc_indexed if c.trace else None)
            rate = _rate("resolved quotes in indexed documents", indexed, k)
            return rate, self.reference(cases, lambda o: o.stage.kind == "dense"), None
        return None, None, self.replay_deduplicate()

    # -- replays -------------------------------------------------------------------------
    def movement(self, hits: Mapping[str, Sequence[ReportHit]], cutoff: int) -> dict[str, object]:
        """Which misses a replayed ranking finds within ``cutoff`` (by bucket), and losses."""
        finds: dict[BucketName, int] = {}
        loses = 0
        level = self.report.run.level
        by_query: dict[str, list[QuoteCase]] = {}
        for case in self.view.cases:
            by_query.setdefault(case.query.query_id, []).append(case)
        for query_id, cases in by_query.items():
            ranks = first_ranks(
                hits.get(query_id, []),
                cases[0].query.gold,
                level=level,
                min_overlap_fraction=self.report.run.min_overlap_fraction,
            )
            for case in cases:
                rank = ranks[case.gold_index]
                now = rank is not None and rank <= cutoff
                bucket = self.bucket_of.get(case.key)
                if bucket is not None and now:
                    finds[bucket] = finds.get(bucket, 0) + 1
                elif bucket is None and not now:
                    loses += 1
        ordered = {b: finds[b] for b in BUCKETS if b in finds}
        return {"finds": ordered, "loses": loses}

    def replay_raise_k(self) -> Replay | None:
        new_k = min(POOL_FACTOR * self.k, self.report.run.depth)
        if new_k <= self.k:
            return None
        metric = f"recall@{new_k}"
        after = mean_metric(
            self.gold, self.hits(self.view), metric, min_overlap_fraction=self.fraction
        )
        return Replay(
            metric=metric,
            before=self.before,
            after=after,
            query_count=len(self.gold),
            detail=f"k raised from {self.k} to {new_k} on the recorded ranks",
            new_k=new_k,
            **self.movement(self.hits(self.view), new_k),
        )

    def replay_fusion(self) -> Replay | None:
        if not self.others:
            return None
        best = max(self.others, key=lambda o: o.mean_recall(self.k))
        own, theirs = self.hits(self.view), self.hits(best)
        depth, k = self.report.run.depth, _hybrid_k(self.report)
        fused = {
            query_id: reciprocal_rank_fusion(
                own.get(query_id, []), theirs.get(query_id, []), depth=depth, k=k
            )
            for query_id in self.gold
        }
        after = mean_metric(self.gold, fused, self.metric, min_overlap_fraction=self.fraction)
        return Replay(
            metric=self.metric,
            before=self.before,
            after=after,
            query_count=len(self.gold),
            detail=(
                f"reciprocal-rank fusion (k={k}) fusing {self.view.stage.name} with "
                f"{best.stage.name}, on their recorded hits"
            ),
            other_stage=best.stage.name,
            **self.movement(fused, self.k),
        )

    def replay_deduplicate(self) -> Replay:
        own = self.hits(self.view)
        removed = sum(1 for hits in own.values() for h in hits if h.duplicate_of is not None)
        kept = {query_id: deduplicate(hits) for query_id, hits in own.items()}
        after = mean_metric(self.gold, kept, self.metric, min_overlap_fraction=self.fraction)
        return Replay(
            metric=self.metric,
            before=self.before,
            after=after,
            query_count=len(self.gold),
            detail=f"the {removed} hits marked as near-duplicates removed from the rankings",
            removed_hits=removed,
            **self.movement(kept, self.k),
        )


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
) -> Diagnosis:
    """Where ``stage`` loses gold evidence at cutoff ``k``, and what each fix could gain.

    Args:
        report: The evaluation report.
        stage: The stage to diagnose (default: :func:`default_stage`, the highest recall@k).
        k: The cutoff (a quote is missed when no hit within rank ``k`` touches it).
        examples: Examples kept per bucket.
        source: Where the report came from (messages and the record).

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
        retriever=dict(target_stage.retriever),
        chunker=None if target_stage.chunker is None else dict(target_stage.chunker),
        encoder_max_tokens=target_stage.encoder_max_tokens,
    )
    evidence = _Evidence(report, view, others, k, misses, reasons).build()
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


def _hybrid_k(report: EvalReport) -> int:
    """The fusion constant the report's own hybrid stage used, else the default."""
    for stage in report.stages:
        k = stage.retriever.get("k")
        if stage.retriever.get("kind") == "hybrid" and type(k) is int and k > 0:
            return k
    return RRF_K
