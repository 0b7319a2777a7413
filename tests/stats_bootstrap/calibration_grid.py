"""The calibration grid: seeded simulations of every test and interval groundkit.stats offers.

Shared by the test suite (tests/stats_bootstrap/test_stats_calibration_grid.py, fewer trials)
and the benchmark suite (tests/benchmarks/bench_stats_calibration.py, the full grid). Cells
are n ∈ {10, 30, 100, 1000} × four score shapes:

* ``continuous``: per-query scores from a Beta whose mean follows a per-query "ease", shared
  by the two systems (so they are correlated, like two retrievers over one corpus);
* ``binary-0.3`` and ``binary-0.9``: right-or-wrong items, right with probability p; the
  second run repeats the first on half of the items and is drawn afresh on the rest;
* ``zero-inflated``: 70% zeros (queries where nothing relevant is found), the zero pattern
  shared on 60% of the queries, otherwise continuous as above.

Each measure returns a share over trials; the tests compare it with the promise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binom

from groundkit.stats import (
    FamilySettings,
    ItemComparison,
    PairedScores,
    bootstrap_interval,
    compare_family,
    compare_items,
    detection_limit,
    exact_binomial_interval,
    mean_interval,
    paired_bootstrap,
    paired_difference_interval,
    paired_minimum_detectable_difference,
    wilson_interval,
)

Array = NDArray[np.float64]
SHAPES = ("continuous", "binary-0.3", "binary-0.9", "zero-inflated")
SIZES = (10, 30, 100, 1000)
ALPHA = 0.05
AGREEMENT = 0.5  # share of items on which the second right-or-wrong run repeats the first
ZERO_SHARE = 0.7
SHARED_ZEROS = 0.6
EASE_SHIFT = 0.1  # the continuous shapes' effect: every query's ease moves up by this much
BINARY_EFFECT = {"binary-0.3": 0.10, "binary-0.9": -0.10}


def _beta_scores(ease: Array, rng: np.random.Generator) -> Array:
    return rng.beta(1.0 + 4.0 * ease, 1.0 + 4.0 * (1.0 - ease))


def _continuous_pair(
    shape: str, size: tuple[int, int], shift: float, rng: np.random.Generator
) -> tuple[Array, Array]:
    ease = rng.random(size)
    a = _beta_scores(ease, rng)
    b = _beta_scores(np.clip(ease + shift, 0.0, 1.0), rng)
    if shape == "zero-inflated":
        zero_a = rng.random(size) < ZERO_SHARE
        fresh = rng.random(size) < ZERO_SHARE - shift
        zero_b = np.where(rng.random(size) < SHARED_ZEROS, zero_a, fresh)
        a = np.where(zero_a, 0.0, a)
        b = np.where(zero_b, 0.0, b)
    return a, b


def _binary_pair(
    shape: str, size: tuple[int, int], effect: float, rng: np.random.Generator
) -> tuple[Array, Array]:
    p = float(shape.split("-")[1])
    target = p + effect
    fresh_share = (target - AGREEMENT * p) / (1.0 - AGREEMENT)
    a = rng.random(size) < p
    b = np.where(rng.random(size) < AGREEMENT, a, rng.random(size) < fresh_share)
    return a.astype(np.float64), b.astype(np.float64)


def paired_sample(
    shape: str, n: int, trials: int, *, effect: bool, seed: int
) -> tuple[Array, Array]:
    """Scores of two runs, (trials, n) each; with ``effect`` the second run is better/worse."""
    rng = np.random.default_rng(seed)
    if shape.startswith("binary"):
        return _binary_pair(shape, (trials, n), BINARY_EFFECT[shape] if effect else 0.0, rng)
    return _continuous_pair(shape, (trials, n), EASE_SHIFT if effect else 0.0, rng)


@functools.cache
def true_effect(shape: str) -> float:
    """The true mean difference of the effect model (exact for binary, 8e6 draws otherwise)."""
    if shape.startswith("binary"):
        return BINARY_EFFECT[shape]
    a, b = paired_sample(shape, 1_000_000, 8, effect=True, seed=424_242)
    return float((b - a).mean())


@functools.cache
def null_delta_spread(shape: str) -> float:
    """The SD of a per-query difference when the two runs are exchangeable (8e6 draws)."""
    a, b = paired_sample(shape, 1_000_000, 8, effect=False, seed=515_151)
    return float((b - a).std())


def single_sample(shape: str, n: int, trials: int, *, seed: int) -> tuple[Array, float]:
    """One run's scores, (trials, n), and their true mean."""
    a, _ = paired_sample(shape, n, trials, effect=False, seed=seed)
    if shape.startswith("binary"):
        return a, float(shape.split("-")[1])
    return a, 0.5 * (1.0 - ZERO_SHARE) if shape == "zero-inflated" else 0.5


