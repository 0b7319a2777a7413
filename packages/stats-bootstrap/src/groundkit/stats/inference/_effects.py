"""What an IR researcher also reports: effect size, relative change, paired t, equivalence."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from groundkit.stats.inference._tango import tango_statistic
from groundkit.stats.kernels._engine import exact_mean
from groundkit.stats.kernels._special import brentq, norm_cdf, norm_sf, t_cdf, t_ppf, t_sf

__all__ = [
    "equivalence_p_value",
    "paired_t_test",
    "relative_change_interval",
    "standardized_effect",
]


def paired_t_test(deltas: NDArray[np.float64]) -> tuple[float, float] | None:
    """Student's paired t statistic and two-sided p-value, or None without spread or n < 2."""
    n = deltas.size
    spread = float(np.std(deltas, ddof=1)) if n >= 2 else 0.0
    if spread == 0.0:
        return None
    statistic = exact_mean(deltas) / (spread / math.sqrt(n))
    return statistic, float(min(1.0, 2.0 * t_sf(abs(statistic), n - 1)))


def _noncentrality_bound(statistic: float, df: int, tail: float) -> float:
    """The noncentrality λ with P(T ≤ statistic | λ) = tail (T noncentral t with df)."""
    from scipy.special import nctdtr, nctdtrinc

    found = float(nctdtrinc(df, tail, statistic))
    if math.isfinite(found):
        return found

    def gap(shift: float) -> float:  # cdflib gave up (extreme tails): bracket and bisect
        return float(nctdtr(df, shift, statistic)) - tail

    low, high = statistic - 10.0, statistic + 10.0
    while gap(low) < 0.0:
        low -= 10.0
    while gap(high) > 0.0:
        high += 10.0
    return brentq(gap, low, high, xtol=1e-10)


def standardized_effect(
    deltas: NDArray[np.float64], confidence_level: float
) -> tuple[float, float, float] | None:
    """Cohen's d_z = mean / sd of the differences, with its noncentral-t interval.

    The interval inverts the noncentral t distribution of the paired t statistic (exact for
    normal differences). None without spread or with fewer than two items.
    """
    test = paired_t_test(deltas)
    if test is None:
        return None
    n = deltas.size
    statistic = test[0]
    tail = (1.0 - confidence_level) / 2.0
    low = _noncentrality_bound(statistic, n - 1, 1.0 - tail) / math.sqrt(n)
    high = _noncentrality_bound(statistic, n - 1, tail) / math.sqrt(n)
    return statistic / math.sqrt(n), low, high


def relative_change_interval(
    values_a: NDArray[np.float64], values_b: NDArray[np.float64], confidence_level: float
) -> tuple[float, float, float] | None:
    """mean_b / mean_a − 1 with Fieller's interval for a ratio of paired means.

    Fieller's interval is the set of ratios ρ with (mean_b − ρ·mean_a)² ≤ t²·Var(b − ρa)/n,
    a quadratic in ρ. It is bounded only when mean_a is clearly away from zero; otherwise (or
    when mean_a is 0) the relative change is not reported (None).
    """
    n = values_a.size
    mean_a, mean_b = exact_mean(values_a), exact_mean(values_b)
    if n < 2 or mean_a == 0.0:
        return None
    q = t_ppf(0.5 + confidence_level / 2.0, n - 1) ** 2 / n
    var_a = float(np.var(values_a, ddof=1))
    var_b = float(np.var(values_b, ddof=1))
    cov = float(np.cov(values_a, values_b, ddof=1)[0, 1])
    a = mean_a * mean_a - q * var_a
    b = -2.0 * (mean_a * mean_b - q * cov)
    c = mean_b * mean_b - q * var_b
    disc = b * b - 4.0 * a * c
    if a <= 0.0 or disc < 0.0:
        return None
    root = math.sqrt(disc)
    low, high = (-b - root) / (2.0 * a), (-b + root) / (2.0 * a)
    return mean_b / mean_a - 1.0, low - 1.0, high - 1.0


def equivalence_p_value(
    deltas: NDArray[np.float64], margin: float, *, binary: bool, spread_floor: float
) -> float:
    """Two one-sided tests (TOST) of |true difference| ≥ margin: the larger one-sided p-value.

    A small p-value says the difference lies within ±margin. Right-or-wrong items use Tango's
    score statistic at ±margin, numeric items the paired t statistic; differences without any
    spread are tested with `spread_floor` (the spread the detection limit assumes then).
    """
    n = deltas.size
    if binary:
        gained = int(np.count_nonzero(deltas > 0.0))
        lost = int(np.count_nonzero(deltas < 0.0))
        above = norm_sf(tango_statistic(gained, lost, n, -margin))
        below = norm_cdf(tango_statistic(gained, lost, n, margin))
        return max(above, below)
    if n < 2:
        return 1.0
    spread = float(np.std(deltas, ddof=1)) or spread_floor
    centre = exact_mean(deltas)
    error = spread / math.sqrt(n)
    above = t_sf((centre + margin) / error, n - 1)
    below = t_cdf((centre - margin) / error, n - 1)
    return max(above, below)
