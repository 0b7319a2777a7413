"""Every validation path of the statistics distribution raises a one-line StatsError."""

from __future__ import annotations

import math

import numpy as np
import pytest

from groundkit.stats import (
    StatsError,
    bootstrap_interval,
    compare_items,
    detection_limit,
    holm_adjust,
    mcnemar,
    minimum_detectable_difference,
    paired_bootstrap,
    paired_minimum_detectable_difference,
    sign_flip_test,
    stratified_wilson_interval,
    wilson_interval,
)

BASE = {"q1": 0.2, "q2": 0.5, "q3": 0.9}
CAND = {"q1": 0.3, "q2": 0.4, "q3": 1.0}


def run(baseline: object = BASE, candidate: object = CAND, **settings: object) -> object:
    return paired_bootstrap(
        baseline,  # type: ignore[arg-type]
        candidate,  # type: ignore[arg-type]
        baseline_name="bm25",
        candidate_name="hybrid",
        metric="ndcg@10",
        **settings,  # type: ignore[arg-type]
    )


def test_stats_error_is_a_value_error() -> None:
    assert issubclass(StatsError, ValueError)


@pytest.mark.parametrize("resamples", [0, -5])
def test_stats_resamples_must_be_positive(resamples: int) -> None:
    with pytest.raises(
        StatsError, match=rf"resamples must be a positive integer \(got {resamples}\)"
    ):
        run(resamples=resamples)


@pytest.mark.parametrize("resamples", [10.0, "100", True])
def test_stats_resamples_must_be_an_integer(resamples: object) -> None:
    with pytest.raises(StatsError, match="resamples must be an integer"):
        run(resamples=resamples)


@pytest.mark.parametrize("level", [0.0, 1.0, -0.5, 1.5, math.nan])
def test_stats_confidence_level_strictly_inside_unit_interval(level: float) -> None:
    with pytest.raises(StatsError, match="confidence_level must be strictly between 0 and 1"):
        run(confidence_level=level)


def test_stats_negative_seed_is_refused() -> None:
    with pytest.raises(StatsError, match="seed must be a non-negative integer"):
        run(seed=-1)


def test_stats_unknown_method_is_refused() -> None:
    with pytest.raises(StatsError, match="method must be"):
        run(method="jackknife")


def test_stats_no_scores() -> None:
    with pytest.raises(StatsError, match="no scores"):
        run({}, {})


def test_stats_scores_must_be_mappings() -> None:
    with pytest.raises(StatsError, match="must be mappings"):
        run([0.1, 0.2], [0.3, 0.4])


def test_stats_different_ids_lists_both_sides() -> None:
    with pytest.raises(StatsError) as caught:
        run({"q1": 0.1, "q2": 0.2, "q9": 0.3}, {"q1": 0.1, "q2": 0.2, "q7": 0.5, "q8": 0.5})
    message = str(caught.value)
    assert "\n" not in message
    assert "1 missing from hybrid ('q9')" in message
    assert "2 missing from bm25 ('q7', 'q8')" in message


def test_stats_different_ids_one_side_empty() -> None:
    with pytest.raises(StatsError, match=r"2 missing from hybrid \('a', 'b'\)"):
        run({"a": 1.0, "b": 0.0}, {})


def test_stats_long_id_lists_are_truncated() -> None:
    baseline = {f"q{i:04d}": 0.5 for i in range(1000)}
    candidate = {f"q{i:04d}": 0.5 for i in range(10)}
    with pytest.raises(StatsError) as caught:
        run(baseline, candidate)
    message = str(caught.value)
    assert (
        "990 missing from hybrid ('q0010', 'q0011', 'q0012', 'q0013', 'q0014', … and 985 more)"
        in message
    )
    assert len(message) < 200


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_stats_non_finite_score_names_query_and_side(bad: float) -> None:
    with pytest.raises(StatsError, match=r"hybrid score for query 'q2' is not finite"):
        run(BASE, {**CAND, "q2": bad})
    with pytest.raises(StatsError, match=r"bm25 score for query 'q3' is not finite"):
        run({**BASE, "q3": bad}, CAND)


@pytest.mark.parametrize("bad", ["0.5", None, [0.5], 1 + 2j])
def test_stats_non_number_score_is_refused_not_coerced(bad: object) -> None:
    with pytest.raises(StatsError, match=r"bm25 score for query 'q1' is not a real number"):
        run({**BASE, "q1": bad}, CAND)


def test_stats_bootstrap_interval_validation() -> None:
    with pytest.raises(StatsError, match="no scores"):
        bootstrap_interval([])
    with pytest.raises(StatsError, match=r"scores\[1\] is not finite"):
        bootstrap_interval([0.1, math.nan])
    with pytest.raises(StatsError, match=r"scores\['b'\] is not finite"):
        bootstrap_interval({"a": 0.1, "b": math.inf})
    with pytest.raises(StatsError, match="one-dimensional"):
        bootstrap_interval(np.zeros((2, 2)))
    with pytest.raises(StatsError, match="real numbers"):
        bootstrap_interval(np.array(["a", "b"]))
    with pytest.raises(StatsError, match="sequence or mapping"):
        bootstrap_interval("0.5")  # type: ignore[arg-type]
    with pytest.raises(StatsError, match="resamples"):
        bootstrap_interval([0.5], resamples=0)
    with pytest.raises(StatsError, match="confidence_level"):
        bootstrap_interval([0.5], confidence_level=1.0)


