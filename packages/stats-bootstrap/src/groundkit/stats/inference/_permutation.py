"""Paired randomisation (sign-flip) test of the mean per-query delta: the gate of every verdict."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import (
    check_resamples,
    check_seed,
    finite_deltas,
    paired_arrays,
    real_array,
)
from groundkit.stats.kernels._engine import canonical_arrangement, exact_mean
from groundkit.stats.kernels._resampling import random_sign_counts
from groundkit.stats.kernels._signflip_exact import exact_two_sided_tail

__all__ = ["SignFlipResult", "paired_deltas", "sign_flip_test"]

SignFlipMethod = Literal["exact", "monte carlo"]

# A Monte Carlo p-value this many standard errors from a threshold it is compared with is
# refined with more patterns, so a verdict near alpha does not depend on the seed.
_REFINE_WITHIN_SE = 3.0
_REFINE_FACTOR = 64


class SignFlipResult(BaseModel):
    """Outcome of a paired sign-flip randomisation test.

    Attributes:
        query_count: Number of paired queries.
        nonzero_count: Queries whose delta is not zero (only these can change sign).
        effect: Observed mean delta (candidate − baseline).
        p_value_two_sided: Probability, under random signs, of a |mean| at least the observed.
        exact: True when the null distribution was enumerated exactly.
        method: "exact" or "monte carlo".
        resamples: Sign patterns the p-value stands for: 2**nonzero_count when exact, else
            the random patterns drawn (refinements included).
        standard_error: Monte Carlo standard error of the p-value (0 when exact).
        seed: Seed of the random patterns (unused when exact).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_count: int
    nonzero_count: int
    effect: float
    p_value_two_sided: float
    exact: bool
    method: SignFlipMethod
    resamples: int
    standard_error: float
    seed: int


def paired_deltas(
    baseline: Mapping[str, float] | Sequence[float],
    candidate: Mapping[str, float] | Sequence[float],
) -> NDArray[np.float64]:
    """Per-query candidate − baseline deltas from two mappings (paired by id) or sequences."""
    if isinstance(baseline, Mapping) and isinstance(candidate, Mapping):
        ids, base, cand = paired_arrays(baseline, candidate)
        return finite_deltas(base, cand, ids=ids)
    if isinstance(baseline, Mapping) or isinstance(candidate, Mapping):
        raise StatsError("baseline and candidate must both be mappings or both be sequences")
    base = real_array(baseline, what="baseline")
    cand = real_array(candidate, what="candidate")
    if base.size != cand.size:
        raise StatsError(
            f"baseline and candidate must pair item by item (got {base.size} and {cand.size})"
        )
    return finite_deltas(base, cand)


def _monte_carlo(
    nonzero: NDArray[np.float64],
    observed: float,
    tolerance: float,
    *,
    resamples: int,
    seed: int,
    thresholds: Sequence[float],
    max_resamples: int,
) -> tuple[float, int, float]:
    drawn = extreme = 0
    batch = resamples
    index = 0
    while True:
        extreme += random_sign_counts(
            nonzero,
            observed,
            resamples=batch,
            seed=np.random.SeedSequence(seed, spawn_key=(index,)),
            tolerance=tolerance,
        )
        drawn += batch
        index += 1
        p_value = (extreme + 1) / (drawn + 1)
        error = math.sqrt(p_value * (1.0 - p_value) / drawn)
        close = any(abs(p_value - t) < _REFINE_WITHIN_SE * error for t in thresholds)
        if not close or drawn >= max_resamples:
            return p_value, drawn, error
        batch = min(drawn, max_resamples - drawn)


def sign_flip_test(
    baseline: Mapping[str, float] | Sequence[float],
    candidate: Mapping[str, float] | Sequence[float],
    *,
    resamples: int = 10_000,
    seed: int = 7,
    thresholds: Sequence[float] = (),
    max_resamples: int | None = None,
    method: Literal["auto", "exact", "monte carlo"] = "auto",
) -> SignFlipResult:
    """Paired randomisation test: is the mean delta larger than random sign flips would give?

    Under "the two systems are exchangeable on every query" each per-query delta is as likely
    to have the opposite sign. The p-value is the probability, over independent fair signs, of
    a |sum of deltas| at least the observed one (ties count; zero deltas cannot change sign).

    The null distribution is enumerated exactly whenever its support is small enough
    (deltas sharing an absolute value are counted together, so right-or-wrong items — one
    distinct value — give exactly the two-sided exact McNemar test at any n, and up to
    32 distinct non-zero deltas are enumerated by meeting in the middle with bounded memory).
    Otherwise `resamples` random patterns are drawn and p = (r + 1) / (B + 1), reported with
    its Monte Carlo standard error. When such a p-value lies within three standard errors of
    one of `thresholds` (the levels a caller will compare it with), more patterns are drawn,
    doubling up to `max_resamples`, so a decision near a threshold does not hinge on the seed.

    Args:
        baseline: Baseline per-query scores: a mapping by query id, or a sequence.
        candidate: Candidate scores with the same ids (or the same length, paired by position).
        resamples: Random sign patterns to draw first (positive).
        seed: Non-negative seed of the random patterns.
        thresholds: Levels the p-value will be compared with (refinement targets).
        max_resamples: Most patterns drawn with refinements (default 64 × `resamples`).
        method: "auto" (exact whenever it can be enumerated), "exact" (refused when it cannot
            be) or "monte carlo" (random patterns even when exact enumeration is possible).

    Returns:
        The frozen `SignFlipResult`.

    Raises:
        StatsError: On unpaired, empty or non-finite input, a null distribution too large to
            enumerate with method="exact", or bad settings.
    """
    if method not in ("auto", "exact", "monte carlo"):
        raise StatsError(f"method must be 'auto', 'exact' or 'monte carlo' (got {method!r})")
    count = check_resamples(resamples)
    seed_value = check_seed(seed)
    ceiling = count * _REFINE_FACTOR if max_resamples is None else check_resamples(max_resamples)
    deltas = canonical_arrangement(paired_deltas(baseline, candidate))
    effect = exact_mean(deltas)
    nonzero = deltas[deltas != 0.0]
    size = int(nonzero.size)
    observed = abs(math.fsum(nonzero.tolist()))
    # Sums of the same values in another order can differ in the last bits; ties must count.
    tolerance = 1e-9 * float(np.abs(nonzero).sum())
    common = {"query_count": int(deltas.size), "nonzero_count": size, "effect": effect}
    exact: float | None = None
    if method != "monte carlo" or size == 0:
        exact = exact_two_sided_tail(np.abs(nonzero), observed - tolerance) if size else 1.0
    if exact is None and method == "exact":
        raise StatsError(
            f"the sign-flip distribution of {size} distinct non-zero deltas is too large to "
            "enumerate exactly; use method='auto' or 'monte carlo'"
        )
    if exact is not None:
        return SignFlipResult(
            **common,
            p_value_two_sided=exact,
            exact=True,
            method="exact",
            resamples=1 << size,
            standard_error=0.0,
            seed=seed_value,
        )
    p_value, drawn, error = _monte_carlo(
        nonzero,
        observed,
        tolerance,
        resamples=count,
        seed=seed_value,
        thresholds=thresholds,
        max_resamples=max(ceiling, count),
    )
    return SignFlipResult(
        **common,
        p_value_two_sided=p_value,
        exact=False,
        method="monte carlo",
        resamples=drawn,
        standard_error=error,
        seed=seed_value,
    )
