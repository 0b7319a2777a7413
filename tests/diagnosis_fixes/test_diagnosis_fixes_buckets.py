"""Every bucket hit on purpose, the order rule, null buckets and unmeasured misses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from groundkit.diagnosis import BUCKETS, Diagnosis, DiagnosisError, diagnose, fixes
from groundkit.judgments import EvalReport

K = 2  # pool of "just below the cutoff": ranks 3..10
SPAN = (100, 200)


def _scenario(helpers: Any) -> EvalReport:
    """Nine queries, one gold quote each; each dense miss fits a chosen bucket."""
    g, t, fill = helpers.gold, helpers.trace, helpers.fillers
    b = helpers.ReportBuilder(depth=20)
    names = ["found", "unres", "noindex", "split", "window", "below", "other", "dup", "none"]
    for name in names:
        spans = () if name == "unres" else (SPAN,)
        b.query(f"q-{name}", g(f"d-{name}", f"the quote of {name}", *spans))
    b.stage("bm25", "bm25")
    b.stage("dense", "dense", encoder_max_tokens=128)

    def hit(name: str) -> tuple[str, int, int]:
        return (f"d-{name}", 120, 180)

    whole = {"doc_indexed": True, "best_chunk_share": 1.0, "tokens_before_quote": 10}
    # dense: the diagnosed stage
    b.result("dense", "q-found", [hit("found"), *fill(3)], [t(**whole, best_chunk_rank=1)])
    # unresolved AND document not indexed: bucket 1 wins (order rule)
    b.result("dense", "q-unres", fill(5), [t(doc_indexed=False)])
    # not indexed AND no chunk holds half (share 0): bucket 2 wins
    b.result("dense", "q-noindex", fill(5), [t(doc_indexed=False, best_chunk_share=0.0)])
    # split AND ranked at 5 (just below the cutoff): bucket 3 wins
    b.result(
        "dense",
        "q-split",
        [*fill(4), hit("split")],
        [t(doc_indexed=True, best_chunk_share=0.3, best_chunk_rank=5, tokens_before_quote=0)],
    )
    # beyond the window AND ranked at 4: bucket 4 wins
    b.result(
        "dense",
        "q-window",
        [*fill(3), hit("window")],
        [t(doc_indexed=True, best_chunk_share=1.0, best_chunk_rank=4, tokens_before_quote=300)],
    )
    # ranked at 4 AND found by bm25: bucket 5 wins
    b.result("dense", "q-below", [*fill(3), hit("below")], [t(**whole, best_chunk_rank=4)])
    # no trace at all: the chunk buckets cannot test it (unmeasured), bm25 finds it: bucket 6
    b.result("dense", "q-other", fill(5))
    # a near-duplicate in the top 2: bucket 8 (vocabulary mismatch is null for dense)
    b.result("dense", "q-dup", [("f0", 0, 50), ("f1", 0, 50, 1), *fill(3, "g")])
    b.result("dense", "q-none", fill(5))
    # bm25: finds q-below and q-other at rank 1; q-none's best chunk shares no query term
    for name in names:
        sharing = name != "none"
        hits = [hit(name), *fill(3)] if name in ("below", "other", "found") else fill(4)
        b.result("bm25", f"q-{name}", hits, [t(**whole, shares_query_term=sharing)])
    return b.build()


@pytest.fixture
def scenario(helpers: Any) -> EvalReport:
    return _scenario(helpers)


def _counts(diagnosis: Diagnosis) -> dict[str, int | None]:
    return {b.name: b.count for b in diagnosis.buckets}


def test_each_bucket_is_hit_in_order(scenario: EvalReport) -> None:
    diagnosis = diagnose(scenario, "dense", k=K)
    assert [b.name for b in diagnosis.buckets] == list(BUCKETS)
    assert [b.position for b in diagnosis.buckets] == list(range(1, 10))
    assert _counts(diagnosis) == {
        "gold-not-resolvable": 1,
        "document-not-indexed": 1,
        "split-by-chunker": 1,
        "beyond-encoder-window": 1,
        "just-below-cutoff": 1,
        "found-by-other-stage": 1,
        "vocabulary-mismatch": None,  # dense: not measurable, never zero
        "crowded-by-duplicates": 1,
        "not-retrieved": 1,
    }
    examples = {b.name: [e.query_id for e in b.examples] for b in diagnosis.buckets}
    assert examples["gold-not-resolvable"] == ["q-unres"]
    assert examples["document-not-indexed"] == ["q-noindex"]
    assert examples["split-by-chunker"] == ["q-split"]
    assert examples["beyond-encoder-window"] == ["q-window"]
    assert examples["just-below-cutoff"] == ["q-below"]
    assert examples["found-by-other-stage"] == ["q-other"]
    assert examples["crowded-by-duplicates"] == ["q-dup"]
    assert examples["not-retrieved"] == ["q-none"]
    assert diagnosis.bucket("found-by-other-stage").examples[0].found_by == ["bm25"]
    assert diagnosis.miss_count == 8
    assert diagnosis.found_count == 1
    assert diagnosis.gold_count == 9
    assert diagnosis.recall == pytest.approx(1 / 9)
    assert diagnosis.recorded_recall == pytest.approx(1 / 9)


def test_shares_and_weights(scenario: EvalReport) -> None:
    diagnosis = diagnose(scenario, "dense", k=K)
    measured = [b for b in diagnosis.buckets if b.count is not None]
    assert sum(b.count or 0 for b in measured) == diagnosis.miss_count
    assert sum(b.share or 0.0 for b in measured) == pytest.approx(1.0)
    for bucket in measured:
        assert bucket.weight == pytest.approx((bucket.count or 0) / 9)
    null = diagnosis.bucket("vocabulary-mismatch")
    assert null.share is None
    assert null.weight is None
    assert null.reason is not None
    assert "not measurable" in null.reason


def test_misses_without_a_measurement_go_on_and_are_counted(scenario: EvalReport) -> None:
    diagnosis = diagnose(scenario, "dense", k=K)
    # q-other, q-dup and q-none have no trace: they pass the chunk and window tests
    assert diagnosis.bucket("document-not-indexed").unmeasured == 3
    assert diagnosis.bucket("split-by-chunker").unmeasured == 3
    assert diagnosis.bucket("beyond-encoder-window").unmeasured == 3
    assert diagnosis.bucket("just-below-cutoff").unmeasured == 0


def test_lexical_stage_measures_vocabulary_not_window(scenario: EvalReport) -> None:
    diagnosis = diagnose(scenario, "bm25", k=K)
    counts = _counts(diagnosis)
    assert counts["beyond-encoder-window"] is None
    assert counts["vocabulary-mismatch"] == 1
    assert [e.query_id for e in diagnosis.bucket("vocabulary-mismatch").examples] == ["q-none"]
    # bm25 misses q-unres (bucket 1) and finds q-found, q-below, q-other
    assert counts["gold-not-resolvable"] == 1
    assert diagnosis.found_count == 3


def test_order_rule_vocabulary_after_other_stage(helpers: Any) -> None:
    """A quote that fits both 'found by another stage' and 'vocabulary mismatch' goes to 6."""
    g, t, fill = helpers.gold, helpers.trace, helpers.fillers
    b = helpers.ReportBuilder()
    b.query("q1", g("d1", "a quote", SPAN))
    b.stage("bm25")
    b.stage("dense", "dense")
    b.result(
        "bm25", "q1", fill(12), [t(doc_indexed=True, best_chunk_share=1.0, shares_query_term=False)]
    )
    b.result("dense", "q1", [("d1", 100, 200)])
    diagnosis = diagnose(b.build(), "bm25", k=K)
    assert _counts(diagnosis)["found-by-other-stage"] == 1
    assert _counts(diagnosis)["vocabulary-mismatch"] == 0


def test_external_stage_buckets_are_null(helpers: Any) -> None:
    g, fill = helpers.gold, helpers.fillers
    b = helpers.ReportBuilder(depth=2)
    b.query("q1", g("d1", "a quote", SPAN))
    b.query("q2", g("d2", "another quote", SPAN))
    b.stage("bm25")
    b.stage("ext", "command")
    b.no_chunker("ext")
    b.result("bm25", "q1", fill(2))
    b.result("ext", "q1", [("d1", 150, 160), ("x", 0, 5)])
    b.result("ext", "q2", fill(2))
    report = b.build(depth=2)
    diagnosis = diagnose(report, "ext", k=2)
    counts = _counts(diagnosis)
    for name in (
        "document-not-indexed",
        "split-by-chunker",
        "beyond-encoder-window",
        "just-below-cutoff",  # only 2 hits recorded for k = 2
        "vocabulary-mismatch",
    ):
        assert counts[name] is None, name
    assert counts["found-by-other-stage"] == 0
    assert counts["not-retrieved"] == 1
    by_name = {f.name: f for f in fixes(diagnosis)}
    for name in ("index-coverage", "larger-chunks", "smaller-chunks", "rerank", "raise-k"):
        assert by_name[name].expected is None, name
        assert by_name[name].misses is None, name
        assert "not measurable" in by_name[name].basis
    # unknown chunker kind: chunk-overlap cannot be ruled out, so it is listed as not measurable
    assert by_name["chunk-overlap"].expected is None
    # fixes with no estimate rank last
    ranked = fixes(diagnosis)
    estimable = [f.expected is not None for f in ranked]
    assert estimable == sorted(estimable, reverse=True)


def test_no_other_stage_makes_bucket_six_null(helpers: Any) -> None:
    b = helpers.ReportBuilder()
    b.query("q1", helpers.gold("d1", "a quote", SPAN))
    b.stage("bm25")
    b.result("bm25", "q1", helpers.fillers(3))
    diagnosis = diagnose(b.build(), k=K)
    assert diagnosis.bucket("found-by-other-stage").count is None
    assert "hybrid-fusion" in {f.name for f in fixes(diagnosis)}
    assert next(f for f in fixes(diagnosis) if f.name == "hybrid-fusion").expected is None


def test_default_stage_is_the_best_recall(scenario: EvalReport) -> None:
    # bm25 finds 3 of 9 at k = 2, dense 1 of 9
    assert diagnose(scenario, k=K).stage == "bm25"


def test_failed_and_unknown_stages(helpers: Any) -> None:
    b = helpers.ReportBuilder()
    b.query("q1", helpers.gold("d1", "a quote", SPAN))
    b.stage("bm25")
    b.stage("broken", "command", error="exit status 3")
    b.result("bm25", "q1", helpers.fillers(3))
    report = b.build()
    with pytest.raises(DiagnosisError, match=r"no stage named 'nope' \(stages: bm25, broken\)"):
        diagnose(report, "nope")
    with pytest.raises(DiagnosisError, match="failed in this run"):
        diagnose(report, "broken")
    with pytest.raises(DiagnosisError, match="k must be a positive integer"):
        diagnose(report, k=0)
    with pytest.raises(DiagnosisError, match="examples"):
        diagnose(report, examples=-1)


def test_examples_are_limited_and_quotes_shortened(helpers: Any) -> None:
    b = helpers.ReportBuilder()
    long_quote = "word " * 60
    for i in range(5):
        b.query(f"q{i}", helpers.gold(f"d{i}", long_quote, SPAN))
    b.stage("bm25")
    for i in range(5):
        b.result("bm25", f"q{i}", helpers.fillers(3))
    diagnosis = diagnose(b.build(), k=K, examples=2)
    bucket = diagnosis.bucket("not-retrieved")
    assert bucket.count == 5
    assert len(bucket.examples) == 2
    assert len(bucket.examples[0].quote) <= 80
    assert bucket.examples[0].quote.endswith("…")
    assert diagnose(b.build(), k=K, examples=0).bucket("not-retrieved").examples == []


def test_diagnosis_is_frozen_and_json_serialisable(scenario: EvalReport) -> None:
    diagnosis = diagnose(scenario, "dense", k=K)
    data = json.loads(json.dumps(diagnosis.model_dump(mode="json")))
    assert Diagnosis.model_validate(data) == diagnosis
    with pytest.raises(ValueError, match="frozen"):
        diagnosis.k = 3  # type: ignore[misc]


def test_multi_quote_queries_weigh_by_their_quotes(helpers: Any) -> None:
    g = helpers.gold
    b = helpers.ReportBuilder()
    b.query("q1", g("d1", "first", SPAN), g("d2", "second", SPAN))
    b.query("q2", g("d3", "third", SPAN))
    b.stage("bm25")
    b.result("bm25", "q1", [("d1", 100, 110)])
    b.result("bm25", "q2", [])
    diagnosis = diagnose(b.build(), k=K)
    assert diagnosis.recall == pytest.approx(0.25)
    assert diagnosis.recorded_recall == pytest.approx(0.25)
    assert diagnosis.single_quote is False
    assert diagnosis.bucket("not-retrieved").weight == pytest.approx(1 / 4 + 1 / 2)


def test_document_level_counts_any_hit_from_the_document(helpers: Any) -> None:
    g = helpers.gold
    b = helpers.ReportBuilder()
    b.query("q1", g("d1", "resolved", SPAN))
    b.query("q2", g("d2", "not found in its document"))
    b.query("q3", g("d3", "missed", SPAN))
    b.stage("bm25", chunker={"kind": "document"})
    b.result("bm25", "q1", [("d1", 0, 10)])  # far from the span: still the right document
    b.result("bm25", "q2", [("d2", 0, 10)])
    b.result("bm25", "q3", helpers.fillers(3))
    diagnosis = diagnose(b.build(level="document"), k=K)
    assert diagnosis.found_count == 2
    assert diagnosis.recall == pytest.approx(2 / 3)
    assert _counts(diagnosis)["not-retrieved"] == 1
    assert any("document level" in note for note in diagnosis.notes)
    # the builder scored with span overlap, so the recorded scores disagree and it is said
    assert any("differs from the recomputation" in note for note in diagnosis.notes)
