"""Distribution functions and Brent's root finder without ``import scipy.stats``.

Importing ``scipy.stats`` loads scipy.optimize, sparse, spatial and every distribution (about
half a second); ``scipy.special`` alone costs a fraction of that. An items comparison needs
only a few functions of Student's t, the normal, the beta and the fair binomial, the sample
skewness and one root finder, so they live here:

* each distribution function calls the very ``scipy.special`` ufunc that the ``scipy.stats``
  method calls for such arguments (``t.sf(x, df)`` is ``stdtr(df, -x)``, ``norm.cdf`` is
  ``ndtr``, ``binom.pmf`` is ``_binom_pmf``), so the values are the same to the last bit;
* :func:`brentq` takes the same steps as ``scipy.optimize.brentq`` (Brent's method as SciPy
  implements it, BSD-3-Clause): the same function values give the same iterates and the same
  root, bit for bit.

The tests compare every function with its ``scipy.stats`` / ``scipy.optimize`` counterpart
over the parameter ranges the engine uses (tests/stats_bootstrap/test_special.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "BRENTQ_RTOL",
    "beta_ppf",
    "brentq",
    "fair_binomial_pmf",
    "norm_cdf",
    "norm_ppf",
    "norm_sf",
    "sample_skewness",
    "t_cdf",
    "t_ppf",
    "t_sf",
]

BRENTQ_RTOL = 4.0 * float(np.finfo(np.float64).eps)
"""The smallest relative tolerance ``scipy.optimize.brentq`` accepts, and its default."""

_BRENTQ_MAXITER = 100


def t_sf(x: float, df: float) -> float:
    """``scipy.stats.t.sf(x, df)``: P(T > x) for Student's t with ``df`` degrees."""
    from scipy.special import stdtr

    return float(stdtr(df, -x))


def t_cdf(x: float, df: float) -> float:
    """``scipy.stats.t.cdf(x, df)``: P(T ≤ x)."""
    from scipy.special import stdtr

    return float(stdtr(df, x))


