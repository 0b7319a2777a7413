"""Compare two simulated retrieval systems: ``python -m groundkit.stats.demo``.

Simulates 300 queries with a shared per-query difficulty, so the two systems are correlated
like real retrievers over one corpus, and prints for hit@10 and an nDCG-like score the effect
with its interval (and the percentile bootstrap's, for comparison), the exact gate's p-value,
the detection limit, the effect size and the verdict.
"""

from __future__ import annotations

import numpy as np

from groundkit.stats.inference._bootstrap import paired_bootstrap
from groundkit.stats.inference._power import minimum_detectable_difference
from groundkit.stats.verdicts._compare import compare_items
from groundkit.stats.verdicts._limits import unpaired_limit_text

__all__ = ["main", "simulate"]

QUERY_COUNT = 300
SEED = 20_240_601


def simulate(
    query_count: int = QUERY_COUNT, seed: int = SEED
) -> dict[str, tuple[dict[str, float], dict[str, float]]]:
    """Per-query scores of a baseline and a candidate, keyed by metric.

    Args:
        query_count: Number of simulated queries.
        seed: Seed of the simulation.

    Returns:
        For "hit@10" and "ndcg@10", the (baseline, candidate) per-query scores.
    """
    rng = np.random.default_rng(seed)
    ids = [f"q{i:04d}" for i in range(query_count)]
    ease = rng.normal(0.0, 1.5, size=query_count)
    # The candidate helps most where the baseline is middling, as reranking tends to.
    lift = 0.35 * np.exp(-(ease**2) / 2.0)
    p_base = 1.0 / (1.0 + np.exp(-(ease + 0.6)))
    p_cand = 1.0 / (1.0 + np.exp(-(ease + 0.6 + lift * 2.0)))
    uniform = rng.random(query_count)
    # Some queries get a fresh draw so the candidate also loses a few the baseline found.
    fresh = rng.random(query_count) < 0.2
    uniform_cand = np.where(fresh, rng.random(query_count), uniform)
    hit_base = (uniform < p_base).astype(float)
    hit_cand = (uniform_cand < p_cand).astype(float)
    noise = rng.normal(0.0, 0.08, size=(2, query_count))
    ndcg_base = np.clip(0.85 * p_base + noise[0], 0.0, 1.0)
    ndcg_cand = np.clip(0.85 * p_cand + noise[1], 0.0, 1.0)

    def keyed(values: np.ndarray) -> dict[str, float]:
        return dict(zip(ids, values.tolist(), strict=True))

    return {
        "hit@10": (keyed(hit_base), keyed(hit_cand)),
        "ndcg@10": (keyed(ndcg_base), keyed(ndcg_cand)),
    }


def main() -> int:
    """Print the comparison of the two simulated systems; returns the exit status."""
    print(f"groundkit.stats demo: bm25 vs hybrid on {QUERY_COUNT} simulated queries\n")
    for metric, (baseline, candidate) in simulate().items():
        verdict = compare_items(baseline, candidate, metric=metric)
        boot = paired_bootstrap(
            baseline, candidate, baseline_name="bm25", candidate_name="hybrid", metric=metric
        )
        print(f"{metric} ({verdict.kind} items)")
        print(f"  bm25 {verdict.mean_a:.3f}  →  hybrid {verdict.mean_b:.3f}")
        print(
            f"  effect       {verdict.difference:+.3f}, 95% CI "
            f"[{verdict.confidence_interval_low:+.3f}, "
            f"{verdict.confidence_interval_high:+.3f}] ({verdict.interval_method}); "
            f"percentile bootstrap [{boot.confidence_interval_low:+.3f}, "
            f"{boot.confidence_interval_high:+.3f}]"
        )
        print(f"  gate         {verdict.test} p {verdict.p_value:.2g}")
        print(
            f"  flips        {verdict.gained} gained, {verdict.lost} lost, {verdict.ties} tied "
            f"({100 * verdict.flip_share:.0f}% of queries differ)"
        )
        print(f"  detection limit {verdict.detection_text()}")
        print(
            "                  unpaired floor "
            f"{unpaired_limit_text(minimum_detectable_difference(verdict.item_count))}"
        )
        if verdict.effect_size is not None:
            print(
                f"  effect size  d_z {verdict.effect_size:.2f} "
                f"[{verdict.effect_size_low:.2f}, {verdict.effect_size_high:.2f}]"
            )
        print(f"  verdict      {verdict.verdict}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
