"""Benchmark: groundkit.stats.paired_bootstrap against a pure-Python loop of the same algorithm.

Run with ``python tests/benchmarks/bench_stats_bootstrap.py``. Targets (exit status 1 if one
is missed):

* n = 1,000 queries, B = 10,000: at least 20× faster than the loop with continuous scores and
  at least 300× faster with hit@10 (0/1) scores;
* n = 100,000 queries, B = 10,000 completes with under 1 GiB of peak memory growth (numpy
  allocations traced with tracemalloc, and the process's peak RSS growth).

The reference and the vectorised version also have to agree on the interval within Monte
Carlo error, so the speed is not bought with a different algorithm.
"""

from __future__ import annotations

import math
import random
import resource
import sys
import time
import tracemalloc

import numpy as np

from groundkit.stats import BootstrapResult, paired_bootstrap

QUERIES = 1_000
RESAMPLES = 10_000
LARGE_QUERIES = 100_000
CONTINUOUS_TARGET = 20.0
BINARY_TARGET = 300.0
MEMORY_LIMIT_BYTES = 1 << 30


def reference_bootstrap(
    baseline: dict[str, float],
    candidate: dict[str, float],
    *,
    resamples: int,
    seed: int,
    confidence_level: float,
) -> tuple[float, float, float, float]:
    """Straightforward loop: resample deltas with randrange, mean, sort, interpolate."""
    ids = sorted(baseline)
    deltas = [candidate[q] - baseline[q] for q in ids]
    n = len(deltas)
    draw = random.Random(seed).randrange
    means = []
    for _ in range(resamples):
        total = 0.0
        for _ in range(n):
            total += deltas[draw(n)]
        means.append(total / n)
    means.sort()

    def quantile(share: float) -> float:
        position = share * (resamples - 1)
        below = math.floor(position)
        above = min(below + 1, resamples - 1)
        return means[below] + (position - below) * (means[above] - means[below])

    tail = (1 - confidence_level) / 2
    smaller = min(sum(m <= 0 for m in means), sum(m >= 0 for m in means))
    p_value = min(1.0, 2 * (smaller + 1) / (resamples + 1))
    return sum(deltas) / n, quantile(tail), quantile(1 - tail), p_value


def simulated(n: int, *, binary: bool, seed: int) -> tuple[dict[str, float], dict[str, float]]:
    rng = np.random.default_rng(seed)
    ids = [f"q{i:06d}" for i in range(n)]
    if binary:
        hit_base = rng.random(n) < 0.62
        hit_cand = np.where(rng.random(n) < 0.12, rng.random(n) < 0.7, hit_base)
        pair = hit_base.astype(float), hit_cand.astype(float)
    else:
        base = rng.beta(2.0, 3.0, n)
        pair = base, np.clip(base + rng.normal(0.01, 0.15, n), 0.0, 1.0)
    return (
        dict(zip(ids, pair[0].tolist(), strict=True)),
        dict(zip(ids, pair[1].tolist(), strict=True)),
    )


def vectorised(baseline: dict[str, float], candidate: dict[str, float]) -> BootstrapResult:
    return paired_bootstrap(
        baseline,
        candidate,
        baseline_name="baseline",
        candidate_name="candidate",
        metric="metric",
        resamples=RESAMPLES,
        seed=7,
    )


def best_of(repeats: int, run: object) -> tuple[float, BootstrapResult]:
    assert callable(run)
    timings = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        timings.append(time.perf_counter() - start)
    assert isinstance(result, BootstrapResult)
    return min(timings), result


def speed_case(label: str, *, binary: bool, target: float) -> bool:
    baseline, candidate = simulated(QUERIES, binary=binary, seed=1 if binary else 2)
    start = time.perf_counter()
    effect, low, high, p_value = reference_bootstrap(
        baseline, candidate, resamples=RESAMPLES, seed=7, confidence_level=0.95
    )
    loop_seconds = time.perf_counter() - start
    fast_seconds, result = best_of(5, lambda: vectorised(baseline, candidate))
    ratio = loop_seconds / fast_seconds
    # Both are Monte Carlo estimates of the same quantiles: the SD of a 2.5% quantile of
    # 10,000 resampled means is about 0.03 SE; allow a generous 0.15 SE.
    se = (result.confidence_interval_high - result.confidence_interval_low) / (2 * 1.96)
    agree = (
        abs(effect - result.effect) < 1e-12
        and abs(low - result.confidence_interval_low) < 0.15 * se
        and abs(high - result.confidence_interval_high) < 0.15 * se
    )
    ok = ratio >= target and agree
    print(
        f"{label:<11} n={QUERIES:,} B={RESAMPLES:,}  loop {loop_seconds:7.3f} s   "
        f"groundkit {1000 * fast_seconds:8.2f} ms ({result.method})   "
        f"{ratio:8.0f}× (target ≥ {target:.0f}×)  "
        f"CI loop [{low:+.4f}, {high:+.4f}] vs [{result.confidence_interval_low:+.4f}, "
        f"{result.confidence_interval_high:+.4f}]  p {p_value:.3g} vs "
        f"{result.p_value_two_sided:.3g}  {'ok' if ok else 'MISSED'}"
    )
    return ok


def peak_rss_bytes() -> int:
    # ru_maxrss is in KiB on Linux (bytes on macOS).
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def memory_case() -> bool:
    baseline, candidate = simulated(LARGE_QUERIES, binary=False, seed=3)
    rss_before = peak_rss_bytes()
    tracemalloc.start()
    start = time.perf_counter()
    result = vectorised(baseline, candidate)
    seconds = time.perf_counter() - start
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth = peak_rss_bytes() - rss_before
    ok = traced_peak < MEMORY_LIMIT_BYTES and rss_growth < MEMORY_LIMIT_BYTES
    print(
        f"{'memory':<11} n={LARGE_QUERIES:,} B={RESAMPLES:,}  {seconds:.2f} s ({result.method})  "
        f"traced peak {traced_peak / 2**20:.1f} MiB, peak RSS growth "
        f"{rss_growth / 2**20:.1f} MiB (limit 1024 MiB; unchunked would need "
        f"{LARGE_QUERIES * RESAMPLES * 16 / 2**30:.1f} GiB)  {'ok' if ok else 'MISSED'}"
    )
    return ok


def main() -> int:
    """Run every case, print the figures, and return 0 only if every target is met."""
    results = [
        speed_case("continuous", binary=False, target=CONTINUOUS_TARGET),
        speed_case("hit@10", binary=True, target=BINARY_TARGET),
        memory_case(),
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