def test_stats_mcnemar_validation() -> None:
    with pytest.raises(StatsError, match=r"pair item by item \(got 2 and 3 items\)"):
        mcnemar([True, False], [True, False, True])
    with pytest.raises(StatsError, match="no items"):
        mcnemar([], [])
    with pytest.raises(StatsError, match=r"after\[1\] is not a right-or-wrong outcome"):
        mcnemar([True, False], [True, 0.5])  # type: ignore[list-item]
    with pytest.raises(StatsError, match=r"before\[0\] is not a right-or-wrong outcome"):
        mcnemar([2, False], [True, True])  # type: ignore[list-item]


def test_stats_power_validation() -> None:
    with pytest.raises(StatsError, match="n must be at least 1"):
        detection_limit(0, 0.1)
    with pytest.raises(StatsError, match=r"flip_share must be in \(0, 1\]"):
        detection_limit(100, 0.0)
    with pytest.raises(StatsError, match=r"flip_share must be in \(0, 1\]"):
        detection_limit(100, 1.5)
    with pytest.raises(StatsError, match="flip_share is not finite"):
        detection_limit(100, math.nan)
    with pytest.raises(StatsError, match="confidence must be strictly between"):
        detection_limit(100, 0.1, confidence=1.0)
    with pytest.raises(StatsError, match="power must be strictly between"):
        minimum_detectable_difference(100, power=0.0)
    with pytest.raises(StatsError, match="alpha must be strictly between"):
        minimum_detectable_difference(100, alpha=1.0)
    with pytest.raises(StatsError, match="n is required"):
        paired_minimum_detectable_difference(0.5)
    with pytest.raises(StatsError, match="sd must be non-negative"):
        paired_minimum_detectable_difference(-0.1, 10)
    with pytest.raises(StatsError, match="at least 2 deltas"):
        paired_minimum_detectable_difference([0.3])
    with pytest.raises(StatsError, match="not a bool"):
        paired_minimum_detectable_difference(True, 10)


def test_stats_wilson_validation() -> None:
    with pytest.raises(StatsError, match=r"successes \(11\) cannot exceed n \(10\)"):
        wilson_interval(11, 10)
    with pytest.raises(StatsError, match="successes must be at least 0"):
        wilson_interval(-1, 10)
    with pytest.raises(StatsError, match="n must be at least 1"):
        wilson_interval(0, 0)
    with pytest.raises(StatsError, match="non-empty sequence"):
        stratified_wilson_interval([])
    with pytest.raises(StatsError, match="stratum 1 must be a Stratum"):
        stratified_wilson_interval([(1, 2, 3), (1, 2)])  # type: ignore[list-item]
    with pytest.raises(StatsError, match=r"stratum 0: successes \(5\) cannot exceed n \(4\)"):
        stratified_wilson_interval([(5, 4, 10)])
    with pytest.raises(StatsError, match="stratum 0 population_size must be at least 1"):
        stratified_wilson_interval([(1, 4, 0)])


def test_stats_sign_flip_and_holm_validation() -> None:
    with pytest.raises(StatsError, match=r"pair item by item \(got 2 and 1\)"):
        sign_flip_test([0.1, 0.2], [0.3])
    with pytest.raises(StatsError, match="both be mappings or both be sequences"):
        sign_flip_test({"a": 0.1}, [0.3])
    with pytest.raises(StatsError, match="missing from candidate"):
        sign_flip_test({"a": 0.1, "b": 0.2}, {"a": 0.3})
    with pytest.raises(StatsError, match="resamples"):
        sign_flip_test([0.1], [0.2], resamples=0)
    with pytest.raises(StatsError, match=r"p-value 'x' must be in \[0, 1\]"):
        holm_adjust({"x": 1.5})
    with pytest.raises(StatsError, match=r"p-value \[1\] is not finite"):
        holm_adjust([0.1, math.nan])
    with pytest.raises(StatsError, match="mapping or a sequence"):
        holm_adjust(0.5)  # type: ignore[call-overload]


def test_stats_compare_items_validation() -> None:
    with pytest.raises(StatsError, match=r"1 missing from b \('x'\); 1 missing from a \('y'\)"):
        compare_items({"x": True, "z": False}, {"y": True, "z": False})
    rows = {"q1": {"hit@10": 1.0, "mrr": 0.5}, "q2": {"hit@10": 0.0, "mrr": 0.0}}
    with pytest.raises(StatsError, match=r"pass metric= \(available: hit@10, mrr\)"):
        compare_items(rows, rows)
    with pytest.raises(StatsError, match="row 'q1' has no metric 'ndcg'"):
        compare_items(rows, rows, metric="ndcg")
    with pytest.raises(
        StatsError, match=r"a mixes per-metric rows and plain values \(plain: 'q2'\)"
    ):
        compare_items({"q1": {"hit@10": 1.0}, "q2": 1.0}, rows, metric="hit@10")
    # One numeric item is a verdict of its own, not an error.
    assert compare_items({"q": 0.3}, {"q": 0.7}).verdict == "too few queries"
    with pytest.raises(StatsError, match="alpha"):
        compare_items({"q": True}, {"q": False}, alpha=0.0)
    with pytest.raises(StatsError, match="b score for query 'q' is not a real number"):
        compare_items({"q": True}, {"q": "yes"})  # type: ignore[dict-item]
    with pytest.raises(StatsError, match="must map item ids"):
        compare_items([True], {"q": True})  # type: ignore[arg-type]
