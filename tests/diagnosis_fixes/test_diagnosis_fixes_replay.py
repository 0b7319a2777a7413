"""Exact replays against a recomputation with the core metrics, basis strings and ranking."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundkit.diagnosis import (
    RRF_K,
    Diagnosis,
    RerunStage,
    diagnose,
    fixes,
    reciprocal_rank_fusion,
)
from groundkit.judgments import EvalReport, evaluate_trec, score_queries
from groundkit.judgments.metrics import GoldItem
from groundkit.judgments.report import ReportHit

SPAN = (100, 200)


def _gold_items(report: EvalReport) -> dict[str, list[GoldItem]]:
    return {
        q.query_id: [
            GoldItem(grade=g.grade, spans=tuple((g.doc, s, e) for s, e in g.spans)) for g in q.gold
        ]
        for q in report.queries
        if q.answerable
    }


def _mean(report: EvalReport, hits: dict[str, list[ReportHit]], metric: str) -> float:
    scores = score_queries(
        _gold_items(report),
        hits,
        [metric],
        min_overlap_fraction=report.run.min_overlap_fraction,
    )
    return math.fsum(row[metric] for row in scores.values()) / len(scores)


def _found_quotes(report: EvalReport, hits: dict[str, list[ReportHit]], k: int) -> int:
    """Quotes found within k, from the core metric: recall@k times each query's quotes."""
    gold_items = _gold_items(report)
    scores = score_queries(
        gold_items, hits, [f"recall@{k}"], min_overlap_fraction=report.run.min_overlap_fraction
    )
    return sum(round(row[f"recall@{k}"] * len(gold_items[q])) for q, row in scores.items())


def _hits(report: EvalReport, stage: str) -> dict[str, list[ReportHit]]:
    return {r.query_id: list(r.hits) for r in report.stage(stage).queries}


def _fuse_independently(a: list[ReportHit], b: list[ReportHit]) -> list[ReportHit]:
    """RRF written out by hand: score, then the span descending (trec_eval's tie rule).

    Each hit's terms are summed best rank first, so equal rank multisets give equal scores.
    """
    ranks: dict[tuple[str, int, int], list[int]] = defaultdict(list)
    for hits in (a, b):
        for rank, hit in enumerate(hits, start=1):
            ranks[(hit.doc, hit.start, hit.end)].append(rank)
    score = {key: sum(1.0 / (RRF_K + r) for r in sorted(got)) for key, got in ranks.items()}
    order = sorted(score, key=lambda key: (score[key], key), reverse=True)
    return [ReportHit(doc=d, start=s, end=e, score=score[(d, s, e)]) for d, s, e in order]


