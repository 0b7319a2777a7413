"""trec_eval's arithmetic, operation for operation: the same doubles, so the same printed digits.

A value printed with four decimals can change when its last bit does (a value on a rounding
boundary). ``evaluate_trec`` must therefore add in trec_eval's order (left to right along a
ranking, query by query in qid order) and take its logarithms from the C library. The
reference below follows trec_eval's C loops (m_ndcg_cut.c, m_map.c, m_P.c, m_recall.c,
m_recip_rank.c and the summary's accumulation) in plain Python floats; the results must be
equal bit for bit, not approximately.
"""

from __future__ import annotations

import math
import random

import pytest

from groundkit.judgments import evaluate_trec
from groundkit.judgments.trec import format_trec_eval


def _ranking(docs: dict[str, float]) -> list[str]:
    # form_res_rels.c: sim descending, ties by docno descending.
    return [
        doc for doc, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)
    ]


def _reference(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> dict[str, float]:
    sums = {"ndcg_cut_10": 0.0, "map": 0.0, "P_5": 0.0, "recall_100": 0.0, "recip_rank": 0.0}
    queries = sorted(q for q in run if q in qrels)
    for query in queries:
        ranked = _ranking(run[query])
        rels = [qrels[query].get(doc, -1) for doc in ranked]
        num_rel = sum(1 for level in qrels[query].values() if level >= 1)
        dcg = 0.0
        for i, gain in enumerate(rels[:10]):
            if gain > 0:
                dcg += gain / math.log2(i + 2)
        ideal = 0.0
        for i, gain in enumerate(
            sorted((g for g in qrels[query].values() if g > 0), reverse=True)[:10]
        ):
            ideal += gain / math.log2(i + 2)
        total = 0.0
        so_far = 0
        for i, level in enumerate(rels):
            if level >= 1:
                so_far += 1
                total += so_far / (i + 1)
        first = next((i for i, level in enumerate(rels) if level >= 1), None)
        values = {
            "ndcg_cut_10": dcg / ideal if ideal > 0 else 0.0,
            "map": total / num_rel if num_rel else 0.0,
            "P_5": sum(1 for level in rels[:5] if level >= 1) / 5,
            "recall_100": sum(1 for level in rels[:100] if level >= 1) / num_rel
            if num_rel
            else 0.0,
            "recip_rank": 1.0 / (first + 1) if first is not None else 0.0,
        }
        for name, value in values.items():
            sums[name] += value
    return {name: total / len(queries) for name, total in sums.items()}


@pytest.mark.parametrize("seed", range(12))
def test_summary_doubles_equal_trec_eval_loops_bit_for_bit(seed: int) -> None:
    rng = random.Random(seed)
    docs = [f"d{n:03d}" for n in range(60)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for number in range(rng.randint(20, 300)):
        query = f"q{number}"
        qrels[query] = {
            doc: rng.choice([0, 1, 1, 2, 3]) for doc in rng.sample(docs, rng.randint(1, 15))
        }
        # Coarse scores: many ties, so the docno tie-break matters.
        run[query] = {doc: float(rng.randint(0, 6)) for doc in rng.sample(docs, rng.randint(1, 40))}
    measures = ["ndcg_cut.10", "map", "P.5", "recall.100", "recip_rank"]
    result = evaluate_trec(qrels, run, measures)
    expected = _reference(qrels, run)
    for name, value in expected.items():
        assert result.summary[name] == value, name  # equal doubles, not approximately
    # And so the printed lines are trec_eval's, digit for digit.
    text = format_trec_eval(result)
    for name, value in expected.items():
        assert f"{name:<22}\tall\t{value:.4f}\n" in text