def t_ppf(q: float, df: float) -> float:
    """``scipy.stats.t.ppf(q, df)``: the ``q`` quantile of Student's t (0 < q < 1)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def norm_sf(x: float) -> float:
    """``scipy.stats.norm.sf(x)``: P(Z > x) for a standard normal Z."""
    from scipy.special import ndtr

    return float(ndtr(-x))


def norm_cdf(x: float) -> float:
    """``scipy.stats.norm.cdf(x)``: P(Z ≤ x)."""
    from scipy.special import ndtr

    return float(ndtr(x))


def norm_ppf(q: float) -> float:
    """``scipy.stats.norm.ppf(q)``: the ``q`` quantile of the standard normal (0 < q < 1)."""
    from scipy.special import ndtri

    return float(ndtri(q))


def beta_ppf(q: float, a: float, b: float) -> float:
    """``scipy.stats.beta.ppf(q, a, b)`` for 0 < q < 1 and a, b > 0 (Boost's quantile)."""
    from scipy.special import _ufuncs

    ppf = getattr(_ufuncs, "_beta_ppf", None)  # what beta.ppf calls inside the support
    if ppf is None:  # a SciPy that moved it: the distribution itself, slower to import
        from scipy.stats import beta

        return float(beta.ppf(q, a, b))
    return float(ppf(q, a, b))


def sample_skewness(values: NDArray[np.float64]) -> float:
    """``scipy.stats.skew(values, bias=False)``: the adjusted Fisher–Pearson skewness G₁.

    The same moments in the same order (central moments by numpy's mean, a NaN when the
    second moment is lost to rounding), so the value is scipy's to the last bit.
    """
    n = values.size
    # As scipy does: tiny moments underflow (0/0 is then the NaN scipy returns), silently.
    with np.errstate(all="ignore"):
        mean = np.mean(values, keepdims=True)
        centred = values - mean
        m2 = np.mean(centred**2)
        m3 = np.mean(centred**2 * centred)
        if m2 <= (np.finfo(np.float64).eps * mean[0]) ** 2:
            return math.nan
        if n <= 2:
            return float(m3 / m2**1.5)
        return float(((n - 1.0) * n) ** 0.5 / (n - 2.0) * m3 / m2**1.5)


def fair_binomial_pmf(count: int) -> NDArray[np.float64]:
    """``scipy.stats.binom.pmf(k, count, 0.5)`` for k = 0 … count (``count`` ≥ 0)."""
    from scipy.special import _ufuncs

    k = np.arange(count + 1)
    pmf = getattr(_ufuncs, "_binom_pmf", None)  # Boost's pmf, what binom.pmf calls
    if pmf is None:  # a SciPy that moved it: the distribution itself, slower to import
        from scipy.stats import binom

        pmf = binom.pmf
    probs: NDArray[np.float64] = np.asarray(pmf(k, count, 0.5), dtype=np.float64)
    return probs


def _negative(value: float) -> bool:
    return math.copysign(1.0, value) < 0.0


def _value(function: Callable[[float], float], x: float) -> float:
    value = float(function(x))
    if math.isnan(value):
        raise ValueError(f"The function value at x={x:f} is NaN; solver cannot continue.")
    return value


def brentq(
    function: Callable[[float], float],
    a: float,
    b: float,
    *,
    xtol: float,
    rtol: float = BRENTQ_RTOL,
    maxiter: int = _BRENTQ_MAXITER,
) -> float:
    """A root of ``function`` in [a, b], exactly as ``scipy.optimize.brentq`` finds it.

    Args:
        function: Continuous, with values of opposite signs (or a zero) at ``a`` and ``b``.
        a: One end of the bracket.
        b: The other end.
        xtol: Absolute tolerance (> 0).
        rtol: Relative tolerance (≥ :data:`BRENTQ_RTOL`).
        maxiter: Most iterations.

    Raises:
        ValueError: A bad tolerance, no sign change over the bracket, or a NaN value.
        RuntimeError: No convergence within ``maxiter`` iterations.
    """
    if xtol <= 0.0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < BRENTQ_RTOL:
        raise ValueError(f"rtol too small ({rtol:g} < {BRENTQ_RTOL:g})")
    # "previous" is the last estimate, "current" the newest, "block" the end of the bracket
    # opposite "current"; |f(current)| ≤ |f(block)| at each step's start.
    previous, current = float(a), float(b)
    f_previous, f_current = _value(function, previous), _value(function, current)
    if f_previous == 0.0:
        return previous
    if f_current == 0.0:
        return current
    # Signs are compared by sign bit, not by a product (which underflows for tiny values).
    if _negative(f_previous) == _negative(f_current):
        raise ValueError("f(a) and f(b) must have different signs")
    block = f_block = step_before = step = 0.0
    for _ in range(maxiter):
        if f_previous != 0.0 and f_current != 0.0 and _negative(f_previous) != _negative(f_current):
            block, f_block = previous, f_previous
            step_before = step = current - previous
        if abs(f_block) < abs(f_current):
            previous, current, block = current, block, current
            f_previous, f_current, f_block = f_current, f_block, f_current
        delta = (xtol + rtol * abs(current)) / 2.0
        half = (block - current) / 2.0
        if f_current == 0.0 or abs(half) < delta:
            return current
        step_before, step = _next_steps(
            (previous, current, block),
            (f_previous, f_current, f_block),
            step_before,
            step,
            half,
            delta,
        )
        previous, f_previous = current, f_current
        current += step if abs(step) > delta else (delta if half > 0.0 else -delta)
        f_current = _value(function, current)
    raise RuntimeError(f"Failed to converge after {maxiter} iterations, value is {current}.")


def _next_steps(
    x: tuple[float, float, float],
    fx: tuple[float, float, float],
    step_before: float,
    step: float,
    half: float,
    delta: float,
) -> tuple[float, float]:
    """The (previous, new) step: interpolation when it is short enough, else bisection."""
    (previous, current, block), (f_previous, f_current, f_block) = x, fx
    if not (abs(step_before) > delta and abs(f_current) < abs(f_previous)):
        return half, half
    if previous == block:  # secant
        trial = -f_current * (current - previous) / (f_current - f_previous)
    else:  # inverse quadratic
        d_previous = (f_previous - f_current) / (previous - current)
        d_block = (f_block - f_current) / (block - current)
        trial = (
            -f_current
            * (f_block * d_block - f_previous * d_previous)
            / (d_block * d_previous * (f_block - f_previous))
        )
    bound = 3.0 * abs(half) - delta
    limit = abs(step_before) if abs(step_before) < bound else bound
    if 2.0 * abs(trial) < limit:
        return step, trial
    return half, half