def _draw_report(draw: Any, helpers: Any) -> tuple[EvalReport, int]:
    gold = helpers.gold
    k = draw(st.sampled_from([1, 2, 3]))
    builder = helpers.ReportBuilder(depth=draw(st.integers(4, 16)), metrics=[f"recall@{k}"])
    docs = ["d0", "d1", "d2", "d3"]
    n_queries = draw(st.integers(1, 5))
    span = st.tuples(st.integers(0, 300), st.integers(1, 120)).map(lambda p: (p[0], p[0] + p[1]))
    for q in range(n_queries):
        quotes = []
        for i in range(draw(st.integers(1, 3))):
            spans = draw(st.lists(span, min_size=0, max_size=2))
            quotes.append(gold(draw(st.sampled_from(docs)), f"quote {q}.{i}", *spans))
        builder.query(f"q{q}", *quotes)
    builder.stage("bm25")
    builder.stage("other", "dense")
    for stage in ("bm25", "other"):
        for q in range(n_queries):
            count = draw(st.integers(0, builder.depth))
            hits: list[Any] = []
            for position in range(count):
                start, end = draw(span)
                dup = draw(st.sampled_from([None, None, None, 1])) if position else None
                hits.append((draw(st.sampled_from(docs)), start, end, dup))
            builder.result(stage, f"q{q}", hits)
    fraction = draw(st.sampled_from([0.0, 0.5, 1.0]))
    return builder.build(min_overlap_fraction=fraction), k


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_replays_agree_with_a_recomputation(data: st.DataObject, helpers: Any) -> None:
    report, k = _draw_report(data.draw, helpers)
    diagnosis = diagnose(report, "bm25", k=k)
    own = _hits(report, "bm25")
    before = _mean(report, own, f"recall@{k}")
    assert diagnosis.recall == pytest.approx(before, abs=1e-12)
    assert diagnosis.recorded_recall == pytest.approx(before, abs=1e-12)
    assert sum(b.count or 0 for b in diagnosis.buckets) == diagnosis.miss_count
    evidence = {e.fix: e for e in diagnosis.evidence}

    raise_k = evidence["raise-k"].replay
    new_k = min(5 * k, report.run.depth)
    if new_k > k:
        assert raise_k is not None
        assert raise_k.new_k == new_k
        assert raise_k.after == pytest.approx(_mean(report, own, f"recall@{new_k}"), abs=1e-12)
    else:
        assert raise_k is None

    fusion = evidence["hybrid-fusion"].replay
    assert fusion is not None
    assert fusion.other_stage == "other"
    theirs = _hits(report, "other")
    fused = {
        q: _fuse_independently(own.get(q, []), theirs.get(q, []))[: report.run.depth] for q in own
    }
    assert fusion.after == pytest.approx(_mean(report, fused, f"recall@{k}"), abs=1e-12)
    moved = diagnosis.found_count - fusion.loses + sum(fusion.finds.values())
    assert moved == _found_quotes(report, fused, k)

    dedup = evidence["deduplicate"].replay
    assert dedup is not None
    kept = {q: [h for h in hits if h.duplicate_of is None] for q, hits in own.items()}
    assert dedup.after == pytest.approx(_mean(report, kept, f"recall@{k}"), abs=1e-12)
    assert dedup.removed_hits == sum(len(own[q]) - len(kept[q]) for q in own)
    moved = diagnosis.found_count - dedup.loses + sum(dedup.finds.values())
    assert moved == _found_quotes(report, kept, k)

    by_name = {f.name: f for f in fixes(diagnosis)}
    assert by_name["hybrid-fusion"].exact
    assert by_name["hybrid-fusion"].expected == pytest.approx(fusion.gain)
    _assert_ceilings_bound(diagnosis, before)

    # a re-run of the stage (here: the other stage's hits stand in for it) is re-scored here
    rerun = RerunStage(
        fix="larger-chunks", detail="chunks chars:2:0 instead of chars:1:0", hits=theirs
    )
    rerun_diagnosis = diagnose(report, "bm25", k=k, reruns=[rerun])
    replay = next(e.replay for e in rerun_diagnosis.evidence if e.fix == "larger-chunks")
    assert replay is not None
    assert replay.after == pytest.approx(_mean(report, theirs, f"recall@{k}"), abs=1e-12)
    assert replay.before == pytest.approx(before, abs=1e-12)
    moved = rerun_diagnosis.found_count - replay.loses + sum(replay.finds.values())
    assert moved == _found_quotes(report, theirs, k)
    larger = next(f for f in fixes(rerun_diagnosis) if f.name == "larger-chunks")
    assert larger.exact
    assert larger.expected == pytest.approx(replay.gain)
    _assert_ceilings_bound(rerun_diagnosis, before)


def _assert_ceilings_bound(diagnosis: Diagnosis, before: float) -> None:
    """Every ceiling bounds its fix's expected gain, and none exceeds the stage's headroom."""
    for fix in fixes(diagnosis):
        if fix.ceiling is None:
            assert fix.expected is None
            continue
        assert fix.ceiling <= 1.0 - before + 1e-12
        if fix.expected is not None:
            assert fix.expected <= fix.ceiling + 1e-12, fix.name
        if fix.at_stake is not None:
            assert fix.at_stake <= fix.ceiling + 1e-12, fix.name
        if fix.exact:
            assert fix.ceiling == pytest.approx(1.0 - before, abs=1e-12)
        if fix.name in ("repair-judgments", "index-coverage"):
            assert fix.ceiling == fix.at_stake


