"""What ablation adds to a run, against the same run without it (measured in the same process).

Run with ``python tests/benchmarks/bench_harness_ablation.py [--repeats N]``.

The data is the packaged demo (42 documents, 172 answerable queries). The stages: the BM25
baseline, BM25 on 400-character chunks and on whole documents, the dense stage when the dense
extra is installed, a fusion of all of them and a rerank of the fusion's top 20 by a word-
overlap function. Ablation rows: each fused stage alone, each fusion without one input
(replayed), the fusion without the rerank, all decided as one family. The run is timed with
ablation on and off (best of N each); the ablation's own seconds are the report's
``timings["ablation"]``.

Check (exit status 1 on a miss): the ablation takes at most 15% of the run without it, and
each replayed row equals a hybrid stage of those inputs run in the same process (per-query
scores identical).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from groundkit.cli.run._run import demo_data, dense_ready
from groundkit.harness import EvalSettings, evaluate
from groundkit.judgments import Corpus, EvalReport, Judgment, load_judgments

MAX_SHARE = 0.15


def overlap_scores(query: str, texts: list[str]) -> list[float]:
    """Words shared with the query: a rerank scorer that costs next to nothing."""
    words = set(query.lower().split())
    return [float(len(words & set(text.lower().split()))) for text in texts]


def _settings(dense: bool, ablation: bool) -> EvalSettings:
    stages: list[dict[str, Any]] = [
        {"name": "small", "retriever": {"kind": "bm25"}, "chunker": "chars:400:50"},
        {"name": "doc", "retriever": {"kind": "bm25"}, "chunker": "document"},
    ]
    inputs = ["bm25", "small", "doc"]
    if dense:
        stages.append({"name": "dense", "retriever": {"kind": "dense"}})
        inputs.append("dense")
    stages.append({"name": "fused", "retriever": {"kind": "hybrid", "stages": inputs}})
    stages.append(
        {
            "name": "reranked",
            "retriever": {"kind": "rerank", "stage": "fused", "target": overlap_scores, "top": 20},
        }
    )
    return EvalSettings.model_validate({"stages": stages, "ablation": ablation})


def _best(
    corpus: Corpus, judgments: list[Judgment], settings: EvalSettings, repeats: int
) -> tuple[float, EvalReport]:
    best, report = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        report = evaluate(corpus, judgments, settings)
        best = min(best, time.perf_counter() - start)
    assert report is not None
    return best, report


def _replays_exact(corpus: Corpus, judgments: list[Judgment], report: EvalReport) -> bool:
    replays = [row for row in report.ablation if row.source == "replay" and row.stage == "fused"]
    stages = [
        {"name": f"pair{i}", "retriever": {"kind": "hybrid", "stages": row.inputs}}
        for i, row in enumerate(replays)
    ]
    settings = report.run.config["stages"][1:-2] + stages
    check = evaluate(corpus, judgments, EvalSettings.model_validate({"stages": settings}))
    return all(
        row.scores == {r.query_id: r.scores for r in check.stage(f"pair{i}").queries}
        for i, row in enumerate(replays)
    )


def main(argv: list[str] | None = None) -> int:
    """Measure, print the figures as JSON, return 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    dense = dense_ready()
    with demo_data() as (corpus_path, judgments_path):
        corpus, judgments = Corpus.load(corpus_path), load_judgments(judgments_path)
        # A first run warms the caches (embeddings, model, imports) for both timings.
        evaluate(corpus, judgments, _settings(dense, ablation=False))
        off, _ = _best(corpus, judgments, _settings(dense, ablation=False), args.repeats)
        on, report = _best(corpus, judgments, _settings(dense, ablation=True), args.repeats)
        exact = _replays_exact(corpus, judgments, report)
    seconds = report.timings["ablation"]
    figures = {
        "dense": dense,
        "rows": len(report.ablation),
        "replayed_rows": sum(1 for row in report.ablation if row.source == "replay"),
        "family_size": report.ablation[0].comparisons[0].family_size,
        "run_without_ablation_s": round(off, 3),
        "run_with_ablation_s": round(on, 3),
        "ablation_s": round(seconds, 3),
        "ablation_share_of_run": round(seconds / off, 4),
        "replays_equal_hybrid_stages": exact,
    }
    print(json.dumps(figures, indent=1))
    missed = []
    if seconds > MAX_SHARE * off:
        missed.append(f"ablation took {seconds:.3f} s, more than {MAX_SHARE:.0%} of {off:.3f} s")
    if not exact:
        missed.append("a replayed row differs from the hybrid stage of its inputs")
    for line in missed:
        print("MISSED:", line)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