def _rows(values: Array) -> dict[str, float]:
    return {f"q{i:05d}": float(v) for i, v in enumerate(values)}


def _key(a: Array, b: Array) -> Hashable:
    """Right-or-wrong rows are summarised by their 2×2 table (everything depends only on it)."""
    if np.all((a == 0) | (a == 1)) and np.all((b == 0) | (b == 1)):
        both = int(np.count_nonzero((a == 1) & (b == 1)))
        gained = int(np.count_nonzero((a == 0) & (b == 1)))
        lost = int(np.count_nonzero((a == 1) & (b == 0)))
        return ("table", a.size, both, gained, lost)
    return None


class _Memo:
    """Calls ``compute`` once per right-or-wrong table; numeric rows are always computed."""

    def __init__(self, compute: Callable[[Array, Array], object]) -> None:
        self.compute = compute
        self.cache: dict[Hashable, object] = {}

    def __call__(self, a: Array, b: Array) -> object:
        key = _key(a, b)
        if key is None:
            return self.compute(a, b)
        if key not in self.cache:
            self.cache[key] = self.compute(a, b)
        return self.cache[key]


@dataclass(frozen=True)
class Share:
    """A measured share and how many trials it stands on.

    Attributes:
        value: The share (nan when no trial counted).
        trials: Trials that counted (e.g. those whose result claimed its coverage).
        of: All trials run.
    """

    value: float
    trials: int
    of: int


def _share(hits: list[bool], of: int) -> Share:
    return Share(float(np.mean(hits)) if hits else float("nan"), len(hits), of)


def aa_false_alarms(shape: str, n: int, trials: int, *, seed: int, resamples: int = 1_000) -> Share:
    """Share of A/A comparisons (no true difference) that claim "better" or "worse"."""
    a, b = paired_sample(shape, n, trials, effect=False, seed=seed)

    def verdict(x: Array, y: Array) -> str:
        return compare_items(_rows(x), _rows(y), resamples=resamples, seed=seed).verdict

    memo = _Memo(verdict)
    return _share([memo(a[t], b[t]) in ("better", "worse") for t in range(trials)], trials)


def paired_coverage(
    shape: str, n: int, trials: int, *, seed: int, resamples: int = 1_000
) -> dict[str, Share]:
    """Coverage of the true difference by the engine's interval and the percentile bootstrap.

    Only results that claim their coverage count (no caution); ``claimed`` says how many did.
    """
    a, b = paired_sample(shape, n, trials, effect=True, seed=seed)
    truth = true_effect(shape)

    def engine(x: Array, y: Array) -> tuple[bool, bool]:
        # The interval every verdict shows (compare_items reports exactly this one).
        result = paired_difference_interval(_rows(x), _rows(y), seed=seed)
        return result.low <= truth <= result.high, result.caution is None

    def percentile(x: Array, y: Array) -> tuple[bool, bool]:
        result = paired_bootstrap(
            _rows(x),
            _rows(y),
            baseline_name="a",
            candidate_name="b",
            metric="m",
            resamples=resamples,
            seed=seed,
        )
        covered = result.confidence_interval_low <= truth <= result.confidence_interval_high
        return covered, result.caution is None

    out: dict[str, Share] = {}
    for name, function in (("engine", engine), ("paired_bootstrap", percentile)):
        memo = _Memo(function)
        outcomes = [memo(a[t], b[t]) for t in range(trials)]
        out[name] = _share([c for c, claimed in outcomes if claimed], trials)  # type: ignore[misc]
    return out


def single_coverage(shape: str, n: int, trials: int, *, seed: int) -> dict[str, Share]:
    """Coverage of one run's true mean by each one-system interval (claimed results only)."""
    x, truth = single_sample(shape, n, trials, seed=seed)
    methods: dict[str, Callable[[Array, Array], object]] = {
        "mean_interval": lambda v, _: _claim(mean_interval(v), truth),
        "bootstrap_interval": lambda v, _: _claim(bootstrap_interval(v, seed=seed), truth),
    }
    if shape.startswith("binary"):
        methods["wilson_interval"] = lambda v, _: _claim_share(
            wilson_interval(int(v.sum()), v.size), truth
        )
        methods["exact_binomial_interval"] = lambda v, _: _claim_share(
            exact_binomial_interval(int(v.sum()), v.size), truth
        )
    out: dict[str, Share] = {}
    for name, function in methods.items():
        memo = _Memo(function)
        outcomes = [memo(x[t], x[t]) for t in range(trials)]
        out[name] = _share([c for c, claimed in outcomes if claimed], trials)  # type: ignore[misc]
    return out


def _claim(result: object, truth: float) -> tuple[bool, bool]:
    low, high = result.low, result.high  # type: ignore[attr-defined]
    return bool(low <= truth <= high), result.caution is None  # type: ignore[attr-defined]