def test_fusion_orders_by_score_then_id_descending() -> None:
    a = [ReportHit(doc="x", start=0, end=1, score=1), ReportHit(doc="y", start=0, end=1, score=1)]
    b = [ReportHit(doc="y", start=0, end=1, score=1), ReportHit(doc="z", start=0, end=1, score=1)]
    fused = reciprocal_rank_fusion(a, b, depth=10)
    assert [h.doc for h in fused] == ["y", "x", "z"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    # x (rank 1 in a) and z (rank 2 in b) never tie; two rank-1-only hits tie, and the cut
    # keeps the one trec_eval ranks first (id descending), whichever list it came from.
    only = reciprocal_rank_fusion(a[:1], b[1:][:1], depth=1)
    assert [h.doc for h in only] == ["z"]
    assert [h.doc for h in reciprocal_rank_fusion(b[1:][:1], a[:1], depth=1)] == ["z"]


def _basis_report(helpers: Any) -> EvalReport:
    """Ten queries: 3 whole quotes found, 3 whole missed, 2 split missed, 2 split found."""
    gold, trace = helpers.gold, helpers.trace
    b = helpers.ReportBuilder(depth=20)
    for i in range(10):
        b.query(f"q{i}", gold(f"d{i}", f"quote {i}", SPAN))
    b.stage("bm25", chunker={"kind": "chars", "size": 200, "overlap": 0})
    b.stage("big", chunker={"kind": "chars", "size": 400, "overlap": 0})
    filler = [(f"f{j}", 0, 50) for j in range(20)]
    for i in range(10):
        found = i in (0, 1, 2, 8, 9)
        share = 0.2 if i in (6, 7, 8, 9) else 1.0
        hits = [(f"d{i}", 150, 160), *filler[:19]] if found else filler
        b.result("bm25", f"q{i}", hits, [trace(doc_indexed=True, best_chunk_share=share)])
        other = [(f"g{j}", 0, 50) for j in range(5)]
        b.result("big", f"q{i}", [(f"d{i}", 100, 200)] if i == 6 else other)
    return b.build()


def test_basis_strings_for_estimated_fixes(helpers: Any) -> None:
    diagnosis = diagnose(_basis_report(helpers), "bm25", k=2)
    assert diagnosis.recall == pytest.approx(0.5)
    assert diagnosis.bucket("split-by-chunker").count == 2
    by_name = {f.name: f for f in fixes(diagnosis)}
    larger = by_name["larger-chunks"]
    assert larger.expected == pytest.approx(2 * 0.5 / 10)
    assert larger.at_stake == pytest.approx(0.2)
    assert larger.ceiling == pytest.approx(0.5)  # chunks can move any quote: the headroom
    assert larger.reference == pytest.approx(0.1)
    assert larger.reference_stage == "big"
    assert not larger.exact
    assert larger.basis == (
        "2 misses × 50% (recall on comparable gold: 3 of 6) / 10 gold = +0.100; "
        "comparable gold: quotes one chunk holds at least half of; "
        "reference: big finds 1 of these 2 within 2 (+0.100)"
    )
    overlap = by_name["chunk-overlap"]
    assert overlap.expected == pytest.approx(0.1)
    assert overlap.knob == "chunker overlap"
    # the quote is found by 'big' (bucket 6 comes after 3, so it stays split)
    assert diagnosis.bucket("found-by-other-stage").count == 0


def test_basis_strings_for_exact_fixes(helpers: Any) -> None:
    diagnosis = diagnose(_basis_report(helpers), "bm25", k=2)
    by_name = {f.name: f for f in fixes(diagnosis)}
    raise_k = by_name["raise-k"]
    assert raise_k.exact
    assert raise_k.expected == pytest.approx(0.0)
    assert raise_k.basis == (
        "exact: k raised from 2 to 10 on the recorded ranks; recall@10 0.500 − recall@2 0.500 "
        "over 10 queries"
    )
    fusion = by_name["hybrid-fusion"]
    assert fusion.exact
    assert fusion.expected == pytest.approx(
        0.1
    )  # q6 comes from 'big' at fused rank 2 (ties go to bm25)
    assert fusion.basis == (
        "exact: reciprocal-rank fusion (k=60) fusing bm25 with big, on their recorded hits; "
        "recall@2 0.600 − recall@2 0.500 over 10 queries; it finds 1 of the misses (split by "
        "the chunker 1); "
        "whole effect of the change: 1 of the misses it finds lie outside its bucket (found by "
        "another stage)"
    )
    replay = next(e.replay for e in diagnosis.evidence if e.fix == "hybrid-fusion")
    assert replay is not None
    assert replay.finds == {"split-by-chunker": 1}
    assert replay.loses == 0


def test_multi_quote_basis_counts_query_equivalents(helpers: Any) -> None:
    gold, trace = helpers.gold, helpers.trace
    b = helpers.ReportBuilder(depth=20)
    b.query("q0", gold("a", "one", SPAN), gold("b", "two", SPAN))
    b.query("q1", gold("c", "three", SPAN))
    b.stage("bm25")
    full = {"doc_indexed": True, "best_chunk_share": 1.0}
    b.result("bm25", "q0", [("a", 100, 200)], [trace(0, **full), trace(1, **full)])
    b.result("bm25", "q1", [], [trace(0, doc_indexed=False, best_chunk_share=0.0)])
    diagnosis = diagnose(b.build(), k=2)
    fix = next(f for f in fixes(diagnosis) if f.name == "index-coverage")
    # one miss weighing a whole query; rate: 1 of the 2 quotes in indexed documents was found
    assert fix.expected == pytest.approx(0.5 * 0.5)
    assert fix.basis.startswith(
        "1 misses (1.0 query-equivalents) × 50% (recall on comparable gold: 1 of 2) / 2 queries"
    )


def test_fixes_are_ranked_by_expected_gain(helpers: Any) -> None:
    ranked = fixes(diagnose(_basis_report(helpers), "bm25", k=2))
    assert [f.rank for f in ranked] == list(range(1, len(ranked) + 1))
    keys = [(f.expected is None, -(f.expected or 0.0)) for f in ranked]
    assert keys == sorted(keys)
    assert ranked[0].expected is not None
    assert ranked[0].expected >= max(f.expected or 0.0 for f in ranked)


def test_exact_gain_above_its_buckets_stake_is_said_to_be_the_whole_effect(
    helpers: Any,
) -> None:
    # the fusion replay finds a miss of bucket 3, outside its own bucket 6 (nothing at stake):
    # the expected gain exceeds what its bucket holds, stays under the ceiling (the stage's
    # headroom), and the basis says why
    diagnosis = diagnose(_basis_report(helpers), "bm25", k=2)
    fusion = next(f for f in fixes(diagnosis) if f.name == "hybrid-fusion")
    assert fusion.expected is not None
    assert fusion.ceiling is not None
    assert fusion.at_stake is not None
    assert fusion.at_stake == pytest.approx(0.0)
    assert fusion.at_stake < fusion.expected <= fusion.ceiling
    assert fusion.ceiling == pytest.approx(1.0 - diagnosis.recall)
    assert "whole effect of the change" in fusion.basis
    # a replay finding only its own bucket's misses says nothing of the kind
    raise_k = next(f for f in fixes(diagnosis) if f.name == "raise-k")
    assert "whole effect" not in raise_k.basis


def _trec_recall(report: EvalReport, hits: dict[str, list[ReportHit]], k: int) -> dict[str, float]:
    """trec_eval's recall_k per answerable query: gold collapsed per document (the harness's)."""
    qrels: dict[str, dict[str, int]] = {}
    for query in report.queries:
        if query.answerable:
            grades = qrels.setdefault(query.query_id, {})
            for quote in query.gold:
                grades[quote.doc] = max(grades.get(quote.doc, 0), quote.grade)
    run: dict[str, dict[str, float]] = {}
    for query_id, ranked in hits.items():
        docs = list(dict.fromkeys(h.doc for h in ranked))
        if docs:
            run[query_id] = {doc: float(len(docs) - i) for i, doc in enumerate(docs)}
    result = evaluate_trec(qrels, run, [f"recall_{k}"], all_queries=True)
    return {q: result.per_query[q][f"recall_{k}"] for q in qrels}


def _document_level_report(helpers: Any) -> EvalReport:
    """q1: two quotes in doc A, one in B; bm25 has A at 1 and B at 4; dense has B then A.

    Scores are recorded as the harness records them at document level (trec_eval's recall_k).
    """
    gold = helpers.gold
    b = helpers.ReportBuilder(depth=20)
    b.query("q1", gold("A", "a one", SPAN), gold("A", "a two", (300, 400)), gold("B", "b", SPAN))
    b.query("q2", gold("C", "c", SPAN))
    b.stage("bm25", chunker={"kind": "document"})
    b.stage("dense", "dense", chunker={"kind": "document"})
    b.result("bm25", "q1", [("A", 0, 1000), ("f0", 0, 50, 1), ("f1", 0, 50, 1), ("B", 0, 1000)])
    b.result("bm25", "q2", [("C", 0, 1000)])
    b.result("dense", "q1", [("B", 0, 1000), ("A", 0, 1000)])
    b.result("dense", "q2", [("g0", 0, 50)])
    report: EvalReport = b.build(level="document")
    stages = []
    for stage in report.stages:
        hits = {r.query_id: list(r.hits) for r in stage.queries}
        by_k = {k: _trec_recall(report, hits, k) for k in (2, 10)}
        results = [
            r.model_copy(update={"scores": {f"recall@{k}": by_k[k][r.query_id] for k in by_k}})
            for r in stage.queries
        ]
        stages.append(stage.model_copy(update={"queries": results}))
    return report.model_copy(update={"stages": stages})


def test_document_level_counts_gold_documents_like_the_report(helpers: Any) -> None:
    report = _document_level_report(helpers)
    own = _hits(report, "bm25")
    recorded = _trec_recall(report, own, 2)
    assert recorded == {"q1": 0.5, "q2": 1.0}  # trec_eval: one of q1's two documents
    diagnosis = diagnose(report, "bm25", k=2)
    assert diagnosis.recall == pytest.approx(0.75, abs=1e-12)
    assert diagnosis.recorded_recall == pytest.approx(0.75, abs=1e-12)
    assert not any("differs from the recomputation" in n for n in diagnosis.notes)
    # a miss is a gold document: A, B and C; only B is missed
    assert (diagnosis.gold_count, diagnosis.found_count, diagnosis.miss_count) == (3, 2, 1)
    below = diagnosis.bucket("just-below-cutoff")
    assert below.count == 1
    assert below.weight == pytest.approx(1 / (2 * 2))  # one of q1's 2 documents, 2 queries
    assert sum(b.weight or 0.0 for b in diagnosis.buckets) == pytest.approx(1 - 0.75)
    evidence = {e.fix: e.replay for e in diagnosis.evidence}
    raise_k, fusion = evidence["raise-k"], evidence["hybrid-fusion"]
    dedup = evidence["deduplicate"]
    assert raise_k is not None
    assert fusion is not None
    assert dedup is not None
    for replay in (raise_k, fusion, dedup):
        assert replay.before == pytest.approx(0.75, abs=1e-12)  # the report's recall@2
    assert raise_k.after == pytest.approx(
        math.fsum(_trec_recall(report, own, 10).values()) / 2, abs=1e-12
    )
    fused = {q: reciprocal_rank_fusion(own[q], _hits(report, "dense")[q], depth=20) for q in own}
    assert fusion.after == pytest.approx(math.fsum(_trec_recall(report, fused, 2).values()) / 2)
    kept = {q: [h for h in hits if h.duplicate_of is None] for q, hits in own.items()}
    assert dedup.after == pytest.approx(math.fsum(_trec_recall(report, kept, 2).values()) / 2)
    for replay in (raise_k, fusion, dedup):
        assert replay.gain == pytest.approx(0.25, abs=1e-12)
        assert replay.finds == {"just-below-cutoff": 1}
        assert replay.loses == 0
    by_name = {f.name: f for f in fixes(diagnosis)}
    assert by_name["raise-k"].ceiling == pytest.approx(0.25)
    assert any("gold document" in note for note in diagnosis.notes)
