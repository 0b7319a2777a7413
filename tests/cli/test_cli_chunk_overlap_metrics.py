"""The chunk overlap metrics end to end: `grk eval run --metric span_iou@3 ...` and the harness.

Each query's recorded value equals the brute-force character-set computation of
``tests/core_judgments/test_core_chunk_overlap_metrics.py`` on the stage's own chunks and hits.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.core_judgments.test_core_chunk_overlap_metrics import brute_force

from groundkit.cli import cli
from groundkit.harness import EvalSettings, evaluate
from groundkit.judgments import CharsChunker, Corpus, GoldQuote, Judgment, chunk_corpus, load_report
from groundkit.judgments.metrics import GoldItem

FACTS = {
    "leave.md": "Parental leave lasts sixteen weeks at full pay for every new parent.",
    "expenses.md": "Receipts for travel expenses must be filed within thirty days of the trip.",
    "oncall.md": "The on-call engineer acknowledges a page within fifteen minutes, day or night.",
}
FILLER = "Background that rarely answers a question, about teams and schedules. "


def _tiny(root: Path) -> tuple[Path, Path]:
    corpus = root / "corpus"
    corpus.mkdir()
    lines = []
    for number, (name, fact) in enumerate(FACTS.items()):
        (corpus / name).write_text(FILLER * (number + 1) + fact + " " + FILLER, encoding="utf-8")
        query_id = "q-" + name.removesuffix(".md")
        lines.append(
            {"query_id": query_id, "query": fact[:40], "gold": [{"doc": name, "quote": fact}]}
        )
    judgments = root / "judgments.jsonl"
    judgments.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return corpus, judgments


def test_grk_eval_run_reports_the_new_metrics(tmp_path: Path) -> None:
    corpus, judgments = _tiny(tmp_path)
    report_path = tmp_path / "report.json"
    metrics = ["span_iou@3", "span_iou_chroma@3", "span_precision_chroma@3"]
    args = ["eval", "run", "--corpus", str(corpus), "--judgments", str(judgments)]
    args += ["--report", str(report_path), "--chunker", "chars:60:25", "--resamples", "50"]
    for metric in metrics:
        args += ["--metric", metric]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = load_report(report_path)
    stage = report.baseline
    assert stage.chunker is not None
    loaded = Corpus.load(corpus)
    chunks = [(c.doc, c.start, c.end) for c in chunk_corpus(loaded, stage.chunker)]
    gold = {
        q.query_id: [GoldItem(spans=tuple((g.doc, s, e) for s, e in g.spans)) for g in q.gold]
        for q in report.queries
    }
    totals = dict.fromkeys([*metrics, "precision_omega"], 0.0)
    for query in stage.queries:
        hits = [(h.doc, h.start, h.end) for h in query.hits]
        expected = brute_force(gold[query.query_id], hits, 3, chunks)
        for name in totals:  # the brute force also gives span_recall and span_precision
            value = expected[name]
            assert query.scores[name] == pytest.approx(value, abs=1e-12), name
            totals[name] += value
    assert 0.0 < totals["precision_omega"] < len(stage.queries)  # overlapping chunks: Ω < 1
    for name, total in totals.items():
        assert stage.aggregates[name].mean == pytest.approx(total / len(stage.queries))


def test_precision_omega_is_not_a_headline_metric(tmp_path: Path) -> None:
    corpus, judgments = _tiny(tmp_path)
    args = ["eval", "run", "--corpus", str(corpus), "--judgments", str(judgments)]
    args += ["--report", str(tmp_path / "r.json"), "--metric", "precision_omega"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "precision_omega" in lines[0]
    assert "--metric" in lines[0]
    bad = CliRunner().invoke(cli, [*args[:-1], "span_iou@0"])
    assert bad.exit_code == 2
    assert len(bad.output.strip().splitlines()) == 1
    assert "span_iou@0" in bad.output


def test_a_stage_without_a_chunk_list_does_not_record_precision_omega() -> None:
    texts = {name: FILLER + fact for name, fact in FACTS.items()}
    judgments = [
        Judgment(
            query_id="q-" + name.removesuffix(".md"),
            query=fact[:40],
            gold=[GoldQuote(doc=name, quote=fact)],
        )
        for name, fact in FACTS.items()
    ]

    def mine(query: str) -> list[tuple[str, int, int]]:
        return [("leave.md", 0, 30)]

    settings = EvalSettings(chunker=CharsChunker(size=50, overlap=0), bootstrap={"resamples": 50})
    report = evaluate(texts, judgments, settings, stages={"mine": mine})
    baseline, own = report.baseline, report.stage("mine")
    assert all("precision_omega" in q.scores for q in baseline.queries)
    assert "precision_omega" in baseline.aggregates
    assert not any("precision_omega" in q.scores for q in own.queries)
    assert "precision_omega" not in own.aggregates
    assert all(math.isfinite(v) for q in own.queries for v in q.scores.values())
    assert "span_iou_chroma@10" not in own.aggregates  # opt-in: only when asked for
