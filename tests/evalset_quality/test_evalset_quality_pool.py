"""Pooled evaluation: merging, strata, allocation and stratified estimates by hand."""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from groundkit.evalset import EvalSetError, RelevanceJudge, callable_judge, run_pool
from groundkit.evalset.pool import allocate, build_pool, draw_sample, estimate_pool
from groundkit.judgments import EvalReport, QueryResult, StageReport
from groundkit.judgments.report import GoldEvidence, QueryInfo, ReportHit, RunInfo
from groundkit.stats import RatioStratum, stratified_domain_interval, wilson_interval

CORPUS = {"a": string.ascii_letters * 2, "b": "".join(chr(0x100 + i) for i in range(100))}
QUERIES = {"q1": "question one", "q2": "question two"}
# Stage s1 and s2, top 3 of each query: (doc, start, end).
HITS = {
    "bm25": {
        "q1": [("a", 0, 10), ("a", 20, 30), ("b", 0, 10)],
        "q2": [("a", 50, 60), ("b", 10, 20)],
    },
    "s2": {
        "q1": [("a", 5, 15), ("b", 30, 40), ("a", 20, 30)],
        "q2": [("b", 10, 20), ("a", 70, 80)],
    },
}
RELEVANT = {"q1|a|0-15", "q1|a|20-30", "q1|b|30-40", "q2|b|10-20"}


def _report(hits: dict[str, dict[str, list[tuple[str, int, int]]]] = HITS) -> EvalReport:
    run = RunInfo(created_at="t", package_versions={}, corpus_fingerprint="c",
                  judgments_fingerprint="j")  # fmt: skip
    stages = [
        StageReport(
            name=name,
            kind="bm25",
            baseline=name == "bm25",
            queries=[
                QueryResult(
                    query_id=q,
                    scores={},
                    hits=[ReportHit(doc=d, start=s, end=e, score=1.0) for d, s, e in rows],
                )
                for q, rows in by_query.items()
            ],
        )
        for name, by_query in hits.items()
    ]
    # The report needs gold to be a report; the pool never reads it.
    gold = [GoldEvidence(doc="a", quote=CORPUS["a"][90:95], spans=[(90, 95)])]
    queries = [QueryInfo(query_id=q, query=text, gold=gold) for q, text in QUERIES.items()]
    return EvalReport(run=run, queries=queries, stages=stages)


def test_overlapping_hits_merge_and_strata_take_the_first_stage() -> None:
    pool = build_pool([("r", _report())], k=3, bands=(1,))
    ids = {item.item_id: dict(item.ranks) for item in pool.items}
    assert ids == {
        "q1|a|0-15": {"bm25": 1, "s2": 1},
        "q1|a|20-30": {"bm25": 2, "s2": 3},
        "q1|b|0-10": {"bm25": 3},
        "q1|b|30-40": {"s2": 2},
        "q2|a|50-60": {"bm25": 1},
        "q2|a|70-80": {"s2": 2},
        "q2|b|10-20": {"bm25": 2, "s2": 1},
    }
    assert pool.strata == [("bm25", "1"), ("bm25", "2-3"), ("s2", "2-3")]
    sizes = [pool.stratum_of.count(h) for h in range(3)]
    assert sizes == [2, 3, 2]


def test_several_reports_prefix_the_stage_names() -> None:
    pool = build_pool([("x", _report()), ("y", _report())], k=3)
    assert [s.name for s in pool.stages] == ["x:bm25", "x:s2", "y:bm25", "y:s2"]
    assert len(pool.items) == 7  # the same hits are the same items


def test_chosen_stages_in_their_order() -> None:
    pool = build_pool([("r", _report())], k=3, stages=["s2"])
    assert [s.name for s in pool.stages] == ["s2"]
    assert len(pool.items) == 5
    with pytest.raises(EvalSetError, match="no stage named 'x' in the pool"):
        build_pool([("r", _report())], k=3, stages=["x"])


def test_allocation_is_equal_and_gives_on_what_a_small_stratum_cannot_take() -> None:
    assert allocate([2, 3, 2], 4) == [2, 1, 1]
    assert allocate([1, 10, 10], 9) == [1, 4, 4]
    assert allocate([1, 2], 50) == [1, 2]


def _pool_and_sample() -> tuple[object, list[int], list[int | None]]:
    pool = build_pool([("r", _report())], k=3, bands=(1,))
    index = {item.item_id: i for i, item in enumerate(pool.items)}
    chosen = ["q1|a|0-15", "q2|a|50-60", "q1|a|20-30", "q1|b|30-40"]
    sample = sorted(index[c] for c in chosen)
    grades = [3 if pool.items[i].item_id in RELEVANT else 0 for i in sample]
    return pool, sample, list(grades)


