"""Paired randomisation (sign-flip) test of the mean per-query delta."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from groundkit.stats._engine import canonical_arrangement, exact_mean
from groundkit.stats._errors import StatsError
from groundkit.stats._resampling import random_sign_counts
from groundkit.stats._validation import check_resamples, check_seed, paired_arrays, real_array

__all__ = ["SignFlipResult", "paired_deltas", "sign_flip_test"]

# 2**62 patterns cannot be enumerated anyway; the cap keeps the shift below in int64 range.
_MAX_ENUMERATED_BITS = 62


class SignFlipResult(BaseModel):
    """Outcome of a paired sign-flip randomisation test.

    Attributes:
        query_count: Number of paired queries.
        nonzero_count: Queries whose delta is not zero (only these can change sign).
        effect: Observed mean delta (candidate − baseline).
        p_value_two_sided: Share of sign patterns whose |mean| reaches the observed |mean|.
        exact: True when every sign pattern was enumerated.
        resamples: Number of sign patterns evaluated (2**nonzero_count when exact).
        seed: Seed of the numpy Generator (unused when exact).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_count: int
    nonzero_count: int
    effect: float
    p_value_two_sided: float
    exact: bool
    resamples: int
    seed: int


def paired_deltas(
    baseline: Mapping[str, float] | Sequence[float],
    candidate: Mapping[str, float] | Sequence[float],
) -> NDArray[np.float64]:
    """Per-query candidate − baseline deltas from two mappings (paired by id) or sequences."""
    if isinstance(baseline, Mapping) and isinstance(candidate, Mapping):
        _, base, cand = paired_arrays(baseline, candidate)
        return cand - base
    if isinstance(baseline, Mapping) or isinstance(candidate, Mapping):
        raise StatsError("baseline and candidate must both be mappings or both be sequences")
    base = real_array(baseline, what="baseline")
    cand = real_array(candidate, what="candidate")
    if base.size != cand.size:
        raise StatsError(
            f"baseline and candidate must pair item by item (got {base.size} and {cand.size})"
        )
    return cand - base


def sign_flip_test(
    baseline: Mapping[str, float] | Sequence[float],
    candidate: Mapping[str, float] | Sequence[float],
    *,
    resamples: int = 10_000,
    seed: int = 7,
) -> SignFlipResult:
    """Paired randomisation test: is the mean delta larger than random sign flips would give?

    Under "the two systems are exchangeable on every query" each per-query delta is as likely
    to have the opposite sign. The test flips signs at random and counts patterns whose
    |mean delta| is at least the observed one. Zero deltas cannot change sign and are left
    out of the enumeration (they still count in the mean's denominator).

    When 2**(non-zero deltas) ≤ `resamples` every pattern is enumerated and the p-value is
    exact: the share of patterns at least as extreme (the observed pattern included, so it is
    never zero). Otherwise `resamples` random patterns are drawn and p = (r + 1) / (B + 1).

    Args:
        baseline: Baseline per-query scores: a mapping by query id, or a sequence.
        candidate: Candidate scores with the same ids (or the same length, paired by position).
        resamples: Random sign patterns to draw (positive); also the enumeration budget.
        seed: Non-negative seed for the numpy Generator created inside the call.

    Returns:
        The frozen `SignFlipResult`.

    Raises:
        StatsError: On unpaired, empty or non-finite input, or bad settings.
    """
    count = check_resamples(resamples)
    seed_value = check_seed(seed)
    deltas = canonical_arrangement(paired_deltas(baseline, candidate))
    effect = exact_mean(deltas)
    nonzero = deltas[deltas != 0.0]
    size = int(nonzero.size)
    observed = abs(float(nonzero.sum()))
    # Sums of the same values in another order can differ in the last bits; ties must count.
    tolerance = 1e-9 * float(np.abs(nonzero).sum())
    if size == 0:
        return SignFlipResult(
            query_count=int(deltas.size),
            nonzero_count=0,
            effect=effect,
            p_value_two_sided=1.0,
            exact=True,
            resamples=1,
            seed=seed_value,
        )
    total = float(nonzero.sum())
    if size <= _MAX_ENUMERATED_BITS and (1 << size) <= count:
        patterns = 1 << size
        flipped = (np.arange(patterns)[:, None] >> np.arange(size)) & 1
        sums = total - 2.0 * (flipped.astype(np.float64) @ nonzero)
        extreme = int(np.count_nonzero(np.abs(sums) >= observed - tolerance))
        return SignFlipResult(
            query_count=int(deltas.size),
            nonzero_count=size,
            effect=effect,
            p_value_two_sided=extreme / patterns,
            exact=True,
            resamples=patterns,
            seed=seed_value,
        )
    extreme = random_sign_counts(
        nonzero, observed, resamples=count, seed=seed_value, tolerance=tolerance
    )
    return SignFlipResult(
        query_count=int(deltas.size),
        nonzero_count=size,
        effect=effect,
        p_value_two_sided=(extreme + 1) / (count + 1),
        exact=False,
        resamples=count,
        seed=seed_value,
    )
