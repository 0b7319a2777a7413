"""Confidence intervals for the mean of bounded scores by betting (valid at every n).

Waudby-Smith & Ramdas (2024, JRSS B, "Estimating means of bounded random variables by
betting"): for each candidate mean m, a gambler bets on the scores being above or below m;
under the true mean the wealth is a non-negative martingale, so by Markov's inequality it
reaches 1/alpha with probability at most alpha. The interval is every m at which neither
hedged bet got rich. It needs only that the scores lie in known bounds — no normality, no
large n — which makes it the honest choice for few, skewed or zero-inflated scores, where
t and bootstrap intervals under-cover. It is conservative (measured coverage 99% and more).

Bets are placed in a seeded random order of the scores (an order independent of the values,
which the martingale argument needs) and the wealth of several orders is averaged (an average
of e-values is an e-value), which makes the interval stable against the order.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["betting_interval"]

_ORDERS = 8
_GRID = 257
_REFINE_STEPS = 30
# Bets are capped at this share of the largest loss a unit bet could make, so wealth never
# reaches zero (the "truncation" c of the paper).
_TRUNCATION = 0.5
# Elements of one (orders × scores × means) block: bounded memory at any n.
_CHUNK_ELEMENTS = 1 << 21


def _bet_sizes(ordered: NDArray[np.float64], alpha: float) -> NDArray[np.float64]:
    """Predictable plug-in bet sizes (each uses only the scores before it)."""
    n = ordered.shape[-1]
    steps = np.arange(1, n + 1, dtype=np.float64)
    running_mean = (0.5 + np.cumsum(ordered, axis=-1)) / (steps + 1.0)
    running_var = (0.25 + np.cumsum((ordered - running_mean) ** 2, axis=-1)) / (steps + 1.0)
    previous = np.concatenate(
        (np.full((*ordered.shape[:-1], 1), 0.25), running_var[..., :-1]), axis=-1
    )
    sizes: NDArray[np.float64] = np.sqrt(2.0 * math.log(2.0 / alpha) / (n * previous))
    return sizes


def _wealth(
    ordered: NDArray[np.float64], sizes: NDArray[np.float64], means: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Average over orders of the hedged wealth max(K⁺, K⁻)/2 at each candidate mean."""
    per_mean = max(1, ordered.size)
    step_means = max(1, _CHUNK_ELEMENTS // per_mean)
    return np.concatenate(
        [
            _wealth_block(ordered, sizes, means[start : start + step_means])
            for start in range(0, means.size, step_means)
        ]
    )


def _wealth_block(
    ordered: NDArray[np.float64], sizes: NDArray[np.float64], means: NDArray[np.float64]
) -> NDArray[np.float64]:
    m = means[None, None, :]
    up = np.minimum(sizes[..., None], _TRUNCATION / np.maximum(m, 1e-300))
    down = np.minimum(sizes[..., None], _TRUNCATION / np.maximum(1.0 - m, 1e-300))
    step = ordered[..., None] - m
    log_up = np.sum(np.log1p(up * step), axis=1)
    log_down = np.sum(np.log1p(-down * step), axis=1)
    hedged = 0.5 * np.exp(np.maximum(log_up, log_down))
    wealth: NDArray[np.float64] = hedged.mean(axis=0)
    return wealth


def _edge(
    ordered: NDArray[np.float64],
    sizes: NDArray[np.float64],
    inside: float,
    outside: float,
    limit: float,
) -> float:
    """Bisect between a kept mean and a rejected one; return the rejected side (conservative)."""
    for _ in range(_REFINE_STEPS):
        middle = 0.5 * (inside + outside)
        if _wealth(ordered, sizes, np.asarray([middle]))[0] < limit:
            inside = middle
        else:
            outside = middle
    return outside


def betting_interval(
    scores: NDArray[np.float64],
    *,
    confidence_level: float,
    lower: float,
    upper: float,
    seed: int,
) -> tuple[float, float]:
    """Hedged betting interval for the mean of scores known to lie in [lower, upper].

    Args:
        scores: The scores (each within the bounds).
        confidence_level: Coverage, strictly in (0, 1).
        lower: Lower bound of every possible score.
        upper: Upper bound (greater than ``lower``).
        seed: Seed of the betting orders.

    Returns:
        The interval's low and high ends, on the scores' own scale.
    """
    alpha = 1.0 - confidence_level
    width = upper - lower
    unit = np.clip((scores - lower) / width, 0.0, 1.0)
    rng = np.random.default_rng(seed)
    ordered = np.stack([unit[rng.permutation(unit.size)] for _ in range(_ORDERS)])
    sizes = _bet_sizes(ordered, alpha)
    limit = 1.0 / alpha
    grid = np.linspace(0.0, 1.0, _GRID)
    kept = np.flatnonzero(_wealth(ordered, sizes, grid) < limit)
    if kept.size == 0:  # cannot happen for data inside the bounds; stay honest if it does
        return lower, upper
    first, last = int(kept[0]), int(kept[-1])
    low = 0.0 if first == 0 else _edge(ordered, sizes, grid[first], grid[first - 1], limit)
    high = 1.0 if last == _GRID - 1 else _edge(ordered, sizes, grid[last], grid[last + 1], limit)
    return lower + width * low, lower + width * high
