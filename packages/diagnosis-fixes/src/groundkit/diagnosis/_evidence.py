"""Per-fix evidence: each fix's misses, a comparable rate, a reference, exact replays and bounds.

Each fix's ``ceiling`` is an upper bound on what it can gain in recall@k:

* repair-judgments and index-coverage make only their own misses findable (the rest can only
  lose to the new chunks), so their bound is what those misses hold at stake;
* rerank reorders the top ``POOL_FACTOR × k`` hits, so it can find only the misses some hit
  in that pool touches, whatever their bucket;
* every other fix (and every exact replay, which is the whole change) can move any quote:
  its bound is the stage's headroom, ``1 − recall@k``.

An estimate is at most what its misses hold at stake, so it never exceeds its bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from groundkit.diagnosis._diagnose_text import POOL_FACTOR, SPLIT_SHARE, shorten
from groundkit.diagnosis._models import (
    BUCKETS,
    FIX_BUCKETS,
    FIXES,
    BucketName,
    FixEvidence,
    FixName,
    Measured,
    MissExample,
    Rate,
    Reference,
    Replay,
)
from groundkit.diagnosis._quotes import (
    QuoteCase,
    RankedSpan,
    StageQuotes,
    first_ranks,
    gold_items,
    report_memo,
)
from groundkit.diagnosis._replay import (
    RRF_K,
    deduplicate,
    mean_metric,
    reciprocal_rank_fusion,
)
from groundkit.diagnosis.predictions._rerun import RerunStage
from groundkit.judgments import (
    CharsChunker,
    DocumentChunker,
    EvalReport,
    ParagraphsChunker,
    SentencesChunker,
    TokensChunker,
)
from groundkit.judgments.report import ReportHit


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


def _overlap_can_hold(
    case: QuoteCase,
    chunker: DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker,
) -> bool:
    """Whether a window of the current size, well placed, holds at least half of the quote.

    More overlap only moves windows; it never makes one longer. So it can bring a split quote
    above the half mark only when the quote is at most twice the window size.
    """
    if isinstance(chunker, TokensChunker):
        return len(case.gold.quote.split()) <= 2 * chunker.size
    if isinstance(chunker, CharsChunker):
        return min(end - start for start, end in case.gold.spans) <= 2 * chunker.size
    return False  # the other kinds have no window size


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
        reruns: Sequence[RerunStage] = (),
    ) -> None:
        self.report = report
        self.reruns = {rerun.fix: rerun for rerun in reruns}
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
        self.means = report_memo(report).means
        self.bucket_of = {case.key: name for name, cases in misses.items() for case in cases}

    # -- shared measurements -------------------------------------------------------------
    def hits(self, view: StageQuotes) -> dict[str, list[ReportHit]]:
        return {query_id: list(result.hits) for query_id, result in view.results.items()}

    def recorded(self, view: StageQuotes) -> float:
        """Mean recall@k of a stage on its recorded ranking (once per report and stage)."""
        key = (view.stage.name, self.metric)
        if key not in self.means:
            self.means[key] = mean_metric(
                self.gold, self.hits(view), self.metric, min_overlap_fraction=self.fraction
            )
        return self.means[key]

    @property
    def before(self) -> float:
        return self.recorded(self.view)

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
                and stage.chunker.kind not in ("chars", "tokens")
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
        scored = [(self.recorded(o) - self.before, o.stage.name) for o in applying]
        difference, name = max(scored)
        return Measured(stage=name, metric=self.metric, difference=difference)

    def for_fix(self, fix: FixName) -> FixEvidence:
        evidence = self._for_fix(fix)
        update: dict[str, object] = {}
        rerun = self.reruns.get(fix)
        if rerun is not None:
            # the whole change: bounded by the headroom, as every replay (see ``bound``)
            update["replay"] = self.replay_rerun(rerun)
            update["ceiling"] = self.headroom
        measured = self.measured(fix)
        if measured is not None:
            update["measured"] = measured
        return evidence.model_copy(update=update) if update else evidence

    @property
    def headroom(self) -> float:
        """``1 − recall@k``: what finding every miss would add, a bound on any change."""
        return max(0.0, 1.0 - self.before)

    def bound(self, fix: FixName, at_stake: float) -> float:
        """The fix's ceiling when it is estimated (see the module's docstring)."""
        if fix in ("repair-judgments", "index-coverage"):
            return at_stake
        if fix == "rerank":
            pool = POOL_FACTOR * self.k
            reachable = [
                case
                for cases in self.misses.values()
                for case in cases
                if case.first_rank is not None and case.first_rank <= pool
            ]
            return max(at_stake, _weight(reachable))
        return self.headroom

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
        at_stake = _weight(cases)
        rate, reference, replay = self.measure(fix, cases)
        return FixEvidence(
            fix=fix,
            buckets=buckets,
            misses=len(cases),
            query_equivalents=at_stake * self.view.query_count,
            at_stake=at_stake,
            ceiling=self.bound(fix, at_stake),
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
    def movement(self, hits: Mapping[str, Sequence[RankedSpan]], cutoff: int) -> dict[str, object]:
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

    def replay_rerun(self, rerun: RerunStage) -> Replay:
        """The harness's re-run of the stage with ``rerun.fix`` applied, re-scored here."""
        hits = {query_id: list(rerun.hits.get(query_id, ())) for query_id in self.gold}
        after = mean_metric(self.gold, hits, self.metric, min_overlap_fraction=self.fraction)
        return Replay(
            metric=self.metric,
            before=self.before,
            after=after,
            query_count=len(self.gold),
            detail=f"the stage re-run with {rerun.detail}",
            **self.movement(hits, self.k),
        )

    def replay_deduplicate(self) -> Replay:
        own = self.hits(self.view)
        removed = sum(1 for hits in own.values() for h in hits if h.duplicate_of is not None)
        kept = {query_id: deduplicate(hits) for query_id, hits in own.items()}
        # nothing removed: the rankings are the recorded ones, and so is their mean
        after = (
            self.before
            if removed == 0
            else mean_metric(self.gold, kept, self.metric, min_overlap_fraction=self.fraction)
        )
        return Replay(
            metric=self.metric,
            before=self.before,
            after=after,
            query_count=len(self.gold),
            detail=f"the {removed} hits marked as near-duplicates removed from the rankings",
            removed_hits=removed,
            **self.movement(kept, self.k),
        )


def _hybrid_k(report: EvalReport) -> int:
    """The fusion constant the report's own hybrid stage used, else the default."""
    for stage in report.stages:
        # The kind is the stage's (a report's retriever record holds the settings beside it).
        k = stage.retriever.get("k")
        if stage.kind == "hybrid" and type(k) is int and k > 0:
            return k
    return RRF_K
