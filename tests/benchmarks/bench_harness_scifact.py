"""Document-level BM25 on BEIR SciFact: the harness against the direct bm25s + pytrec_eval path.

Run with ``python tests/benchmarks/bench_harness_scifact.py [--scifact DIR] [--repeats N]``.

Both paths use the same analysis and parameters (bm25s ``lucene`` scoring, k1 = 1.5, b = 0.75,
English stopwords, the Snowball English stemmer from PyStemmer, title + text) and retrieve 100
documents per test query. The harness path reads the dataset adapted by
``groundkit.adapters.beir.adapt_beir_dataset`` (adapting is a one-time conversion, not timed)
and runs ``run_evaluation`` with ``level="document"`` and a whole-document chunker, then writes
the report and the items file: the timing includes loading, quote resolution, scoring, the
bootstrap intervals and the writing. The direct path reads BEIR's JSON Lines, indexes,
retrieves and scores with pytrec_eval.

Checks (exit status 1 on a miss): the harness's nDCG@10 is within 0.002 of the direct path's,
and its wall time is at most twice the direct path's (best of N runs each, alternated).
Reference on this data (shared/README.md): nDCG@10 0.6863, recall@100 0.9127, MRR 0.6528.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import pytrec_eval
import Stemmer

from groundkit.adapters.beir import adapt_beir_dataset
from groundkit.harness import run_config_from_dict, run_evaluation, write_items
from groundkit.judgments import dump_report

DEFAULT_SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "beir" / "scifact"
NDCG_TOLERANCE = 0.002
MAX_TIME_RATIO = 2.0
DEPTH = 100


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def direct_path(scifact: Path) -> tuple[dict[str, float], float]:
    """bm25s + pytrec_eval on BEIR's files; returns (mean metrics, seconds)."""
    start = time.perf_counter()
    docs = _read_jsonl(scifact / "corpus.jsonl")
    queries = {q["_id"]: q["text"] for q in _read_jsonl(scifact / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    with (scifact / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    doc_ids = [d["_id"] for d in docs]
    texts = [f"{d.get('title', '')}\n\n{d['text']}" for d in docs]
    stemmer = Stemmer.Stemmer("english")
    model = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    model.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    query_ids = sorted(qrels)
    tokens = bm25s.tokenize(
        [queries[q] for q in query_ids], stopwords="en", stemmer=stemmer, show_progress=False
    )
    results, scores = model.retrieve(tokens, k=DEPTH, show_progress=False, n_threads=1)
    run = {
        q: {
            doc_ids[int(i)]: float(s)
            for i, s in zip(results[row], scores[row], strict=True)
            if s > 0
        }
        for row, q in enumerate(query_ids)
    }
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "recip_rank"})
    per_query = evaluator.evaluate(run)
    means = {
        "ndcg@10": float(np.mean([v["ndcg_cut_10"] for v in per_query.values()])),
        "recall@100": float(np.mean([v["recall_100"] for v in per_query.values()])),
        "mrr": float(np.mean([v["recip_rank"] for v in per_query.values()])),
    }
    return means, time.perf_counter() - start


def harness_path(adapted: Path, out: Path) -> tuple[dict[str, float], float, dict[str, float]]:
    """run_evaluation at document level, report and items written.

    Returns:
        Mean metrics, seconds, and seconds per phase (the report's timings plus writing).
    """
    start = time.perf_counter()
    config = run_config_from_dict(
        {
            "corpus": str(adapted / "corpus"),
            "judgments": str(adapted / "judgments.jsonl"),
            "level": "document",
            "depth": DEPTH,
            "chunker": {"kind": "document"},
            "stages": [{"name": "bm25", "retriever": {"kind": "bm25", "k1": 1.5, "b": 0.75}}],
        }
    )
    report = run_evaluation(config)
    written = time.perf_counter()
    dump_report(report, out / "report.json")
    write_items(report, out / "report.items.jsonl")
    seconds = time.perf_counter() - start
    phases = {
        "load": report.timings.get("load", 0.0),
        "resolve": report.timings.get("resolve", 0.0),
        **report.baseline.timings,
        "compare": report.timings.get("compare", 0.0),
        "write": seconds - (written - start),
    }
    aggregates = report.baseline.aggregates
    means = {m: aggregates[m].mean for m in ("ndcg@10", "recall@100", "mrr")}
    return means, seconds, phases


def main(argv: list[str] | None = None) -> int:
    """Run both paths, print the figures and the checks; 0 when both checks pass."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact", type=Path, default=DEFAULT_SCIFACT)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if not (args.scifact / "corpus.jsonl").is_file():
        print(f"skipped: SciFact not found at {args.scifact}")
        return 0
    with tempfile.TemporaryDirectory(prefix="grk-bench-scifact-") as tmp:
        adapted = Path(tmp) / "adapted"
        adapt_beir_dataset(args.scifact, adapted, split="test")
        direct_times: list[float] = []
        harness_times: list[float] = []
        direct: dict[str, float] = {}
        harness: dict[str, float] = {}
        best_phases: dict[str, float] = {}
        for _ in range(max(1, args.repeats)):
            direct, seconds = direct_path(args.scifact)
            direct_times.append(seconds)
            harness, seconds, phases = harness_path(adapted, Path(tmp))
            if not harness_times or seconds < min(harness_times):
                best_phases = phases
            harness_times.append(seconds)
    best_direct, best_harness = min(direct_times), min(harness_times)
    ratio = best_harness / best_direct
    print("SciFact test, document-level BM25 (k1=1.5, b=0.75, en stopwords, Snowball english)")
    print(f"{'metric':<12}{'direct':>10}{'harness':>10}{'diff':>10}")
    for metric in ("ndcg@10", "recall@100", "mrr"):
        diff = harness[metric] - direct[metric]
        print(f"{metric:<12}{direct[metric]:>10.4f}{harness[metric]:>10.4f}{diff:>+10.4f}")
    print(
        f"wall time (best of {len(direct_times)}): direct {best_direct:.2f} s, "
        f"harness {best_harness:.2f} s (report + items + bootstrap included), "
        f"ratio {ratio:.2f}"
    )
    print("harness phases (s): " + ", ".join(f"{k} {v:.2f}" for k, v in best_phases.items()))
    ndcg_gap = abs(harness["ndcg@10"] - direct["ndcg@10"])
    ok_quality = ndcg_gap <= NDCG_TOLERANCE
    ok_time = ratio <= MAX_TIME_RATIO
    print(f"nDCG@10 gap {ndcg_gap:.4f} <= {NDCG_TOLERANCE}: {'ok' if ok_quality else 'MISS'}")
    print(f"time ratio {ratio:.2f} <= {MAX_TIME_RATIO}: {'ok' if ok_time else 'MISS'}")
    return 0 if ok_quality and ok_time else 1


if __name__ == "__main__":
    sys.exit(main())
