"""Wilson intervals for shares estimated from a stratified sample of a larger population.

`stratified_wilson_interval` covers a share of the whole population. Pooled evaluation needs
two more: the share of a *domain* (a subset whose size is known, such as one stage's top-k
hits spread over strata drawn for several stages), and a *ratio* of two estimated totals
(relevant items a stage found over relevant items in the whole pool). Both come from the
same stratified sample, with the variance of the linearised ratio estimator, and take the
Wilson formula at the effective sample size, as `stratified_wilson_interval` does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import check_count, check_probability
from groundkit.stats.inference._proportions import (
    _WILSON_CAUTION,
    _WILSON_SMALL_N,
    ProportionInterval,
)
from groundkit.stats.inference._proportions import _wilson as _wilson_bounds
from groundkit.stats.kernels._special import norm_ppf

__all__ = ["RatioStratum", "stratified_domain_interval", "stratified_ratio_interval"]


class RatioStratum(BaseModel):
    """One stratum of a stratified sample, counted for a ratio ``numerator / denominator``.

    Every sampled item carries two 0/1 marks, with the numerator's items a subset of the
    denominator's (relevant *and* found by a stage, among relevant; or relevant *and* in a
    domain, among the domain).

    Attributes:
        n: Items sampled in the stratum, at least 1.
        population_size: Items the stratum stands for, at least 1.
        numerator: Sampled items with both marks.
        denominator: Sampled items with the denominator's mark.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    population_size: int
    numerator: int
    denominator: int


def _checked(strata: Sequence[RatioStratum]) -> list[RatioStratum]:
    # Checked at run time too: callers outside typed code pass anything.
    if not isinstance(strata, (list, tuple)) or not strata:
        raise StatsError("strata must be a non-empty sequence of RatioStratum")
    for index, stratum in enumerate(strata):
        if not isinstance(stratum, RatioStratum):
            raise StatsError(f"stratum {index} must be a RatioStratum (got {stratum!r})")
        check_count(stratum.n, name=f"stratum {index} n")
        check_count(stratum.population_size, name=f"stratum {index} population_size")
        top = check_count(stratum.denominator, name=f"stratum {index} denominator", minimum=0)
        low = check_count(stratum.numerator, name=f"stratum {index} numerator", minimum=0)
        if top > stratum.n or low > top:
            raise StatsError(
                f"stratum {index}: need numerator ({low}) <= denominator ({top}) <= n ({stratum.n})"
            )
    return list(strata)


def _interval(estimate: float, variance: float, sampled: int, level: float) -> ProportionInterval:
    # n_eff = p(1 - p) / Var(p), capped at the sampled items the share is about; with no
    # variance (every sampled item one way) the cap itself, as one stratum's Wilson would use.
    share = min(1.0, max(0.0, estimate))
    effective = float(sampled)
    if variance > 0.0 and 0.0 < share < 1.0:
        effective = min(effective, share * (1.0 - share) / variance)
    z = norm_ppf(0.5 + level / 2.0)
    low, high = _wilson_bounds(share, effective, z)
    return ProportionInterval(
        estimate=share,
        low=low,
        high=high,
        confidence=level,
        effective_n=effective,
        caution=_WILSON_CAUTION if effective < _WILSON_SMALL_N else None,
    )


def stratified_domain_interval(
    strata: Sequence[RatioStratum], domain_size: int, *, confidence: float = 0.95
) -> ProportionInterval:
    """Wilson interval for the share of a domain of known size, from a stratified sample.

    With stratum sizes N_h, sample sizes n_h and a_h sampled items that are in the domain
    and successes (``numerator``), the domain's size D known exactly,

        p = Σ (N_h / D) · a_h / n_h,    Var(p) = Σ (N_h / D)² · q_h (1 − q_h) / n_h,

    q_h = a_h / n_h (the textbook domain estimator of a total over D; no finite-population
    correction, so the interval errs wide). The Wilson formula takes n_eff = p (1 − p) / Var(p),
    capped at the sampled domain items Σ ``denominator``; the estimate is clipped into [0, 1].
    When the domain is every stratum's whole population this is `stratified_wilson_interval`.

    Args:
        strata: The strata, ``denominator`` counting the sampled items in the domain.
        domain_size: D, the domain's size, at least 1.
        confidence: Coverage, strictly in (0, 1).

    Raises:
        StatsError: No strata, a count out of range, no sampled domain item, or a bad
            confidence.
    """
    parsed = _checked(strata)
    size = check_count(domain_size, name="domain_size")
    level = check_probability(confidence, name="confidence")
    sampled = sum(s.denominator for s in parsed)
    if sampled == 0:
        raise StatsError("no sampled item lies in the domain: its share cannot be estimated")
    weights = [s.population_size / size for s in parsed]
    shares = [s.numerator / s.n for s in parsed]
    estimate = math.fsum(w * q for w, q in zip(weights, shares, strict=True))
    variance = math.fsum(
        w * w * q * (1.0 - q) / s.n for w, q, s in zip(weights, shares, parsed, strict=True)
    )
    return _interval(estimate, variance, sampled, level)


def stratified_ratio_interval(
    strata: Sequence[RatioStratum], *, confidence: float = 0.95
) -> ProportionInterval:
    """Wilson interval for a ratio of two totals estimated from one stratified sample.

    With x the numerator's mark and y the denominator's (x ≤ y), the totals are
    X = Σ N_h · a_h / n_h and Y = Σ N_h · b_h / n_h (a_h, b_h the sampled counts), R = X / Y,
    and the linearised variance is

        Var(R) = Σ (N_h / Y)² · s²_h / n_h,   s²_h = mean of d² − (mean of d)²,  d = x − R·y,

    which for 0/1 marks is s²_h = (a_h − 2R·a_h + R²·b_h) / n_h − ((a_h − R·b_h) / n_h)².
    The Wilson formula takes n_eff = R (1 − R) / Var(R), capped at Σ b_h (the sampled
    denominator items). One stratum gives exactly ``wilson_interval(a, b)``.

    Args:
        strata: The strata (``numerator`` a_h, ``denominator`` b_h).
        confidence: Coverage, strictly in (0, 1).

    Raises:
        StatsError: No strata, a count out of range, no sampled denominator item, or a bad
            confidence.
    """
    parsed = _checked(strata)
    level = check_probability(confidence, name="confidence")
    sampled = sum(s.denominator for s in parsed)
    if sampled == 0:
        raise StatsError("no sampled item is in the denominator: the ratio cannot be estimated")
    top = math.fsum(s.population_size * s.numerator / s.n for s in parsed)
    bottom = math.fsum(s.population_size * s.denominator / s.n for s in parsed)
    ratio = top / bottom
    variance = 0.0
    for s in parsed:
        a, b, n = s.numerator, s.denominator, s.n
        spread = (a - 2.0 * ratio * a + ratio * ratio * b) / n - ((a - ratio * b) / n) ** 2
        variance += (s.population_size / bottom) ** 2 * max(0.0, spread) / n
    return _interval(ratio, variance, sampled, level)