def _claim_share(result: object, truth: float) -> tuple[bool, bool]:
    return _claim(result, truth)


def planned_limit(shape: str, n: int) -> float | None:
    """The detection limit at the model's true flip share or delta spread (80%, alpha 0.05)."""
    if shape.startswith("binary"):
        p = float(shape.split("-")[1])
        flips = (1.0 - AGREEMENT) * 2.0 * p * (1.0 - p)  # fresh draw differs from the first
        return detection_limit(n, flips, confidence=1.0 - ALPHA, power=0.8)
    return paired_minimum_detectable_difference(null_delta_spread(shape), n, alpha=ALPHA)


def detection_power(
    shape: str, n: int, trials: int, *, seed: int, resamples: int = 1_000
) -> Share | None:
    """Share of comparisons called "better" when the true difference equals the limit.

    Binary cells keep the flip share and move gains/losses apart by the limit; numeric cells
    shift the exchangeable differences by the limit. None when no difference is detectable.
    """
    limit = planned_limit(shape, n)
    if limit is None:
        return None
    rng = np.random.default_rng(seed)
    a, b = paired_sample(shape, n, trials, effect=False, seed=seed)
    if shape.startswith("binary"):
        p = float(shape.split("-")[1])
        # A change larger than the model's flip share flips that many items, all gains.
        flips = max((1.0 - AGREEMENT) * 2.0 * p * (1.0 - p), limit)
        draw = rng.random((trials, n))
        gained = draw < (flips + limit) / 2.0
        lost = (draw >= (flips + limit) / 2.0) & (draw < flips)
        a = np.where(gained, 0.0, np.where(lost, 1.0, a))
        b = np.where(gained, 1.0, np.where(lost, 0.0, a))
    else:
        b = b + limit

    def better(x: Array, y: Array) -> bool:
        result = compare_items(_rows(x), _rows(y), resamples=resamples, seed=seed, bounds=None)
        return result.verdict == "better"

    memo = _Memo(better)
    return _share([bool(memo(a[t], b[t])) for t in range(trials)], trials)


def family_false_verdicts(
    n: int, trials: int, *, seed: int, stages: int = 3, resamples: int = 1_000
) -> Share:
    """Share of A/A reports (every stage exchangeable) with any claim among stages × 4 metrics.

    Each query has an ease; every stage draws its hit@10 (right or wrong) and three numeric
    metrics from it independently, so metrics are correlated within a stage, as in a report.
    """
    rng = np.random.default_rng(seed)
    false = []
    for _ in range(trials):
        ease = rng.random(n)
        runs = []
        for _stage in range(stages + 1):
            score = _beta_scores(ease, rng)
            hit = (rng.random(n) < 0.3 + 0.6 * ease).astype(np.float64)
            recall = np.where(rng.random(n) < 0.3, 0.0, score)
            runs.append(
                {"hit@10": hit, "recall@10": recall, "ndcg@10": score * hit, "mrr": score**2}
            )
        members = [
            PairedScores(_rows(runs[0][m]), _rows(runs[s][m]), metric=m, label=f"s{s}")
            for s in range(1, stages + 1)
            for m in runs[0]
        ]
        results: list[ItemComparison] = compare_family(
            members, FamilySettings(resamples=resamples, seed=seed, alpha=ALPHA)
        )
        false.append(any(r.claims for r in results))
    return _share(false, trials)


def exact_binomial_coverage(
    n: int, p: float, interval: Callable[[int, int], object]
) -> tuple[float, bool]:
    """Exact coverage of p by ``interval(k, n)`` over k ~ Binomial(n, p), and whether every
    result claims its coverage (no caution)."""
    covered = 0.0
    claimed = True
    for k in range(n + 1):
        result = interval(k, n)
        low, high = result.low, result.high  # type: ignore[attr-defined]
        covered += float(binom.pmf(k, n, p)) * (low <= p <= high)
        claimed = claimed and result.caution is None  # type: ignore[attr-defined]
    return covered, claimed


def as_scores(k: int, n: int) -> Array:
    """n right-or-wrong scores with k right."""
    return np.concatenate((np.ones(k), np.zeros(n - k)))


def exact_single_coverage(shape: str, n: int) -> dict[str, tuple[float, bool]]:
    """Exact coverage of each one-system interval on right-or-wrong scores (binary shapes)."""
    p = float(shape.split("-")[1])
    return {
        "mean_interval": exact_binomial_coverage(n, p, lambda k, m: mean_interval(as_scores(k, m))),
        "bootstrap_interval": exact_binomial_coverage(
            n, p, lambda k, m: bootstrap_interval(as_scores(k, m))
        ),
        "wilson_interval": exact_binomial_coverage(n, p, wilson_interval),
        "exact_binomial_interval": exact_binomial_coverage(n, p, exact_binomial_interval),
    }
