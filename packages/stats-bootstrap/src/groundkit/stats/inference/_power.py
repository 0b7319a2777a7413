"""Detection limits: the smallest true change a comparison of a given size detects with power.

Each limit is computed for the test the verdict actually uses, so the promised power is the
power one gets (the calibration grid in the test suite measures it):

* right-or-wrong items: the exact McNemar test. Given n items and a share d of them flipping,
  the number of flips is Binomial(n, d) and, given k flips, the gains are Binomial(k, π) with
  π = (d + Δ) / (2d); the power at Δ sums the exact rejection probability over k. The limit
  is the Δ at which that power reaches the target (found by root finding, to 1e-10).
* numeric items: Student's t with n − 1 degrees of freedom and the noncentral t distribution
  (exact for normal differences; the sign-flip test that gates numeric verdicts has the same
  power to within the grid's ±3%).
* numeric items whose verdict needs the distribution-free (betting) interval (skewed
  differences on few items): the mean difference at which that interval first clears zero,
  found on the observed differences shifted (within the bounds), plus the t quantile of the
  power times the standard error; never below the t limit (the gate must reject as well).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import (
    check_count,
    check_finite,
    check_probability,
    real_array,
    to_float,
)
from groundkit.stats.inference._betting import betting_interval
from groundkit.stats.inference._binomial import binom_cdf, binom_isf, binom_pmf, binom_ppf, binom_sf
from groundkit.stats.kernels._special import brentq, t_ppf

__all__ = [
    "betting_detection_limit",
    "detection_limit",
    "mcnemar_power",
    "minimum_detectable_difference",
    "paired_minimum_detectable_difference",
    "t_power",
]

_MASS = 1e-13
_XTOL = 1e-9


def _flip_counts(n: int, share: float) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The flip counts k with non-negligible Binomial(n, share) mass, and that mass."""
    low = int(binom_ppf(_MASS, n, share))
    high = int(binom_isf(_MASS, n, share))
    counts = np.arange(max(low, 0), min(high, n) + 1, dtype=np.int64)
    return counts, binom_pmf(counts, n, share)


def _rejection_cutoffs(counts: NDArray[np.int64], alpha: float) -> NDArray[np.int64]:
    """Per k, the largest gain count g whose exact two-sided p-value 2·P(X ≤ g) is below alpha.

    −1 when no count of gains can reject (too few flips).
    """
    cutoff = binom_ppf(alpha / 2.0, counts, 0.5).astype(np.int64) - 1
    # ppf works in floating point: move each cutoff to the exact boundary.
    too_far = 2.0 * binom_cdf(cutoff, counts, 0.5) >= alpha
    cutoff = np.where(too_far & (cutoff >= 0), cutoff - 1, cutoff)
    one_more = 2.0 * binom_cdf(cutoff + 1, counts, 0.5) < alpha
    cutoff = np.where(one_more & (cutoff + 1 < counts / 2.0), cutoff + 1, cutoff)
    bounded: NDArray[np.int64] = np.maximum(cutoff, -1)
    return bounded


