"""The scipy.stats-free functions of ``groundkit.stats.kernels._special`` give scipy's values,
bit for bit.

Each distribution function is compared with the ``scipy.stats`` method it stands for, and
:func:`brentq` with ``scipy.optimize.brentq``, over the ranges the verdict engine uses; the
comparisons are exact equalities (stronger than the 1e-12 relative the engine promises). A
subprocess then checks what a comparison (graded and right-or-wrong) imports: scipy.special,
not scipy.stats.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from scipy import stats as scipy_stats

from groundkit.stats.inference import _power
from groundkit.stats.kernels._signflip_exact import exact_two_sided_tail
from groundkit.stats.kernels._special import (
    BRENTQ_RTOL,
    brentq,
    fair_binomial_pmf,
    norm_cdf,
    norm_sf,
    t_cdf,
    t_ppf,
    t_sf,
)

FAST = settings(max_examples=300, deadline=None)
REALS = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False)
DFS = st.one_of(st.integers(min_value=1, max_value=200), st.integers(min_value=1, max_value=10**7))
QUANTILES = st.floats(min_value=1e-300, max_value=1.0, exclude_max=True)


@FAST
@given(x=REALS, df=DFS)
def test_student_t_tails_are_scipy_stats(x: float, df: int) -> None:
    assert t_sf(x, df) == float(scipy_stats.t.sf(x, df))
    assert t_cdf(x, df) == float(scipy_stats.t.cdf(x, df))


@FAST
@given(q=QUANTILES, df=DFS)
def test_student_t_quantile_is_scipy_stats(q: float, df: int) -> None:
    assert t_ppf(q, df) == float(scipy_stats.t.ppf(q, df))


@FAST
@given(x=REALS)
def test_normal_tails_are_scipy_stats(x: float) -> None:
    assert norm_sf(x) == float(scipy_stats.norm.sf(x))
    assert norm_cdf(x) == float(scipy_stats.norm.cdf(x))


def test_tails_at_infinities_match() -> None:
    for x in (math.inf, -math.inf):
        assert t_sf(x, 5) == float(scipy_stats.t.sf(x, 5))
        assert norm_cdf(x) == float(scipy_stats.norm.cdf(x))


@settings(max_examples=60, deadline=None)
@given(count=st.one_of(st.integers(0, 300), st.integers(300, 70_000)))
def test_fair_binomial_is_scipy_stats(count: int) -> None:
    k = np.arange(count + 1)
    expected = scipy_stats.binom.pmf(k, count, 0.5)
    assert np.array_equal(fair_binomial_pmf(count), expected)


def _reference_tail(values: list[int], threshold: int) -> float:
    """P(|Σ ±v| ≥ threshold) by enumerating every sign pattern in integers (exact)."""
    hits = 0
    for pattern in range(1 << len(values)):
        total = sum(v if pattern >> i & 1 else -v for i, v in enumerate(values))
        hits += abs(total) >= threshold
    return hits / (1 << len(values))


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(1, 4), min_size=1, max_size=14),
    share=st.floats(0.0, 1.0),
)
def test_the_exact_sign_flip_tail_stays_exact(values: list[int], share: float) -> None:
    # Repeated absolute values go through the fair binomial: the tail is still the exact one.
    threshold = max(1, round(share * sum(values)))
    got = exact_two_sided_tail(np.array(values, dtype=np.float64), threshold - 0.5)
    assert got == pytest.approx(_reference_tail(values, threshold), rel=1e-14, abs=0.0)


def _function(coefficients: list[float], root: float) -> Callable[[float], float]:
    a, b, c = coefficients

    def f(x: float) -> float:
        u = x - root
        return u * (1.0 + a * a) + b * u**3 + c * math.sin(3.0 * x) * u * u

    return f


@settings(max_examples=400, deadline=None)
@given(
    coefficients=st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3),
    root=st.floats(-50.0, 50.0),
    left=st.floats(1e-6, 40.0),
    right=st.floats(1e-6, 40.0),
    xtol=st.floats(1e-15, 1e-1),
    rtol=st.sampled_from([BRENTQ_RTOL, 1e-12, 1e-6]),
)
def test_brentq_takes_scipys_steps(
    coefficients: list[float], root: float, left: float, right: float, xtol: float, rtol: float
) -> None:
    f = _function(coefficients, root)
    a, b = root - left, root + right
    if f(a) * f(b) > 0.0:
        with pytest.raises(ValueError, match="different signs"):
            brentq(f, a, b, xtol=xtol, rtol=rtol)
        return
    assert brentq(f, a, b, xtol=xtol, rtol=rtol) == optimize.brentq(f, a, b, xtol=xtol, rtol=rtol)
    assert brentq(f, b, a, xtol=xtol, rtol=rtol) == optimize.brentq(f, b, a, xtol=xtol, rtol=rtol)


def test_brentq_refuses_what_scipy_refuses() -> None:
    def line(x: float) -> float:
        return x - 0.3

    with pytest.raises(ValueError, match="xtol"):
        brentq(line, 0.0, 1.0, xtol=0.0)
    with pytest.raises(ValueError, match="rtol"):
        brentq(line, 0.0, 1.0, xtol=1e-9, rtol=1e-17)
    with pytest.raises(ValueError, match="NaN"):
        brentq(lambda x: math.nan, 0.0, 1.0, xtol=1e-9)
    with pytest.raises(RuntimeError, match="converge"):
        brentq(lambda x: x**3 - 0.3, 0.0, 1.0, xtol=1e-15, maxiter=2)
    with pytest.raises(RuntimeError):
        optimize.brentq(lambda x: x**3 - 0.3, 0.0, 1.0, xtol=1e-15, maxiter=2)
    assert brentq(line, 0.3, 1.0, xtol=1e-9) == 0.3  # a zero at an end is returned as is


@pytest.mark.parametrize("df", [1, 2, 5, 9, 29, 30, 171, 999, 20_000])
@pytest.mark.parametrize(("alpha", "power"), [(0.05, 0.8), (0.01, 0.9), (0.01, 0.5), (0.001, 0.8)])
def test_detection_limit_shift_is_the_scipy_root(df: int, alpha: float, power: float) -> None:
    # The root the engine's detection limit uses, found again by scipy with the same function.
    critical = float(scipy_stats.t.ppf(1.0 - alpha / 2.0, df))

    def shortfall(shift: float) -> float:
        return _power._two_sided_t_power(critical, df, shift) - power

    upper = critical + 4.0
    while shortfall(upper) < 0.0:
        upper *= 2.0
    expected = optimize.brentq(shortfall, 0.0, upper, xtol=1e-9)
    assert _power._t_shift(df, alpha, power) == expected


@pytest.mark.parametrize(("n", "share"), [(30, 0.2), (172, 0.1), (500, 0.05), (2000, 0.5)])
def test_mcnemar_detection_limit_is_the_scipy_root(n: int, share: float) -> None:
    def shortfall(change: float) -> float:
        return _power.mcnemar_power(n, max(share, change), change, alpha=0.05) - 0.8

    expected = optimize.brentq(shortfall, 0.0, 1.0, xtol=1e-9)
    assert _power.detection_limit(n, share) == expected


_PROBE = """
import sys
from groundkit.stats import PairedScores, FamilySettings, compare_family
a = {f"q{i}": (i % 7) / 7 for i in range(60)}
b = {f"q{i}": ((i * 3) % 7) / 7 for i in range(60)}
hit_a = {q: float(v > 0.4) for q, v in a.items()}
hit_b = {q: float(v > 0.3) for q, v in b.items()}
members = [PairedScores(a, b, metric="ndcg@10"), PairedScores(hit_a, hit_b, metric="hit@10")]
compare_family(members, FamilySettings(resamples=200, equivalence_margin=0.1))
print(sorted(m for m in ("scipy.stats", "scipy.optimize", "scipy.special") if m in sys.modules))
"""


def test_a_comparison_loads_scipy_special_only() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['scipy.special']"
