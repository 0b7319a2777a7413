"""cohen_kappa against hand computations of (p_o - p_e) / (1 - p_e)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundkit.stats import StatsError, cohen_kappa


def _table(both_yes: int, a_only: int, b_only: int, both_no: int) -> tuple[list[bool], list[bool]]:
    a = [True] * both_yes + [True] * a_only + [False] * b_only + [False] * both_no
    b = [True] * both_yes + [False] * a_only + [True] * b_only + [False] * both_no
    return a, b


def test_two_by_two_by_hand() -> None:
    # 20 both yes, 5 A only, 10 B only, 15 both no: p_o = 35/50 = 0.7;
    # A says yes 25/50, B 30/50: p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.2/0.5 = 0.4.
    assert cohen_kappa(*_table(20, 5, 10, 15)) == pytest.approx(0.4, abs=1e-12)
    # 45 / 15 / 25 / 15: p_o = 0.6, p_e = 0.6*0.7 + 0.4*0.3 = 0.54; kappa = 0.06/0.46.
    assert cohen_kappa(*_table(45, 15, 25, 15)) == pytest.approx(0.06 / 0.46, abs=1e-12)


def test_three_labels_by_hand() -> None:
    a = [0, 0, 1, 1, 2, 2, 2, 0]
    b = [0, 1, 1, 1, 2, 0, 2, 0]
    # p_o = 6/8; A: 3,2,3 of label 0,1,2; B: 3,3,2: p_e = (9 + 6 + 6)/64 = 21/64.
    expected = (6 / 8 - 21 / 64) / (1 - 21 / 64)
    assert cohen_kappa(a, b) == pytest.approx(expected, abs=1e-12)


def test_perfect_chance_and_opposite() -> None:
    assert cohen_kappa(*_table(10, 0, 0, 10)) == pytest.approx(1.0)
    assert cohen_kappa(*_table(0, 10, 10, 0)) == pytest.approx(-1.0)
    # Independent raters at 50/50: observed equals chance.
    assert cohen_kappa(*_table(5, 5, 5, 5)) == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([True], [True, False], "labelled 1 and 2"),
        ([], [], "at least one item"),
        ([True, True], [True, True], "undefined"),
    ],
)
def test_bad_input(a: list[bool], b: list[bool], message: str) -> None:
    with pytest.raises(StatsError, match=message):
        cohen_kappa(a, b)


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=60))
def test_symmetric_and_at_most_one(pairs: list[tuple[bool, bool]]) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    try:
        kappa = cohen_kappa(a, b)
    except StatsError:
        assert len(set(a)) == len(set(b)) == 1
        assert a[0] == b[0]
        return
    assert kappa == pytest.approx(cohen_kappa(b, a))
    assert -1.0 - 1e-12 <= kappa <= 1.0 + 1e-12
