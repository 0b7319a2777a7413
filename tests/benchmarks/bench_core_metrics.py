"""Benchmark the chunk-level and document-level metrics on 100,000 queries x 100 hits.

Synthetic data (fixed seed): 500,000 documents, 1-5 gold quotes per query (some with two
occurrences), 100 ranked hits per query of which about 10% fall in a gold document.

* Chunk level: ``score_table`` for nDCG@10 + recall@100 + MRR from columnar tables
  (target: < 2 s, no warm-up), plus the conversion to ``{query: {metric: value}}``.
* Document level: ``evaluate_trec`` against ``pytrec_eval`` (pytrec-eval-terrier) on the same
  qrels and run: time ratio and agreement (max absolute difference per query) on
  ``ndcg_cut_10``, ``recall_100`` and ``recip_rank``.

Exits 1 when the chunk-level target is missed or the agreement exceeds 1e-9.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from groundkit.judgments import evaluate_trec
from groundkit.judgments.metrics import GoldTable, HitTable, score_table

N_QUERIES = 100_000
DEPTH = 100
N_DOCS = 500_000
TARGET_SECONDS = 2.0
AGREEMENT = 1e-9
SEED = 20240611


def _chunk_tables(rng: np.random.Generator) -> tuple[GoldTable, HitTable]:
    doc_ids = tuple(f"d{i}" for i in range(N_DOCS))
    quotes = rng.integers(1, 6, N_QUERIES)
    n_quotes = int(quotes.sum())
    quote_offsets = np.concatenate([[0], np.cumsum(quotes)])
    spans_per_quote = np.where(rng.random(n_quotes) < 0.1, 2, 1)
    n_spans = int(spans_per_quote.sum())
    span_offsets = np.concatenate([[0], np.cumsum(spans_per_quote)])
    span_docs = rng.integers(0, N_DOCS, n_spans)
    span_starts = rng.integers(0, 5_000, n_spans)
    span_ends = span_starts + rng.integers(40, 300, n_spans)
    gold = GoldTable(
        query_ids=tuple(f"q{i}" for i in range(N_QUERIES)),
        quote_offsets=quote_offsets,
        grades=rng.integers(1, 4, n_quotes),
        span_offsets=span_offsets,
        span_docs=span_docs,
        span_starts=span_starts,
        span_ends=span_ends,
        doc_ids=doc_ids,
    )
    n_hits = N_QUERIES * DEPTH
    docs = rng.integers(0, N_DOCS, n_hits)
    hit_query = np.repeat(np.arange(N_QUERIES), DEPTH)
    near = rng.random(n_hits) < 0.1
    first_span = span_offsets[quote_offsets[:-1]]
    spans_of_query = span_offsets[quote_offsets[1:]] - first_span
    pick = first_span[hit_query[near]] + (
        rng.random(int(near.sum())) * spans_of_query[hit_query[near]]
    ).astype(np.int64)
    docs[near] = span_docs[pick]
    starts = rng.integers(0, 5_000, n_hits)
    hits = HitTable(
        query_ids=gold.query_ids,
        offsets=np.arange(0, n_hits + 1, DEPTH),
        docs=docs,
        starts=starts,
        ends=starts + rng.integers(100, 1_000, n_hits),
        doc_ids=doc_ids,
    )
    return gold, hits


def _doc_level_data(
    rng: np.random.Generator,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(N_QUERIES):
        docs = rng.choice(N_DOCS, size=DEPTH + 8, replace=False)
        judged = docs[DEPTH - 4 :]  # a few retrieved, a few not
        levels = rng.integers(0, 3, len(judged))
        levels[0] = max(int(levels[0]), 1)
        qrels[f"q{q}"] = {
            f"d{d}": int(v) for d, v in zip(judged.tolist(), levels.tolist(), strict=True)
        }
        # Scores with ties (rounded) to exercise trec_eval's tie-breaking on both sides.
        scores = np.round(rng.random(DEPTH), 2)
        run[f"q{q}"] = {
            f"d{d}": float(s) for d, s in zip(docs[:DEPTH].tolist(), scores.tolist(), strict=True)
        }
    return qrels, run


def main() -> int:
    """Run the benchmark; return the exit status."""
    rng = np.random.default_rng(SEED)
    gold, hits = _chunk_tables(rng)
    metrics = ["ndcg@10", "recall@100", "mrr"]
    started = time.perf_counter()
    table = score_table(gold, hits, metrics)
    chunk_seconds = time.perf_counter() - started
    started = time.perf_counter()
    per_query = table.to_dict()
    dict_seconds = time.perf_counter() - started
    means = table.mean()
    print(f"chunk level: {N_QUERIES:,} queries x {DEPTH} hits, {', '.join(metrics)}")
    print(f"  score_table      {chunk_seconds:.3f} s  (target < {TARGET_SECONDS} s)")
    print(f"  to_dict          {dict_seconds:.3f} s  ({len(per_query):,} queries)")
    print("  means            " + ", ".join(f"{k}={v:.4f}" for k, v in means.items()))

    qrels, run = _doc_level_data(rng)
    measures = ["ndcg_cut.10", "recall.100", "recip_rank"]
    started = time.perf_counter()
    ours = evaluate_trec(qrels, run, measures)
    ours_seconds = time.perf_counter() - started
    import pytrec_eval

    started = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "recip_rank"})
    reference = evaluator.evaluate(run)
    reference_seconds = time.perf_counter() - started
    worst = 0.0
    for name in ("ndcg_cut_10", "recall_100", "recip_rank"):
        difference = max(abs(ours.per_query[q][name] - reference[q][name]) for q in reference)
        worst = max(worst, difference)
        print(f"  {name:<12} max |groundkit - pytrec_eval| = {difference:.3g}")
    missing = set(reference) ^ set(ours.per_query)
    print(f"document level: {N_QUERIES:,} queries x {DEPTH} documents")
    print(f"  evaluate_trec    {ours_seconds:.3f} s")
    print(f"  pytrec_eval      {reference_seconds:.3f} s")
    print(f"  ratio groundkit / pytrec_eval = {ours_seconds / reference_seconds:.2f}")
    failed = False
    if chunk_seconds >= TARGET_SECONDS:
        print(f"FAILED: chunk-level scoring took {chunk_seconds:.3f} s >= {TARGET_SECONDS} s")
        failed = True
    if worst > AGREEMENT or missing:
        print(
            f"FAILED: disagreement with pytrec_eval ({worst:.3g}; "
            f"query sets differ: {len(missing)})"
        )
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