@functools.lru_cache(maxsize=256)
def _null_table(
    n: int, flip_share: float, alpha: float
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Flip counts, their probabilities and rejection cutoffs (reused across changes)."""
    counts, weights = _flip_counts(n, flip_share)
    return counts, weights, _rejection_cutoffs(counts, alpha)


def mcnemar_power(n: int, flip_share: float, change: float, *, alpha: float) -> float:
    """Power of the two-sided exact McNemar test at level alpha for a true change.

    Args:
        n: Paired items.
        flip_share: True share of items whose outcome differs, in (0, 1].
        change: True difference in the share of right items, |change| ≤ flip_share.
        alpha: Two-sided level.

    Returns:
        The probability that the test rejects.
    """
    counts, weights, cutoffs = _null_table(n, flip_share, alpha)
    gain_share = min(1.0, max(0.0, (flip_share + change) / (2.0 * flip_share)))
    low_tail = np.where(cutoffs >= 0, binom_cdf(cutoffs, counts, gain_share), 0.0)
    high_tail = np.where(cutoffs >= 0, binom_sf(counts - cutoffs - 1, counts, gain_share), 0.0)
    return float(np.dot(weights, low_tail + high_tail))


def detection_limit(
    n: int, flip_share: float, *, confidence: float = 0.95, power: float = 0.80
) -> float | None:
    """Smallest change in the share of right items a paired comparison of n items detects.

    The change Δ at which the exact two-sided McNemar test at level α = 1 − `confidence`
    rejects with probability `power`, when a share d = `flip_share` of the items flip. A
    change of Δ flips at least a share Δ of the items (every flip a gain), so for changes
    larger than d the flip share is taken as Δ itself. None when no change at all is detected
    with that power (fewer items than the exact test needs: see `minimum_queries`).

    Args:
        n: Number of paired items (at least 1).
        flip_share: Share of items whose outcome differs between the two runs, in (0, 1].
            An observed share of zero says little about the true share; callers with zero
            flips should use an upper bound such as 3 / n (see `compare_items`).
        confidence: Confidence 1 − α of the two-sided test, strictly in (0, 1).
        power: Probability of detecting a change of exactly the returned size, in (0, 1).

    Returns:
        The detection limit as a fraction (×100 for percentage points), or None.

    Raises:
        StatsError: If n < 1, flip_share is not in (0, 1], or confidence/power are not
            strictly in (0, 1).
    """
    items = check_count(n, name="n")
    share = check_finite(to_float(flip_share, where="flip_share"), where="flip_share")
    if not (0.0 < share <= 1.0):
        raise StatsError(f"flip_share must be in (0, 1] (got {share})")
    alpha = 1.0 - check_probability(confidence, name="confidence")
    target = check_probability(power, name="power")
    if target <= alpha:  # a test rejects with probability alpha at no change at all
        return 0.0
    return _mcnemar_limit(items, share, alpha, target)


@functools.lru_cache(maxsize=4096)
def _mcnemar_limit(n: int, share: float, alpha: float, power: float) -> float | None:
    def shortfall(change: float) -> float:
        # A change of Δ flips at least a share Δ of the items (all of them gains).
        return mcnemar_power(n, max(share, change), change, alpha=alpha) - power

    if shortfall(1.0) < 0.0:
        return None
    return brentq(shortfall, 0.0, 1.0, xtol=_XTOL)


def _two_sided_t_power(critical: float, df: int, shift: float) -> float:
    """P(|T| > critical) for T noncentral t; the far tail is dropped where cdflib gives nan."""
    from scipy.special import nctdtr

    far = float(nctdtr(df, abs(shift), -critical))
    near = 1.0 - float(nctdtr(df, abs(shift), critical))
    return near + (far if math.isfinite(far) else 0.0)


def t_power(effect: float, sd: float, n: int, *, alpha: float) -> float:
    """Power of the two-sided one-sample t test (n − 1 degrees of freedom) at a true effect."""
    df = max(n - 1, 1)
    critical = t_ppf(1.0 - alpha / 2.0, df)
    return _two_sided_t_power(critical, df, effect * math.sqrt(n) / sd)


def _t_limit(sd: float, n: int, df: int, alpha: float, power: float) -> float:
    """The effect at which a two-sided t test (``df`` degrees, standard error sd/√n) has power."""
    if sd == 0.0 or power <= alpha:  # a test rejects with probability alpha at no effect
        return 0.0
    return _t_shift(df, alpha, power) * sd / math.sqrt(n)


@functools.lru_cache(maxsize=4096)
def _t_shift(df: int, alpha: float, power: float) -> float:
    """The noncentrality at which the two-sided t test with df degrees has the given power."""
    critical = t_ppf(1.0 - alpha / 2.0, df)

    def shortfall(shift: float) -> float:
        return _two_sided_t_power(critical, df, shift) - power

    upper = critical + 4.0
    while shortfall(upper) < 0.0:
        upper *= 2.0
    return brentq(shortfall, 0.0, upper, xtol=_XTOL)


def minimum_detectable_difference(n: int, *, power: float = 0.8, alpha: float = 0.05) -> float:
    """Unpaired floor for [0, 1] metrics: two independent samples of n, worst-case variance.

    The smallest difference between two *independent* samples of n items each, with scores in
    [0, 1] and the largest possible per-item variance 0.25 each, that a two-sided t test at
    level α detects with the given power (noncentral t with 2n − 2 degrees of freedom). It
    ignores pairing; see `paired_minimum_detectable_difference` for the paired floor.

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
    return _t_limit(math.sqrt(0.5), items, max(2 * items - 2, 1), level, chance)


def paired_minimum_detectable_difference(
    deltas_or_sd: Sequence[float] | NDArray[np.floating] | float,
    n: int | None = None,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
) -> float:
    """Paired floor: the effect a paired t test on n queries detects with the given power.

    Solved exactly from the noncentral t distribution with n − 1 degrees of freedom, with the
    per-query differences' standard deviation sd(D), Var(D) = Var(A) + Var(B) − 2·Cov(A, B).
    Systems that agree on most queries have a small sd(D) and so a small floor.

    Args:
        deltas_or_sd: Either the observed per-query deltas (the sample standard deviation, with
            n − 1 in the denominator, is used) or a standard deviation given directly.
        n: Number of paired queries (at least 2). Defaults to the number of deltas; required
            when an SD is given; with deltas, a different n projects the floor to another size.
        power: Probability of detecting a difference of exactly the returned size, in (0, 1).
        alpha: Two-sided significance level, in (0, 1).

    Returns:
        The floor in the metric's units (×100 for points of a [0, 1] metric).

    Raises:
        StatsError: If the SD is negative or not finite, fewer than two deltas are given, n is
            missing for a given SD or below 2, or power/alpha are out of range.
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
        items = check_count(n, name="n", minimum=2)
    else:
        deltas = real_array(deltas_or_sd, what="deltas")
        if deltas.size < 2:
            raise StatsError(f"need at least 2 deltas to estimate their spread (got {deltas.size})")
        sd = float(np.std(deltas, ddof=1))
        items = deltas.size if n is None else check_count(n, name="n", minimum=2)
    return _t_limit(sd, items, items - 1, level, chance)


def betting_detection_limit(
    deltas: NDArray[np.float64],
    *,
    bounds: tuple[float, float],
    sd: float,
    confidence_level: float,
    alpha: float,
    power: float,
    seed: int,
) -> float | None:
    """Detection limit of a numeric comparison decided with the betting interval.

    The betting interval is wider than t's, so a verdict needs a larger mean difference than
    the t limit promises. With the observed differences centred and shifted by s (cut at the
    bounds), the critical mean is the mean at the smallest s whose interval's low end clears
    zero; a true difference detected with probability `power` lies a t quantile of the power
    (n − 1 degrees) standard errors sd/√n above it. The gate must reject too, so the limit is
    never below the t limit at `alpha`.

    Args:
        deltas: The per-item differences (b − a), at least two.
        bounds: Bounds of a difference, e.g. (−1, 1).
        sd: The differences' standard deviation (floored by the caller when it is 0).
        confidence_level: Coverage of the interval the verdict shows.
        alpha: Level of the gate (the family's).
        power: Probability of detecting a difference of exactly the returned size.
        seed: Seed of the betting orders (the verdict's own).

    Returns:
        The limit on the differences' scale, or None when no difference within the bounds is
        detected with that power.
    """
    n = int(deltas.size)
    lower, upper = bounds
    centred = deltas - float(np.mean(deltas))

    def low_end(shift: float) -> float:
        shifted = np.clip(centred + shift, lower, upper)
        return betting_interval(
            shifted, confidence_level=confidence_level, lower=lower, upper=upper, seed=seed
        )[0]

    top = upper - float(np.min(centred))  # every shifted difference at the upper bound
    if low_end(top) <= 0.0:
        return None
    shift = 0.0 if low_end(0.0) > 0.0 else brentq(low_end, 0.0, top, xtol=_XTOL)
    critical = float(np.mean(np.clip(centred + shift, lower, upper)))
    limit = critical + t_ppf(power, max(n - 1, 1)) * sd / math.sqrt(n)
    limit = max(limit, _t_limit(sd, n, max(n - 1, 1), alpha, power))
    return limit if limit <= upper else None
