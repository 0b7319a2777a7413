"""``groundkit.stats.inference._binomial`` gives scipy.stats.binom's and binomtest's values,
bit for bit.

The binomial functions call the Boost ufuncs scipy.stats.binom calls, with its argument and
support checks; the exact test follows scipy.stats.binomtest's two-sided rule. Each is
compared with scipy by exact equality over the ranges the McNemar test, its detection limit
and power use; the McNemar p-value is also checked against integer arithmetic.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from fractions import Fraction
from math import comb
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from groundkit.stats.inference._binomial import (
    binom_cdf,
    binom_isf,
    binom_pmf,
    binom_ppf,
    binom_sf,
    binomtest_p_value,
)
from groundkit.stats.inference._mcnemar import mcnemar_p_value

FAST = settings(max_examples=200, deadline=None)


def _same(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> bool:
    """Both give the same values (NaN equal to NaN), or both raise the same error.

    Boost refuses some degenerate cases (an overflow at p ~ 1e-308): what matters is that
    scipy.stats refuses them alike.
    """
    outcomes = []
    for function in (ours, theirs):
        # Boost's warnings are errors in groundkit's modules only (the test settings): seen
        # alike from both sides, they are silenced for the comparison.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                outcomes.append(("value", np.asarray(function(*args), dtype=np.float64)))
            except (ArithmeticError, SystemError) as error:
                outcomes.append((type(error).__name__, None))
    (kind_a, a), (kind_b, b) = outcomes
    if kind_a != kind_b:
        return False
    return a is None or bool(np.array_equal(a, b, equal_nan=True))


SIZES = st.one_of(st.integers(0, 60), st.integers(0, 5000))
SHARES = st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0.0, 1.0))


@st.composite
def _arguments(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    size = draw(st.integers(1, 12))
    n = np.array([draw(SIZES) for _ in range(size)], dtype=np.int64)
    k = np.array([draw(st.integers(-3, int(m) + 3)) for m in n], dtype=np.int64)
    p = np.array([draw(SHARES) for _ in range(size)])
    return k, n, p


@FAST
@given(arguments=_arguments())
def test_pmf_cdf_sf_are_scipy_stats(arguments: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    k, n, p = arguments
    for ours, theirs in (
        (binom_pmf, scipy_stats.binom.pmf),
        (binom_cdf, scipy_stats.binom.cdf),
        (binom_sf, scipy_stats.binom.sf),
    ):
        assert _same(ours, theirs, k, n, p)
        assert _same(ours, theirs, int(k[0]), int(n[0]), float(p[0]))


@FAST
@given(
    q=st.one_of(st.floats(1e-300, 1e-6), st.floats(1e-6, 1.0, exclude_max=True)),
    n=SIZES,
    p=SHARES,
)
def test_quantiles_are_scipy_stats(q: float, n: int, p: float) -> None:
    assert _same(binom_ppf, scipy_stats.binom.ppf, q, n, p)
    assert _same(binom_isf, scipy_stats.binom.isf, q, n, p)
    assert _same(binom_ppf, scipy_stats.binom.ppf, q, np.arange(n + 1), 0.5)


@settings(max_examples=400, deadline=None)
@given(
    data=st.data(),
    n=st.one_of(st.integers(1, 40), st.integers(1, 20_000)),
    p=st.one_of(st.just(0.5), st.floats(0.0, 1.0)),
)
def test_binomtest_is_scipy_stats(data: st.DataObject, n: int, p: float) -> None:
    k = data.draw(st.integers(0, n))
    assert _same(binomtest_p_value, lambda *a: scipy_stats.binomtest(*a).pvalue, k, n, p)
    if p == 0.5:  # the McNemar case: always a value
        assert binomtest_p_value(k, n, p) == scipy_stats.binomtest(k, n, p).pvalue


@pytest.mark.parametrize("n", [1, 2, 7, 30, 61])
def test_mcnemar_stays_exact(n: int) -> None:
    for gained in range(n + 1):
        lost = n - gained
        low = min(gained, lost)
        exact = min(Fraction(1), Fraction(2 * sum(comb(n, i) for i in range(low + 1)), 2**n))
        if gained == lost:
            exact = Fraction(1)
        assert mcnemar_p_value(gained, lost) == pytest.approx(float(exact), rel=1e-13, abs=0.0)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="integer n"):
        binom_cdf(1, 2.5, 0.5)
    with pytest.raises(ValueError, match="0 < q < 1"):
        binom_ppf(1.0, 5, 0.5)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        binomtest_p_value(6, 5)
