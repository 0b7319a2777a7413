"""End-to-end harness runs on a small corpus: report contract, determinism, levels, items."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from groundkit.harness import (
    Bm25Retriever,
    EvalSettings,
    HarnessError,
    HybridRetriever,
    PredictionsRetriever,
    RunConfig,
    StageConfig,
    evaluate,
    load_items,
    run_evaluation,
    write_items,
)
from groundkit.harness.analysis import detection_limits
from groundkit.harness.run import stage_config_hash
from groundkit.judgments import (
    CharsChunker,
    DocumentChunker,
    GoldQuote,
    Judgment,
    dump_judgments,
    dump_report,
    load_report,
)
from groundkit.judgments.report import MEASURED_FIGURES, check_report, report_to_json

DOCS = {
    "alpha.md": (
        "Cats purr when they are content. A cat sleeps for sixteen hours a day.\n\n"
        "Dogs bark at strangers and wag their tails at friends."
    ),
    "beta.md": (
        "The refund window is thirty days from delivery. Refunds go back to the original "
        "payment method within five business days."
    ),
    "gamma.md": "Servers must be patched within seven days of a critical security advisory.",
    "delta.md": (
        "Cats purr when they are content. A cat sleeps for sixteen hours a day.\n\n"
        "Dogs bark at strangers and wag their tails at friends."
    ),
}

JUDGMENTS = [
    Judgment(
        query_id="cat-sleep",
        query="How many hours does a cat sleep?",
        gold=(GoldQuote(doc="alpha.md", quote="A cat sleeps for sixteen hours a day."),),
    ),
    Judgment(
        query_id="refund-window",
        query="How long is the refund window?",
        gold=(
            GoldQuote(
                doc="beta.md", quote="The refund window is thirty days from delivery.", grade=2
            ),
        ),
    ),
    Judgment(
        query_id="patching",
        query="When must servers be patched after an advisory?",
        gold=(GoldQuote(doc="gamma.md", quote="within seven days"),),
    ),
    Judgment(
        query_id="no-answer", query="What is the office wifi password?", category="unanswerable"
    ),
]


def _write_inputs(folder: Path) -> tuple[Path, Path]:
    corpus = folder / "corpus"
    corpus.mkdir()
    for name, text in DOCS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    judgments = folder / "judgments.jsonl"
    dump_judgments(JUDGMENTS, judgments)
    return corpus, judgments


def _settings(**kwargs: object) -> EvalSettings:
    base: dict[str, object] = {
        "chunker": CharsChunker(size=80, overlap=10),
        "bootstrap": {"resamples": 200, "seed": 3},
    }
    base.update(kwargs)
    return EvalSettings.model_validate(base)


def _strip_volatile(report_json: str) -> dict[str, object]:
    data: dict[str, Any] = json.loads(report_json)
    data["run"].pop("created_at")
    data.pop("timings")
    for stage in data["stages"]:
        stage.pop("timings")
        for key in MEASURED_FIGURES:  # clock and kernel figures vary; the counts do not
            stage["cost"].pop(key)
    return data


def test_bm25_run_passes_the_contract_and_round_trips(tmp_path: Path) -> None:
    report = evaluate(DOCS, JUDGMENTS, _settings())
    assert [s.name for s in report.stages] == ["bm25"]
    stage = report.stages[0]
    assert stage.baseline
    assert stage.kind == "bm25"
    assert stage.error is None
    assert [q.query_id for q in stage.queries] == ["cat-sleep", "refund-window", "patching"]
    assert check_report(json.loads(report_to_json(report))) == []
    path = tmp_path / "report.json"
    dump_report(report, path)
    assert load_report(path) == report
    assert stage.chunk_count is not None
    assert stage.chunk_count >= 4
    assert stage.indexed_documents == 4
    assert stage.retriever["k1"] == 1.5
    assert stage.chunker_record == {"kind": "chars", "size": 80, "overlap": 10}
    top = stage.queries[0]
    # alpha.md and delta.md hold the same text: tied, trec_eval ranks the higher id first,
    # so the gold document (alpha.md) is second.
    assert [h.doc for h in top.hits[:2]] == ["delta.md", "alpha.md"]
    assert top.scores["recall@1"] == 0.0
    assert top.scores["recall@3"] == 1.0
    assert set(stage.aggregates) >= {"recall@10", "ndcg@10", "mrr", "recall@2000c"}
    assert report.unanswerable_count == 1
    assert any("unanswerable" in note for note in report.notes)
    assert any("not comparable to published BEIR" in note for note in report.notes)
    assert any("Detection limit" in note for note in report.notes)


def test_duplicates_are_marked(tmp_path: Path) -> None:
    report = evaluate(DOCS, JUDGMENTS, _settings(chunker=DocumentChunker()))
    hits = report.stages[0].queries[0].hits
    docs = [h.doc for h in hits]
    assert set(docs[:2]) == {"alpha.md", "delta.md"}  # identical texts, equal BM25 scores
    assert docs[:2] == ["delta.md", "alpha.md"]  # tie broken as trec_eval: id descending
    assert hits[0].duplicate_of is None
    assert hits[1].duplicate_of == 1


def test_run_is_deterministic(tmp_path: Path) -> None:
    corpus, judgments = _write_inputs(tmp_path)
    config = RunConfig(
        corpus=corpus,
        judgments=judgments,
        chunker=CharsChunker(size=60, overlap=15),
        stages=[
            StageConfig(
                name="bm25-tuned",
                retriever=Bm25Retriever(k1=0.9, b=0.4),
                chunker=CharsChunker(size=40, overlap=0),
            ),
            StageConfig(name="fused", retriever=HybridRetriever(stages=["bm25", "bm25-tuned"])),
        ],
        bootstrap={"resamples": 300},
    )
    first = report_to_json(run_evaluation(config, command=["grk", "eval", "run"]))
    second = report_to_json(run_evaluation(config, command=["grk", "eval", "run"]))
    assert True  # created_at may or may not differ within one second
    assert _strip_volatile(first) == _strip_volatile(second)
    report = json.loads(first)
    assert report["run"]["command"] == ["grk", "eval", "run"]
    assert report["run"]["judgments_source"] == str(judgments)
    assert "groundkit-cli" in report["run"]["package_versions"]
    assert "bm25s" in report["run"]["package_versions"]
    names = [s["name"] for s in report["stages"]]
    assert names == ["bm25", "bm25-tuned", "fused"]
    fused = report["stages"][2]
    assert [c["metric"] for c in fused["comparisons"]] == report["run"]["headline_metrics"]
    for comparison in fused["comparisons"]:
        assert comparison["verdict"] in ("better", "worse", "inconclusive")
        assert comparison["p_holm"] >= comparison["p_value"]


def test_document_level_scores_documents(tmp_path: Path) -> None:
    report = evaluate(
        DOCS, JUDGMENTS, _settings(level="document", chunker=CharsChunker(size=40, overlap=0))
    )
    assert report.run.level == "document"
    assert report.run.budgets == []
    assert report.run.headline_metrics == ["ndcg@10", "recall@100", "mrr"]
    stage = report.stages[0]
    for result in stage.queries:
        docs = [h.doc for h in result.hits]
        assert len(docs) == len(set(docs)), "hits are collapsed to documents"
        for hit in result.hits:
            assert (hit.start, hit.end) == (0, len(DOCS[hit.doc]))
    refund = stage.queries[1]
    assert refund.hits[0].doc == "beta.md"
    assert refund.scores["mrr"] == 1.0
    assert refund.scores["ndcg@10"] == 1.0
    assert "map" in refund.scores
    assert "hit@1" in refund.scores
    assert any("trec_eval semantics" in note for note in report.notes)


def test_evidence_traces_on_a_hand_built_case() -> None:
    # gamma.md = "Servers must be patched within seven days of a critical security advisory."
    # With 40-character chunks the first cut moves back to the word end at 36 ("...seven"),
    # so the quote "within seven days" (24-41) has 12 of its 17 characters in chunk (0, 36).
    report = evaluate(DOCS, JUDGMENTS, _settings(chunker=CharsChunker(size=40, overlap=0)))
    stage = report.stages[0]
    patching = next(q for q in stage.queries if q.query_id == "patching")
    trace = patching.evidence[0]
    assert trace.gold_index == 0
    assert trace.doc_indexed is True
    assert DOCS["gamma.md"].index("within seven days") == 24
    assert trace.best_chunk_share == pytest.approx(12 / 17)
    first = next(
        i for i, h in enumerate(patching.hits) if (h.doc, h.start, h.end) == ("gamma.md", 0, 36)
    )
    assert trace.first_rank == first + 1
    assert trace.best_chunk_rank == first + 1
    assert trace.shares_query_term is True  # "servers", "patched"
    assert trace.tokens_before_quote is None  # not a dense stage
    # The cat quote (offsets 33-70 of alpha.md) straddles two 40-character chunks.
    cat = stage.queries[0].evidence[0]
    text = DOCS["alpha.md"]
    start = text.index("A cat sleeps")
    end = start + len("A cat sleeps for sixteen hours a day.")
    cuts = [(h.start, h.end) for h in stage.queries[0].hits if h.doc == "alpha.md"]
    best = max(max(0, min(e, end) - max(s, start)) for s, e in cuts) / (end - start)
    assert cat.best_chunk_share is not None
    assert cat.best_chunk_share >= best - 1e-12
    assert 0.0 < cat.best_chunk_share < 1.0


def test_external_stage_traces_are_not_measurable(tmp_path: Path) -> None:
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(
        json.dumps({"query_id": "patching", "hits": [{"doc": "gamma.md", "start": 0, "end": 30}]})
        + "\n",
        encoding="utf-8",
    )
    settings = _settings(
        stages=[StageConfig(name="mine", retriever=PredictionsRetriever(path=predictions))]
    )
    report = evaluate(DOCS, JUDGMENTS, settings)
    mine = report.stage("mine")
    patching = next(q for q in mine.queries if q.query_id == "patching")
    trace = patching.evidence[0]
    assert trace.first_rank == 1
    assert trace.doc_indexed is None
    assert trace.best_chunk_share is None
    assert trace.best_chunk_rank is None
    assert trace.shares_query_term is None
    assert [q.missing for q in mine.queries] == [True, True, False]
    assert all(v == 0.0 for v in mine.queries[0].scores.values())
    assert any("'mine': 2 of 3 queries got no hits" in note for note in report.notes)
    assert mine.chunk_count is None
    assert mine.chunker is None


def test_items_round_trip(tmp_path: Path) -> None:
    settings = _settings(stages=[StageConfig(name="tuned", retriever=Bm25Retriever(k1=1.2))])
    report = evaluate(DOCS, JUDGMENTS, settings)
    path = tmp_path / "run.items.jsonl"
    write_items(report, path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert set(lines[0]) == {
        "stage",
        "config",
        "config_hash",
        "corpus_fingerprint",
        "judgments_fingerprint",
        "cost",
    }
    assert set(lines[1]) == {"stage", "query_id", "scores", "missing"}
    items = load_items(path)
    assert items.stage_names == ["bm25", "tuned"]
    tuned_config = settings.stage("tuned")
    assert items.stage("tuned").config_hash == stage_config_hash(tuned_config)
    for stage in items.stages:
        assert stage.corpus_fingerprint == report.run.corpus_fingerprint
        assert stage.judgments_fingerprint == report.run.judgments_fingerprint
    last = items.scores(metric="recall@10")
    assert last == {q.query_id: q.scores["recall@10"] for q in report.stage("tuned").queries}
    assert (
        items.scores("bm25", metric="mrr")["cat-sleep"] == report.baseline.queries[0].scores["mrr"]
    )
    with pytest.raises(HarnessError, match="no metric 'nope'"):
        items.scores(metric="nope")
    with pytest.raises(HarnessError, match="no stage 'x'"):
        items.scores("x", metric="mrr")


def test_items_without_fingerprints_are_still_read(tmp_path: Path) -> None:
    # A file written before items carried fingerprints: the same lines without the two keys.
    report = evaluate(DOCS, JUDGMENTS, _settings())
    path = tmp_path / "old.items.jsonl"
    write_items(report, path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line.pop("corpus_fingerprint", None)
        line.pop("judgments_fingerprint", None)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    items = load_items(path)
    assert items.stage().corpus_fingerprint is None
    assert items.stage().judgments_fingerprint is None
    assert items.scores(metric="mrr") == {
        q.query_id: q.scores["mrr"] for q in report.baseline.queries
    }


EMPTY_CONFIG_HASH = (
    "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"  # SHA-256 of "{}"
)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"stage": "a", "query_id": "q", "scores": {"m": 1}, "missing": false}\n',
            ":1: q: row of stage 'a'",
        ),
        ('{"stage": "a", "config": {}, "config_hash": "00"}\n', ":1: 'config_hash' must be"),
        ('{"stage": "a", "config": {}, "config_hash": "' + "0" * 64 + '"}\n', "does not match"),
        (
            '{"stage": "a", "config": {}, "config_hash": "' + EMPTY_CONFIG_HASH + '", '
            '"corpus_fingerprint": "' + "0" * 64 + '", "judgments_fingerprint": "xyz"}\n',
            ":1: 'judgments_fingerprint' must be 64",
        ),
        (
            '{"stage": "a", "config": {}, "config_hash": "' + EMPTY_CONFIG_HASH + '", '
            '"corpus_fingerprint": "' + "0" * 64 + '"}\n',
            ":1: not an items line",
        ),
        ("[1]\n", ":1:"),
        ("", "no stage"),
    ],
)
def test_items_errors_name_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.items.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(HarnessError, match=message):
        load_items(path)


def test_detection_limits_and_no_answerable_query() -> None:
    report = evaluate(
        DOCS, JUDGMENTS, _settings(stages=[StageConfig(name="t", retriever=Bm25Retriever(b=0.2))])
    )
    limits = detection_limits(report)
    assert limits.query_count == 3
    assert limits.unpaired > 0.5  # three queries can tell almost nothing apart
    assert set(limits.paired) == {"t"}
    assert set(limits.paired["t"]) == set(report.run.headline_metrics)
    with pytest.raises(HarnessError, match="no answerable query"):
        evaluate(DOCS, [JUDGMENTS[-1]], _settings())


def test_progress_callback_sees_every_phase() -> None:
    phases: list[str] = []
    evaluate(DOCS, JUDGMENTS, _settings(), progress=lambda phase, done, total: phases.append(phase))
    for phase in (
        "resolve",
        "bm25: chunk",
        "bm25: index",
        "bm25: retrieve",
        "bm25: score",
        "compare",
    ):
        assert phase in phases


def test_unresolved_quotes_are_noted() -> None:
    judgments = [
        *JUDGMENTS[:3],
        Judgment(
            query_id="typo",
            query="refund window",
            gold=(GoldQuote(doc="beta.md", quote="The refund window is ninety years."),),
        ),
    ]
    report = evaluate(DOCS, judgments, _settings())
    assert any("1 of 4 gold quotes were not found" in note for note in report.notes)
    typo = next(q for q in report.baseline.queries if q.query_id == "typo")
    assert typo.scores["recall@10"] == 0.0
    assert typo.evidence[0].first_rank is None
    assert typo.evidence[0].best_chunk_share is None
    assert typo.evidence[0].doc_indexed is True


def test_gold_document_missing_from_the_corpus() -> None:
    judgments = [
        *JUDGMENTS[:3],
        Judgment(
            query_id="ghost",
            query="cats",
            gold=(GoldQuote(doc="missing.md", quote="A cat sleeps"),),
        ),
    ]
    for level in ("chunk", "document"):
        report = evaluate(DOCS, judgments, _settings(level=level))
        ghost = next(q for q in report.baseline.queries if q.query_id == "ghost")
        assert ghost.evidence[0].doc_indexed is False
        assert ghost.evidence[0].first_rank is None
        assert ghost.evidence[0].best_chunk_share is None
        assert all(v == 0.0 for v in ghost.scores.values())
        assert "1 gold document is not in the corpus: 'missing.md'." in report.notes


def test_collector_runs_less_often_during_a_run_and_is_restored() -> None:
    thresholds: list[tuple[int, int, int]] = []
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        evaluate(
            DOCS, JUDGMENTS, _settings(), progress=lambda *_: thresholds.append(gc.get_threshold())
        )
        after_run = gc.get_threshold()
        with pytest.raises(HarnessError, match="no answerable query"):
            evaluate(DOCS, [JUDGMENTS[-1]], _settings())
        after_failure = gc.get_threshold()
    finally:
        gc.set_threshold(*before)
    assert after_run == after_failure == (700, 10, 10)
    assert thresholds
    assert all(t[0] >= 100_000 for t in thresholds)
    assert gc.isenabled()


def test_gold_document_id_in_decomposed_unicode() -> None:
    # Resolution accepts a judgment naming a document in NFD when the corpus id is NFC
    # (ids written on macOS); scoring, traces and qrels must then use the corpus's id.
    import unicodedata

    composed = "caf\u00e9.md"
    decomposed = unicodedata.normalize("NFD", composed)
    docs = {**DOCS, composed: "The cafe opens at seven in the morning on weekdays."}
    judgments = [
        *JUDGMENTS[:3],
        Judgment(
            query_id="cafe",
            query="When does the cafe open?",
            gold=(GoldQuote(doc=decomposed, quote="opens at seven"),),
        ),
    ]
    for level in ("chunk", "document"):
        report = evaluate(docs, judgments, _settings(level=level))
        cafe = next(q for q in report.baseline.queries if q.query_id == "cafe")
        assert cafe.hits[0].doc == composed
        assert cafe.scores["recall@10"] == 1.0
        assert cafe.evidence[0].first_rank == 1
        assert cafe.evidence[0].doc_indexed is True
        info = next(q for q in report.queries if q.query_id == "cafe")
        assert info.gold[0].doc == composed


def test_stage_verdict_needs_an_exact_paired_test_not_only_the_bootstrap() -> None:
    # Four queries that all improve: every bootstrap resample agrees (interval [1, 1],
    # bootstrap p = 2 / (B + 1)), but four same-sign flips have exact sign-flip p = 0.125.
    # A report verdict of "better" from four queries would be noise.
    import numpy as np

    from groundkit.harness.analysis._stats import compare_stages
    from groundkit.judgments import StageReport

    settings = EvalSettings(bootstrap={"resamples": 500})
    metrics = list(settings.headline_metrics)
    ids = ["q1", "q2", "q3", "q4"]
    values = {
        "bm25": np.zeros((4, len(metrics))),
        "dense": np.ones((4, len(metrics))),
    }
    stages = [
        StageReport(name="bm25", kind="bm25", baseline=True),
        StageReport(name="dense", kind="dense"),
    ]
    compared = compare_stages(stages, values, ids, metrics, settings)
    for comparison in compared[1].comparisons:
        assert comparison.low > 0.0  # the interval leans one way...
        assert comparison.p_holm >= 0.125  # ...but four queries can never be significant
        assert comparison.verdict == "inconclusive"
        assert comparison.outcome == "too few queries"
    # With enough queries the same consistent gain is a verdict.
    many = [f"q{i}" for i in range(12)]
    values = {"bm25": np.zeros((12, len(metrics))), "dense": np.ones((12, len(metrics)))}
    compared = compare_stages(stages, values, many, metrics, settings)
    assert {c.verdict for c in compared[1].comparisons} == {"better"}
