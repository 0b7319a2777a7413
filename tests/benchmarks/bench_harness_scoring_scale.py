"""Document-level scoring on SciFact and on a corpus ten times larger, same queries and depth.

Run with ``python tests/benchmarks/bench_harness_scoring_scale.py [--scifact DIR] [--factor N]``.

The larger corpus is SciFact plus ``N - 1`` times as many filler documents, each the words of
a random SciFact document shuffled (same lengths and vocabulary, so they are retrieved, but no
near copies). Both runs use the BM25 baseline at document level, depth 100, on the 300 test
queries: the same number of queries and hits. The scoring phase (``timings["scoring"]``:
collapsing to documents, trec_eval measures, evidence traces, near-duplicate marking, the
per-query results) is split into the near-duplicate marking, timed inside the run, and the
rest.

Checks (exit status 1 on a miss), both about work that must not grow with the corpus:

* the scoring phase without the marking takes at most 1.5 times as long on the larger corpus;
* the marking takes at most 1.5 times as long per character of the distinct retrieved
  documents (it shingles each distinct retrieved document once, so it grows with the text
  retrieved, at most queries x depth documents, not with the documents never retrieved).

The total scoring ratio is printed too: more distinct documents are retrieved from the
larger corpus, and the marking shingles each of them.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from groundkit.adapters.beir import adapt_beir_dataset
from groundkit.harness import EvalSettings, evaluate
from groundkit.harness.analysis import _duplicates
from groundkit.judgments import Corpus, Judgment, load_judgments

DEFAULT_SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "beir" / "scifact"
MAX_RATIO = 1.5


def _filled(texts: dict[str, str], factor: int, seed: int = 0) -> dict[str, str]:
    rng = random.Random(seed)
    ids = list(texts)
    out = dict(texts)
    for i in range(len(texts) * (factor - 1)):
        words = texts[rng.choice(ids)].split()
        rng.shuffle(words)
        out[f"filler-{i:07d}.txt"] = " ".join(words)
    return out


def measure(texts: dict[str, str], judgments: list[Judgment]) -> dict[str, Any]:
    """One document-level run: scoring seconds, marking seconds, hits, distinct texts."""
    spent: list[float] = []
    seen: dict[str, int] = {}
    original = _duplicates.DuplicateFinder.duplicates_in_lists

    def measured(self: _duplicates.DuplicateFinder, *args: Any) -> list[list[int | None]]:
        started = time.perf_counter()
        try:
            return original(self, *args)
        finally:
            spent.append(time.perf_counter() - started)
            distinct = np.unique(args[0]).tolist()
            seen["hits"] = int(args[0].size)
            seen["distinct"] = len(distinct)
            seen["characters"] = sum(len(self._texts[d]) for d in distinct)

    settings = EvalSettings.model_validate(
        {
            "level": "document",
            "depth": 100,
            "chunker": {"kind": "document"},
            "stages": [{"name": "bm25", "retriever": {"kind": "bm25"}}],
        }
    )
    _duplicates.DuplicateFinder.duplicates_in_lists = measured  # type: ignore[method-assign]
    try:
        report = evaluate(texts, judgments, settings)
    finally:
        _duplicates.DuplicateFinder.duplicates_in_lists = original  # type: ignore[method-assign]
    scoring = report.baseline.timings["scoring"]
    return {
        "documents": len(texts),
        "scoring": scoring,
        "marking": sum(spent),
        "rest": scoring - sum(spent),
        "ndcg@10": report.baseline.aggregates["ndcg@10"].mean,
        **seen,
    }


def main(argv: list[str] | None = None) -> int:
    """Run both sizes, print the figures; 0 when both checks pass."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact", type=Path, default=DEFAULT_SCIFACT)
    parser.add_argument("--factor", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    if not (args.scifact / "corpus.jsonl").is_file():
        print(f"skipped: SciFact not found at {args.scifact}")
        return 0
    with tempfile.TemporaryDirectory(prefix="grk-bench-scale-") as tmp:
        adapted = Path(tmp) / "adapted"
        adapt_beir_dataset(args.scifact, adapted, split="test")
        corpus = Corpus.load(adapted / "corpus")
        judgments = load_judgments(adapted / "judgments.jsonl")
    small = {doc: corpus[doc] for doc in corpus}
    large = _filled(small, args.factor)
    results = []
    for texts in (small, large):
        runs = [measure(texts, judgments) for _ in range(max(1, args.repeats))]
        results.append(min(runs, key=lambda r: r["scoring"]))
    print("document-level BM25, depth 100, 300 SciFact test queries (best of each):")
    print(
        f"{'corpus':>10}{'hits':>8}{'distinct':>10}{'chars':>12}{'scoring':>9}{'marking':>9}{'rest':>7}"
    )
    for r in results:
        print(
            f"{r['documents']:>10,}{r['hits']:>8,}{r['distinct']:>10,}{r['characters']:>12,}"
            f"{r['scoring']:>9.3f}{r['marking']:>9.3f}{r['rest']:>7.3f}"
        )
    one, many = results
    total_ratio = many["scoring"] / one["scoring"]
    rest_ratio = many["rest"] / one["rest"]
    per_char = (many["marking"] / many["characters"]) / (one["marking"] / one["characters"])
    print(f"scoring ratio x{args.factor}/x1: {total_ratio:.2f} (nDCG@10 {one['ndcg@10']:.4f})")
    ok_rest = rest_ratio <= MAX_RATIO
    ok_marking = per_char <= MAX_RATIO
    print(
        f"scoring without marking ratio {rest_ratio:.2f} <= {MAX_RATIO}: "
        f"{'ok' if ok_rest else 'MISS'}"
    )
    print(
        f"marking time per distinct retrieved character ratio {per_char:.2f} <= {MAX_RATIO}: "
        f"{'ok' if ok_marking else 'MISS'}"
    )
    return 0 if ok_rest and ok_marking else 1


if __name__ == "__main__":
    sys.exit(main())
