"""The verdict engine compare_items."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from groundkit.stats import compare_items, detection_limit, paired_minimum_detectable_difference


def runs(
    both: int, fixed: int, broken: int, neither: int
) -> tuple[dict[str, bool], dict[str, bool]]:
    a: dict[str, bool] = {}
    b: dict[str, bool] = {}
    groups = [
        (both, True, True),
        (fixed, False, True),
        (broken, True, False),
        (neither, False, False),
    ]
    for size, before, after in groups:
        for _ in range(size):
            item = f"item-{len(a):04d}"
            a[item], b[item] = before, after
    return a, b


def test_stats_compare_items_worked_example() -> None:
    a, b = runs(240, 3, 27, 30)
    result = compare_items(a, b)
    assert result.verdict == "worse"
    assert result.kind == "binary"
    assert round(100 * result.difference, 1) == -8.0
    assert result.detection_limit == detection_limit(300, 0.10)
    assert round(100 * result.detection_limit, 1) == 5.3
    assert result.interval_method == "tango"
    assert result.test == "exact McNemar"
    assert (result.ties, result.minimum_queries, result.family_size) == (270, 6, 1)
    assert result.flip_share == pytest.approx(0.10)
    assert (result.gained, result.lost, result.item_count) == (3, 27, 300)
    assert result.mcnemar_p_value is not None
    assert result.mcnemar_p_value < 0.001
    assert result.mcnemar_p_value == binomtest(3, 30, 0.5).pvalue
    assert result.p_value == result.mcnemar_p_value
    assert result.sign_flip_p_value is None
    assert result.confidence_interval_low < result.confidence_interval_high < 0
    assert (result.mean_a, result.mean_b) == pytest.approx((267 / 300, 243 / 300))
    assert "worse: -0.080 [" in result.summary()
    assert "detection limit 0.0" in result.summary()  # metric scale, as everywhere


def test_stats_four_items_flipping_one_way_are_too_few_queries() -> None:
    a, b = runs(0, 4, 0, 0)
    result = compare_items(a, b)
    assert result.confidence_interval_low > 0.0  # the score interval leans one way...
    assert result.mcnemar_p_value == pytest.approx(0.125)  # ...but four flips prove little
    assert result.verdict == "too few queries"  # 2 / 2^4 = 0.125: no 4 items could do it
    assert result.minimum_queries == 6
    assert result.detection_limit is None
    assert "too few queries: 4 < 6" in result.summary()


@pytest.mark.parametrize("n", [1, 2])
def test_stats_one_or_two_items_are_never_significant(n: int) -> None:
    for a_value, b_value in ((0.0, 1.0), (0.1, 0.9)):
        a = {f"q{i}": a_value for i in range(n)}
        b = {f"q{i}": b_value for i in range(n)}
        result = compare_items(a, b)
        assert result.verdict == "too few queries"
        assert result.p_value >= 0.5


def test_stats_six_items_all_improving_are_enough() -> None:
    a, b = runs(0, 6, 0, 0)
    result = compare_items(a, b)
    assert result.p_value == pytest.approx(2 / 2**6)
    assert result.verdict == "better"


def test_stats_clear_improvement_is_better_and_swapping_gives_worse() -> None:
    a, b = runs(200, 40, 5, 55)
    forward = compare_items(a, b)
    backward = compare_items(b, a)
    assert forward.verdict == "better"
    assert backward.verdict == "worse"
    assert backward.difference == -forward.difference
    assert (backward.gained, backward.lost) == (forward.lost, forward.gained)


def test_stats_zero_flips_give_a_finite_floor_limit() -> None:
    a, b = runs(150, 0, 0, 50)
    result = compare_items(a, b)
    assert result.verdict == "inconclusive"
    assert result.flip_share == 0.0
    assert result.detection_limit == pytest.approx(detection_limit(200, 3 / 200))
    assert result.detection_limit is not None
    assert 0 < result.detection_limit < 1
    tiny = compare_items({"x": True, "y": False}, {"x": True, "y": False})
    assert tiny.verdict == "too few queries"
    assert tiny.detection_limit is None


def test_stats_zero_one_floats_are_binary_and_match_bools() -> None:
    a, b = runs(100, 12, 2, 20)
    as_floats = compare_items(
        {k: float(v) for k, v in a.items()}, {k: int(v) for k, v in b.items()}
    )
    assert as_floats.kind == "binary"
    assert as_floats == compare_items(a, b)


def test_stats_numeric_rows_use_sign_flip_and_paired_floor() -> None:
    rng = np.random.default_rng(5)
    base = rng.random(120)
    cand = np.clip(base + rng.normal(0.05, 0.1, 120), 0, 1)
    a = {f"q{i}": float(v) for i, v in enumerate(base)}
    b = {f"q{i}": float(v) for i, v in enumerate(cand)}
    result = compare_items(a, b, metric="ndcg@10")
    assert result.kind == "numeric"
    assert result.metric == "ndcg@10"
    assert result.mcnemar_p_value is None
    assert result.sign_flip_p_value is not None
    assert result.p_value == result.sign_flip_p_value
    assert result.verdict == "better"
    assert result.detection_limit == pytest.approx(
        paired_minimum_detectable_difference(cand - base)
    )


def test_stats_four_numeric_items_are_not_called_better() -> None:
    result = compare_items({f"q{i}": 0.2 for i in range(4)}, {f"q{i}": 0.7 for i in range(4)})
    assert result.sign_flip_p_value == 0.125  # exact: 2 of 16 sign patterns
    assert result.verdict == "too few queries"
    # Four identical differences say little about the spread: the betting interval is wide.
    assert result.interval_method == "betting"
    assert result.confidence_interval_low < 0.5 < result.confidence_interval_high


def test_stats_per_metric_rows_select_one_metric() -> None:
    a, b = runs(200, 30, 3, 67)
    rows_a = {k: {"hit@10": v, "mrr": 0.5} for k, v in a.items()}
    rows_b = {k: {"hit@10": v, "mrr": 0.5} for k, v in b.items()}
    picked = compare_items(rows_a, rows_b, metric="hit@10")
    assert picked.model_dump(exclude={"metric"}) == compare_items(a, b).model_dump(
        exclude={"metric"}
    )
    flat = compare_items(rows_a, rows_b, metric="mrr")
    assert flat.kind == "numeric"
    assert flat.difference == 0.0
    assert flat.verdict == "inconclusive"


def test_stats_non_binary_values_make_rows_numeric() -> None:
    a = {f"q{i}": float(i % 2) for i in range(20)}
    b = {**a, "q0": 0.5}
    assert compare_items(a, b).kind == "numeric"


def test_identical_numeric_deltas_never_claim_a_zero_detection_limit() -> None:
    a = {f"q{i}": 0.5 for i in range(10)}
    b = {f"q{i}": 0.6 for i in range(10)}
    result = compare_items(a, b)
    # sd of the deltas is 0; the floor lets 3 of 10 items differ by the metric's full range 1.
    floor = paired_minimum_detectable_difference((0.3 * 0.7) ** 0.5, 10)
    assert result.detection_limit == pytest.approx(floor)
    assert result.detection_limit > 0.0
    same = compare_items(a, dict(a))
    assert same.detection_limit == pytest.approx(floor)
    unbounded = compare_items(a, dict(a), bounds=None)
    assert unbounded.detection_limit == pytest.approx(
        paired_minimum_detectable_difference((0.3 * 0.7) ** 0.5 * 0.5, 10)
    )
