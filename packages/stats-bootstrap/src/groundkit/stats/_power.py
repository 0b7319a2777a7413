"""Detection limits: the smallest true change a comparison of a given size reliably detects."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import (
    check_count,
    check_finite,
    check_probability,
    real_array,
    to_float,
)

__all__ = [
    "detection_limit",
    "minimum_detectable_difference",
    "paired_minimum_detectable_difference",
]


def _z_sum(alpha: float, power: float) -> float:
    """z(1 − α/2) + z(power), from exact normal quantiles."""
    return float(norm.ppf(1.0 - alpha / 2.0)) + float(norm.ppf(power))


def detection_limit(
    n: int, flip_share: float, *, confidence: float = 0.95, power: float = 0.80
) -> float:
    """Smallest change in the share of right items that a paired comparison of n items detects.

    For paired right-or-wrong items the per-item difference is −1, 0 or +1; with a share d of
    items flipping (in either direction) and no true change, its variance is d, so the mean
    difference has standard error √(d / n). A true change is detected with probability `power`
    by a two-sided test at level α = 1 − `confidence` once it reaches

        Z · √(d / n),  Z = z(1 − α/2) + z(power)

    (normal approximation; z is the standard normal quantile). With d = 0.10 this gives about
    5.1, 2.3 and 1.3 percentage points for n = 300, 1,500 and 5,000.

    Args:
        n: Number of paired items (at least 1).
        flip_share: Share of items whose outcome differs between the two runs, in (0, 1].
            An observed share of zero says little about the true share; callers with zero
            flips should use an upper bound such as 3 / n (see `compare_items`).
        confidence: Confidence 1 − α of the two-sided test, strictly in (0, 1).
        power: Probability of detecting a change of exactly the returned size, in (0, 1).

    Returns:
        The detection limit as a fraction (multiply by 100 for percentage points). A value
        above the largest possible change means no change is reliably detectable at this n.

    Raises:
        StatsError: If n < 1, flip_share is not in (0, 1], or confidence/power are not
            strictly in (0, 1).
    """
    items = check_count(n, name="n")
    share = check_finite(to_float(flip_share, where="flip_share"), where="flip_share")
    if not (0.0 < share <= 1.0):
        raise StatsError(f"flip_share must be in (0, 1] (got {share})")
    level = check_probability(confidence, name="confidence")
    chance = check_probability(power, name="power")
    return _z_sum(1.0 - level, chance) * math.sqrt(share / items)


def minimum_detectable_difference(n: int, *, power: float = 0.8, alpha: float = 0.05) -> float:
    """Classic unpaired floor: (z(1 − α/2) + z(power)) · √(2 · 0.25 / n).

    This is the smallest difference between two *independent* samples of n items each, with
    scores in [0, 1], that a two-sided test at level α detects with the given power, using the
    largest possible per-item variance 0.25 for each system. It ignores pairing: it treats the
    variance of a per-item difference as Var(A) + Var(B) ≤ 0.5. For paired data the variance
    is Var(A) + Var(B) − 2·Cov(A, B) instead, see `paired_minimum_detectable_difference`.

    Args:
        n: Number of items per system (at least 1).
        power: Probability of detecting a difference of exactly the returned size, in (0, 1).
        alpha: Two-sided significance level, in (0, 1).

    Returns:
        The floor as a fraction (multiply by 100 for percentage points).

    Raises:
        StatsError: If n < 1 or power/alpha are not strictly in (0, 1).
    """
    items = check_count(n, name="n")
    chance = check_probability(power, name="power")
    level = check_probability(alpha, name="alpha")
    return _z_sum(level, chance) * math.sqrt(2.0 * 0.25 / items)


def paired_minimum_detectable_difference(
    deltas_or_sd: Sequence[float] | NDArray[np.floating] | float,
    n: int | None = None,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
) -> float:
    """Paired floor: (z(1 − α/2) + z(power)) · sd / √n, from the per-query deltas' spread.

    The paired test's noise is the standard deviation of the per-query differences, sd(D) with
    Var(D) = Var(A) + Var(B) − 2·Cov(A, B). Compared with `minimum_detectable_difference`,
    which assumes Var(D) = 0.5, the paired floor is larger by the factor sd(D) / √0.5:

    * Systems that agree on most queries (positively correlated, the usual case for two
      retrievers over the same corpus) have sd(D) well below √0.5, so the unpaired number
      overstates the paired floor.
    * When per-query differences are wide — many queries swing in opposite directions, up to
      every query being won by one side or the other (deltas ±1, sd = 1) — sd(D) exceeds
      √0.5 and the unpaired number understates the paired floor, by up to √2 for scores in
      [0, 1].

    The observed sd is itself an estimate; with few queries treat the result as indicative.

    Args:
        deltas_or_sd: Either the observed per-query deltas (the sample standard deviation, with
            n − 1 in the denominator, is used) or a standard deviation given directly (use 1.0
            for the worst case of ±1 deltas).
        n: Number of paired queries. Defaults to the number of deltas; required when an SD is
            given; with deltas, a different n projects the floor to another sample size.
        power: Probability of detecting a difference of exactly the returned size, in (0, 1).
        alpha: Two-sided significance level, in (0, 1).

    Returns:
        The floor as a fraction in the metric's units (×100 for points of a [0, 1] metric).

    Raises:
        StatsError: If the SD is negative or not finite, fewer than two deltas are given, n is
            missing for a given SD or below 1, or power/alpha are out of range.
    """
    chance = check_probability(power, name="power")
    level = check_probability(alpha, name="alpha")
    if isinstance(deltas_or_sd, bool):
        raise StatsError("deltas_or_sd must be deltas or a standard deviation, not a bool")
    if isinstance(deltas_or_sd, (int, float, np.integer, np.floating)):
        sd = check_finite(float(deltas_or_sd), where="sd")
        if sd < 0.0:
            raise StatsError(f"sd must be non-negative (got {sd})")
        if n is None:
            raise StatsError("n is required when a standard deviation is given instead of deltas")
        items = check_count(n, name="n")
    else:
        deltas = real_array(deltas_or_sd, what="deltas")
        if deltas.size < 2:
            raise StatsError(f"need at least 2 deltas to estimate their spread (got {deltas.size})")
        sd = float(np.std(deltas, ddof=1))
        items = deltas.size if n is None else check_count(n, name="n")
    return _z_sum(level, chance) * sd / math.sqrt(items)
