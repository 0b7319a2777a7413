"""The calibration grid's power cells for bounded scores, as a report's metrics are.

The main grid (calibration_grid.py) measures power with unbounded scores shifted by the limit.
A report's metrics lie in [0, 1], so its verdicts use the bounds: below 30 queries skewed
differences are decided with the distribution-free (betting) interval, and a shift must come
from the runs themselves. Here:

* ``bounded_power``: scores from four shapes (``continuous`` and ``zero-inflated`` as in the
  main grid; ``graded-3``, recall over three quotes, whose differences take three sizes;
  ``reciprocal-rank``, 1/rank of a geometric first hit, 0 beyond rank 10), the second run's
  ease raised until the true mean difference equals the t limit at the true spread of the
  differences (a fixed point); the share called "better", split by the interval the verdict
  used.
* ``betting_limit_power``: the comparisons decided with the betting interval, each taken as
  its own population (its differences, centred and shifted so that their mean is the limit it
  printed, cut at ±1), resampled: the share of resamples called "better".

The figures quoted by `groundkit.stats`' power cautions come from these measures.
"""

from __future__ import annotations

import functools

import numpy as np
from calibration_grid import ALPHA, Array, Share, _continuous_pair, _rows, _share
from numpy.typing import NDArray

from groundkit.stats import compare_items, paired_minimum_detectable_difference

BOUNDED_SHAPES = ("continuous", "zero-inflated", "graded-3", "reciprocal-rank")
_DRAWS = 400_000
_LAST_RANK = 10


def _bounded_pair(
    shape: str, size: tuple[int, ...], shift: float, rng: np.random.Generator
) -> tuple[Array, Array]:
    if shape in ("continuous", "zero-inflated"):
        return _continuous_pair(shape, size, shift, rng)  # type: ignore[arg-type]
    ease = rng.random(size)
    raised = np.clip(ease + shift, 0.0, 1.0)
    if shape == "graded-3":
        return rng.binomial(3, ease) / 3.0, rng.binomial(3, raised) / 3.0

    def reciprocal_rank(chance: Array) -> Array:
        rank = rng.geometric(np.clip(chance, 0.02, 1.0))
        return np.where(rank <= _LAST_RANK, 1.0 / rank, 0.0)

    return reciprocal_rank(ease), reciprocal_rank(raised)


@functools.cache
def _moments(shape: str, shift: float) -> tuple[float, float]:
    """True mean and SD of a difference at this ease shift (4e5 draws, one seed)."""
    a, b = _bounded_pair(shape, (_DRAWS,), shift, np.random.default_rng(97))
    deltas = b - a
    return float(deltas.mean()), float(deltas.std())


@functools.cache
def limit_shift(shape: str, n: int) -> tuple[float, float]:
    """(ease shift, limit): the shift whose true mean difference is the t limit at its spread."""
    low, high = 0.0, 1.0
    for _ in range(25):
        middle = round((low + high) / 2.0, 12)
        mean, sd = _moments(shape, middle)
        if mean < paired_minimum_detectable_difference(sd, n, alpha=ALPHA):
            low = middle
        else:
            high = middle
    shift = round((low + high) / 2.0, 12)
    return shift, paired_minimum_detectable_difference(_moments(shape, shift)[1], n, alpha=ALPHA)


def bounded_power(
    shape: str, n: int, trials: int, *, seed: int, resamples: int = 1_000
) -> dict[str, Share]:
    """Power at the t limit with bounded scores, by the interval the verdict used.

    Keys: ``all`` and each method seen (``t``, ``betting``, ``tango`` when a draw happened to
    be right-or-wrong).
    """
    shift, _ = limit_shift(shape, n)
    a, b = _bounded_pair(shape, (trials, n), shift, np.random.default_rng(seed))
    hits: dict[str, list[bool]] = {"all": []}
    for t in range(trials):
        result = compare_items(_rows(a[t]), _rows(b[t]), resamples=resamples, seed=seed)
        better = result.verdict == "better"
        hits["all"].append(better)
        hits.setdefault(result.interval_method, []).append(better)
    return {key: _share(values, trials) for key, values in hits.items()}


def _population_at(centred: NDArray[np.float64], mean: float) -> NDArray[np.float64] | None:
    """The centred differences shifted (cut at ±1) so that their mean is ``mean``."""
    low, high = 0.0, 1.0 - float(centred.min())
    if float(np.clip(centred + high, -1.0, 1.0).mean()) < mean:
        return None
    for _ in range(60):
        middle = (low + high) / 2.0
        if float(np.clip(centred + middle, -1.0, 1.0).mean()) < mean:
            low = middle
        else:
            high = middle
    return np.clip(centred + high, -1.0, 1.0)


def betting_limit_power(
    shape: str, n: int, samples: int, *, draws: int, seed: int, resamples: int = 1_000
) -> Share:
    """Power at the printed limit of comparisons decided with the betting interval.

    Null samples (the two runs exchangeable) are compared; each one decided with the betting
    interval and printing a limit becomes a population (see the module's docstring) from which
    ``draws`` samples of n differences are compared again. Returns the share called "better"
    over every draw of every such sample (``of``: the samples drawn, ``trials``: draws made).
    """
    rng = np.random.default_rng(seed)
    a, b = _bounded_pair(shape, (samples, n), 0.0, rng)
    hits: list[bool] = []
    for t in range(samples):
        printed = compare_items(_rows(a[t]), _rows(b[t]), resamples=resamples, seed=seed)
        if printed.interval_method != "betting" or printed.detection_limit is None:
            continue
        deltas = b[t] - a[t]
        population = _population_at(deltas - deltas.mean(), printed.detection_limit)
        if population is None:
            continue
        for _ in range(draws):
            drawn = population[rng.integers(0, n, n)]
            result = compare_items(
                _rows(np.maximum(-drawn, 0.0)),
                _rows(np.maximum(drawn, 0.0)),
                resamples=resamples,
                seed=seed,
            )
            hits.append(result.verdict == "better")
    return Share(float(np.mean(hits)) if hits else float("nan"), len(hits), samples)
