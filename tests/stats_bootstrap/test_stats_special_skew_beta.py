"""``sample_skewness`` and ``beta_ppf`` give scipy.stats' values bit for bit.

They stand for ``scipy.stats.skew(bias=False)`` (Cochran's rule in the t interval) and
``scipy.stats.beta.ppf`` (the Clopper–Pearson interval), so that a run's intervals need no
``import scipy.stats``. A subprocess checks that an interval on right-or-wrong and on numeric
scores imports scipy.special and not scipy.stats.
"""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from groundkit.stats.inference._intervals import clopper_pearson, cochran_holds
from groundkit.stats.kernels._special import beta_ppf, sample_skewness

FAST = settings(max_examples=300, deadline=None)
SCORES = st.lists(
    st.one_of(
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
        st.sampled_from([0.0, 0.0, 0.0, 1.0, 0.5]),
    ),
    min_size=1,
    max_size=400,
)


def _same(ours: float, theirs: float) -> bool:
    return (math.isnan(ours) and math.isnan(theirs)) or ours == theirs


@FAST
@given(SCORES)
def test_sample_skewness_is_scipys(values: list[float]) -> None:
    array = np.asarray(values, dtype=np.float64)
    with warnings.catch_warnings():  # scipy warns of cancellation on near-constant samples
        warnings.simplefilter("ignore", RuntimeWarning)
        theirs = float(scipy_stats.skew(array, bias=False))
    assert _same(sample_skewness(array), theirs)


def test_sample_skewness_of_underflowing_moments_is_a_quiet_nan() -> None:
    values = np.array([0.0, 6.956296332818088e-113])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the isolated installs run with warnings as errors
        ours = sample_skewness(values)
        with np.errstate(all="ignore"):
            theirs = float(scipy_stats.skew(values, bias=False))
    assert _same(ours, theirs)


def test_sample_skewness_known_value_and_degenerate_cases() -> None:
    # g1 of [2, 8, 0, 4, 1, 9, 9, 0] is 0.26505541226985; G1 = g1·√(8·7)/6.
    values = np.array([2, 8, 0, 4, 1, 9, 9, 0], dtype=np.float64)
    g1 = 0.2650554122698573
    assert math.isclose(sample_skewness(values), g1 * math.sqrt(56) / 6, rel_tol=1e-14)
    assert math.isnan(sample_skewness(np.full(5, 3.25)))
    assert _same(
        sample_skewness(np.array([1.0, 2.0])), float(scipy_stats.skew([1.0, 2.0], bias=False))
    )


@FAST
@given(
    st.floats(min_value=1e-12, max_value=1.0, exclude_max=True),
    st.integers(min_value=1, max_value=5000),
    st.integers(min_value=1, max_value=5000),
)
def test_beta_ppf_is_scipys(q: float, a: int, b: int) -> None:
    assert beta_ppf(q, a, b) == float(scipy_stats.beta.ppf(q, a, b))


@FAST
@given(st.integers(min_value=1, max_value=3000), st.data())
def test_clopper_pearson_is_the_beta_quantiles(n: int, data: st.DataObject) -> None:
    successes = data.draw(st.integers(min_value=0, max_value=n))
    level = data.draw(st.sampled_from([0.8, 0.9, 0.95, 0.99]))
    tail = (1 - level) / 2
    low, high = clopper_pearson(successes, n, level)
    expected_low = (
        0.0 if successes == 0 else scipy_stats.beta.ppf(tail, successes, n - successes + 1)
    )
    expected_high = (
        1.0 if successes == n else scipy_stats.beta.ppf(1 - tail, successes + 1, n - successes)
    )
    assert (low, high) == (float(expected_low), float(expected_high))


def test_cochran_rule_on_skewed_and_symmetric_scores() -> None:
    rng = np.random.default_rng(3)
    assert cochran_holds(rng.normal(size=200))
    # 95% zeros: g1 ≈ 4.1, so the rule needs n ≥ 25·g1² ≈ 420 scores.
    skewed = np.zeros(100)
    skewed[:5] = 1.0
    assert not cochran_holds(skewed)


def test_an_interval_imports_no_scipy_stats() -> None:
    code = (
        "import sys\n"
        "from groundkit.stats import mean_interval\n"
        "mean_interval([float(i % 2) for i in range(40)])\n"
        "mean_interval([i / 40 for i in range(40)])\n"
        "print('scipy.stats' in sys.modules, 'scipy.special' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["False", "True"]