def test_estimates_on_a_hand_built_sample() -> None:
    pool, sample, grades = _pool_and_sample()
    strata, stages, comparisons, share = estimate_pool(pool, sample, grades)  # type: ignore[arg-type]
    assert [(s.size, s.sampled, s.relevant) for s in strata] == [(2, 2, 1), (3, 1, 1), (2, 1, 1)]
    s1, s2 = stages
    # s1: p = 2/5 * 1/2 + 3/5 * 1 + 2/5 * 0 = 0.8, Var = (2/5)² * 1/4 / 2 = 0.02, n_eff capped at
    # its 3 sampled items.
    assert s1.precision is not None
    assert s1.precision.estimate == pytest.approx(0.8)
    assert s1.precision.effective_n == 3.0
    expected = stratified_domain_interval(
        [RatioStratum(n=2, population_size=2, numerator=1, denominator=2),
         RatioStratum(n=1, population_size=3, numerator=1, denominator=1),
         RatioStratum(n=1, population_size=2, numerator=0, denominator=0)], 5)  # fmt: skip
    assert s1.precision == expected
    # s2: 2/5 * 1/2 + 3/5 + 2/5 = 1.2, clipped to 1.
    assert s2.precision is not None
    assert s2.precision.estimate == 1.0
    # Recall: s1 X = 2*1/2 + 3*1 + 0 = 4 over Y = 1 + 3 + 2 = 6; s2 finds all.
    assert s1.recall is not None
    assert s1.recall.estimate == pytest.approx(2 / 3)
    assert s2.recall is not None
    assert s2.recall.estimate == pytest.approx(1.0)
    assert share is not None
    assert share.estimate == pytest.approx(2 / 7 * 0.5 + 3 / 7 + 2 / 7)
    (comparison,) = comparisons
    assert (comparison.stage, comparison.gained, comparison.lost, comparison.items) == (
        "s2",
        1,
        0,
        4,
    )
    assert comparison.verdict == "too few queries"
    # The difference is the whole pool's, strata weighted by size: s2 gains the relevant item
    # of the last stratum (2 items, 1 sampled), so 2 of the pool's 6 estimated relevant items,
    # the difference of the two stages' pooled recalls above (1 - 2/3).
    assert comparison.difference == pytest.approx(s2.recall.estimate - s1.recall.estimate)
    assert comparison.difference == pytest.approx(1 / 3)


def test_a_census_gives_the_exact_shares() -> None:
    pool = build_pool([("r", _report())], k=3, bands=(1,))
    sample = list(range(len(pool.items)))
    grades = [3 if item.item_id in RELEVANT else 1 for item in pool.items]
    _, stages, _, _ = estimate_pool(pool, sample, grades)
    s1, s2 = stages
    assert s1.precision is not None
    assert s1.precision.estimate == pytest.approx(3 / 5)
    assert s2.precision is not None
    assert s2.precision.estimate == pytest.approx(4 / 5)
    assert s1.recall is not None
    assert s1.recall.estimate == pytest.approx(3 / 4)
    assert s2.recall == wilson_interval(4, 4)  # one share over the whole census


def test_undecided_items_count_neither_way() -> None:
    pool, sample, grades = _pool_and_sample()
    grades[0] = None
    strata, _, _, _ = estimate_pool(pool, sample, grades)  # type: ignore[arg-type]
    assert (strata[0].sampled, strata[0].decided) == (2, 1)


def test_run_pool_rerun_on_the_cache_makes_no_call(tmp_path: Path) -> None:
    calls: list[str] = []
    relevant = {CORPUS["a"][0:15], CORPUS["a"][20:30], CORPUS["b"][30:40], CORPUS["b"][10:20]}

    def grade(query: str, passage: str) -> int:
        calls.append(passage)
        return 3 if passage in relevant else 0

    def judge() -> RelevanceJudge:
        return RelevanceJudge(callable_judge(grade), model="count", cache=tmp_path / "c.jsonl")

    first = run_pool([("r", _report())], CORPUS, judge(), k=3, n=7, seed=5, bands=(1,))
    assert first.usage.calls == len(calls) == 7 * 3
    assert [s.precision.estimate for s in first.stages if s.precision] == [
        pytest.approx(0.6), pytest.approx(0.8)
    ]  # fmt: skip
    again = run_pool([("r", _report())], CORPUS, judge(), k=3, n=7, seed=5, bands=(1,))
    assert (again.usage.calls, again.usage.cached) == (0, 21)
    assert len(calls) == 21
    assert again.stages == first.stages
    assert PoolReportRoundTrip(first)


def PoolReportRoundTrip(report: object) -> bool:
    from groundkit.evalset import PoolReport

    assert isinstance(report, PoolReport)
    return PoolReport.model_validate_json(report.model_dump_json()) == report


def test_bad_input() -> None:
    empty = _report({"bm25": {"q1": [], "q2": []}})
    with pytest.raises(EvalSetError, match="no hits to pool"):
        build_pool([("r", empty)], k=3)
    other = _report()
    other = other.model_copy(
        update={"run": other.run.model_copy(update={"corpus_fingerprint": "other"})}
    )
    with pytest.raises(EvalSetError, match="report 'y' was run on another corpus than 'x'"):
        build_pool([("x", _report()), ("y", other)], k=3)
    with pytest.raises(EvalSetError, match="report labels repeat"):
        build_pool([("x", _report()), ("x", _report())], k=3)
    pool = build_pool([("r", _report())], k=3, bands=(1,))
    with pytest.raises(EvalSetError, match="cannot cover the pool's 3 strata"):
        draw_sample(pool, 2, 0)
    with pytest.raises(EvalSetError, match="not in the corpus"):
        run_pool([("r", _report())], {"a": CORPUS["a"]}, RelevanceJudge(
            callable_judge(lambda q, p: 0), model="m"), k=3, n=7)  # fmt: skip
