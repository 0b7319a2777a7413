"""One detection limit, one unit: the printed form and the level that reproduces a family."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundkit.stats import (
    StatsError,
    bh_adjust,
    family_text,
    holm_adjust,
    limit_text,
    paired_limit_text,
    reproducing_alpha,
    unpaired_limit_text,
)


@given(st.floats(min_value=0.0, max_value=10.0, allow_nan=False))
def test_limit_text_rounds_up_to_three_decimals_never_below(value: float) -> None:
    shown = limit_text(value)
    assert len(shown.split(".")[1]) == 3
    assert Decimal(shown) >= Decimal(repr(value))  # never below the limit as Python prints it
    assert float(shown) >= value
    assert Decimal(shown) - Decimal(repr(value)) <= Decimal("0.001")


def test_limit_text_examples() -> None:
    assert limit_text(0.15147697936023932) == "0.152"
    assert limit_text(0.037) == "0.037"
    assert limit_text(None) == "none at this n"
    assert limit_text(float("inf")) == "none at this n"
    assert paired_limit_text(0.0371, "holm", 20) == "0.038 (paired, holm over 20 comparisons)"
    assert paired_limit_text(0.03, "holm", 1) == "0.030 (paired, a family of one)"
    assert family_text("none", 6) == "a family of one"
    assert unpaired_limit_text(0.1) == "0.100 (unpaired: two independent runs)"


@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=9),
    st.sampled_from([0.01, 0.05, 0.1]),
    st.sampled_from(["holm", "bh"]),
)
def test_reproducing_alpha_gives_the_family_decision_alone(
    p_values: list[float], alpha: float, adjustment: str
) -> None:
    adjusted = (holm_adjust if adjustment == "holm" else bh_adjust)(p_values)
    for index, (raw, adj) in enumerate(zip(p_values, adjusted, strict=True)):
        level = reproducing_alpha(p_values, index, alpha, adjustment)  # type: ignore[arg-type]
        assert (raw < level) == (adj < alpha), (index, level)


def test_reproducing_alpha_holm_steps_and_refusals() -> None:
    p = [0.001, 0.02, 0.04]
    assert reproducing_alpha(p, 0, 0.05, "holm") == pytest.approx(0.05 / 3)
    assert reproducing_alpha(p, 1, 0.05, "holm") == pytest.approx(0.05 / 2)
    assert reproducing_alpha(p, 2, 0.05, "holm") == pytest.approx(0.05)
    # A failed earlier step stops Holm: the level is that step's, and the later p is above it.
    assert reproducing_alpha([0.001, 0.03, 0.031], 2, 0.05, "holm") == pytest.approx(0.025)
    assert reproducing_alpha([0.2], 0, 0.05, "none") == 0.05
    with pytest.raises(StatsError):
        reproducing_alpha([0.1], 3, 0.05, "holm")
    with pytest.raises(StatsError):
        reproducing_alpha([float("nan")], 0, 0.05, "holm")
    with pytest.raises(StatsError):
        reproducing_alpha([0.1, 0.2], 0, 1.5, "holm")
