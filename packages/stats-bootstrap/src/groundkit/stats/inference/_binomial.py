"""The binomial distribution and the exact binomial test, without ``import scipy.stats``.

``scipy.stats.binom`` evaluates Boost's binomial through private ``scipy.special`` ufuncs
(``_binom_pmf``, ``_binom_cdf``, ``_binom_sf``, ``_binom_ppf``, ``_binom_isf``) after
checking its arguments and support. The functions here call the same ufuncs with the same
checks, and :func:`binomtest_p_value` follows ``scipy.stats.binomtest``'s two-sided rule
(the other tail holds the outcomes no likelier than the observed one, within a relative
1e-7), so every value is scipy's to the last bit; the tests compare them over the engine's
ranges. A SciPy without the ufuncs makes these fall back to ``scipy.stats.binom`` itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["binom_cdf", "binom_isf", "binom_pmf", "binom_ppf", "binom_sf", "binomtest_p_value"]

_RELATIVE = 1 + 1e-7  # scipy.stats.binomtest's tolerance when comparing probabilities


def _ufunc(name: str) -> Callable[..., Any]:
    from scipy.special import _ufuncs

    found = getattr(_ufuncs, f"_binom_{name}", None)
    if found is None:  # a SciPy that moved them: the distribution's own method
        from scipy.stats import binom

        method: Callable[..., Any] = getattr(binom, name)
        return method
    return found  # type: ignore[no-any-return]


def _arrays(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> tuple[NDArray[np.float64], ...]:
    values = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (x, n, p)))
    x_, n_, p_ = (np.array(v) for v in values)
    valid = (n_ >= 0) & (n_ == np.floor(n_)) & (p_ >= 0) & (p_ <= 1)
    if not np.all(valid):
        raise ValueError("binomial parameters need an integer n >= 0 and 0 <= p <= 1")
    return x_, n_, p_


def _scalar(values: NDArray[np.float64]) -> Any:
    return values[()] if values.ndim == 0 else values


def binom_pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """``scipy.stats.binom.pmf(k, n, p)`` (0 off the support)."""
    k_, n_, p_ = _arrays(k, n, p)
    out = np.zeros(k_.shape)
    inside = (k_ >= 0) & (k_ <= n_) & (k_ == np.floor(k_))
    if np.any(inside):
        out[inside] = np.clip(_ufunc("pmf")(k_[inside], n_[inside], p_[inside]), 0, 1)
    return _scalar(out)


def binom_cdf(k: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """``scipy.stats.binom.cdf(k, n, p)``: P(X ≤ k) (0 below the support, 1 from n on)."""
    k_, n_, p_ = _arrays(k, n, p)
    out = np.where(k_ >= n_, 1.0, 0.0)
    inside = (k_ >= 0) & (k_ < n_)
    if np.any(inside):
        values = _ufunc("cdf")(np.floor(k_[inside]), n_[inside], p_[inside])
        out[inside] = np.clip(values, 0, 1)
    return _scalar(out)


def binom_sf(k: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """``scipy.stats.binom.sf(k, n, p)``: P(X > k) (1 below the support, 0 from n on)."""
    k_, n_, p_ = _arrays(k, n, p)
    out = np.where(k_ < 0, 1.0, 0.0)
    inside = (k_ >= 0) & (k_ < n_)
    if np.any(inside):
        values = _ufunc("sf")(np.floor(k_[inside]), n_[inside], p_[inside])
        out[inside] = np.clip(values, 0, 1)
    return _scalar(out)


def _quantile(name: str, q: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    q_, n_, p_ = _arrays(q, n, p)
    if not np.all((q_ > 0) & (q_ < 1)):
        raise ValueError("a binomial quantile here needs 0 < q < 1")
    return _scalar(np.asarray(_ufunc(name)(q_, n_, p_) + 0.0, dtype=np.float64))


def binom_ppf(q: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """``scipy.stats.binom.ppf(q, n, p)`` for 0 < q < 1: the least k with P(X ≤ k) ≥ q."""
    return _quantile("ppf", q, n, p)


def binom_isf(q: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """``scipy.stats.binom.isf(q, n, p)`` for 0 < q < 1."""
    return _quantile("isf", q, n, p)


def _search(value: Callable[[float], float], target: float, low: float, high: float) -> float:
    """The i in [low, high] with value(i) ≤ target < value(i + 1), value increasing there."""
    while low < high:
        middle = low + (high - low) // 2
        found = value(middle)
        if found < target:
            low = middle + 1
        elif found > target:
            high = middle - 1
        else:
            return middle
    return low if value(low) <= target else low - 1


def binomtest_p_value(k: int, n: int, p: float = 0.5) -> float:
    """``scipy.stats.binomtest(k, n, p).pvalue``: the exact two-sided binomial test (n ≥ 1).

    The p-value is P(X = k) plus every outcome on the other side of the mode that is no
    likelier than k (within a relative 1e-7, as scipy compares), capped at 1.
    """
    if not (0 <= k <= n and n >= 1 and 0.0 <= p <= 1.0):
        raise ValueError(f"binomtest needs 0 <= k <= n, n >= 1 and p in [0, 1] (got {k}, {n}, {p})")
    observed = float(binom_pmf(k, n, p))
    if k == p * n:
        return 1.0
    if k < p * n:
        index = _search(
            lambda x: -float(binom_pmf(x, n, p)), -observed * _RELATIVE, math.ceil(p * n), n
        )
        others = n - index + int(observed * _RELATIVE == float(binom_pmf(index, n, p)))
        total = float(binom_cdf(k, n, p)) + float(binom_sf(n - others, n, p))
    else:
        index = _search(
            lambda x: float(binom_pmf(x, n, p)), observed * _RELATIVE, 0, math.floor(p * n)
        )
        total = float(binom_cdf(index, n, p)) + float(binom_sf(k - 1, n, p))
    return min(1.0, total)
