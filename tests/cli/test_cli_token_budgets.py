"""Token budgets (``recall@Nt``, ``ndcg@Nt``) in runs: the run's tokenizer, CLI and Python."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from tests.core_judgments.test_core_token_budgets import _read_within

from groundkit.cli import cli
from groundkit.harness import EvalSettings, evaluate
from groundkit.judgments import EvalReport, GoldQuote, Judgment, dump_judgments, load_report
from groundkit.judgments.corpus import Tokenizer, load_tokenizer

pytest.importorskip("tiktoken")

Span3 = tuple[str, int, int]

_TOPICS = ["refund", "backup", "patch", "badge", "laptop", "invoice", "vendor", "travel"]
_VOCABULARY = [
    "policy", "window", "owner", "review", "ticket", "budget", "deadline", "audit", "team",
    "approval", "request", "manager", "naïve", "façade", "Straße", "東京", "2024-05-01",
    "v3.2.1", "#4711", "§12", "(see)", "e.g.", "~/.config", "🚀", "x86_64",
]  # fmt: skip


def _corpus() -> dict[str, str]:
    """Eight documents of about 3,300 cl100k tokens each: sentences of words drawn at random."""
    rng = random.Random(7)
    docs: dict[str, str] = {}
    for topic in _TOPICS:
        sentences = [
            f"{topic.title()} rule {i}: "
            + " ".join(rng.choice(_VOCABULARY) for _ in range(rng.randint(4, 30)))
            + "."
            for i in range(80)
        ]
        docs[f"{topic}.md"] = "\n".join(sentences)
    return docs


def _judgments(docs: Mapping[str, str]) -> list[Judgment]:
    rng = random.Random(11)
    out = []
    for topic in _TOPICS:
        lines = docs[f"{topic}.md"].split("\n")
        for i in (5, 23, 41):
            words = lines[i].split(": ", 1)[1].rstrip(".").split()
            out.append(
                Judgment(
                    query_id=f"{topic}-{i}",
                    query=f"{topic} " + " ".join(rng.sample(words, min(3, len(words)))),
                    gold=(GoldQuote(doc=f"{topic}.md", quote=lines[i], grade=1 + i % 2),),
                )
            )
    return out


def _write_inputs(folder: Path) -> tuple[dict[str, str], Path, Path]:
    docs = _corpus()
    corpus = folder / "corpus"
    corpus.mkdir()
    for name, text in docs.items():
        (corpus / name).write_text(text, encoding="utf-8")
    judgments = folder / "judgments.jsonl"
    dump_judgments(_judgments(docs), judgments)
    return docs, corpus, judgments


# ---------------------------------------------------------------- brute force


def _brute(
    gold: Sequence[tuple[int, list[Span3]]],
    hits: Sequence[Span3],
    texts: Mapping[str, str],
    tokenizer: Tokenizer,
    budget: int,
) -> tuple[float, float]:
    """``(recall@Nt, ndcg@Nt)``: hits tokenized one by one, the first ``budget`` tokens read."""
    read = _read_within(hits, texts, tokenizer, budget)  # the core tests' brute force
    credited: set[int] = set()
    dcg = 0.0
    for rank, (doc, start, end) in enumerate(read, start=1):
        new = {
            j
            for j, (_, spans) in enumerate(gold)
            if j not in credited
            and any(d == doc and min(end, e) - max(start, s) >= 1 for d, s, e in spans)
        }
        credited |= new
        dcg += max((gold[j][0] for j in new), default=0) / math.log2(rank + 1)
    grades = sorted((grade for grade, _ in gold), reverse=True)[: len(read)]
    ideal = sum(g / math.log2(j + 2) for j, g in enumerate(grades))
    return len(credited) / len(gold), dcg / ideal if ideal else 0.0


def _report_brute(
    report: EvalReport, stage: str, texts: Mapping[str, str], tokenizer: Tokenizer, budget: int
) -> dict[str, tuple[float, float]]:
    gold = {
        q.query_id: [(g.grade, [(g.doc, s, e) for s, e in g.spans]) for g in q.gold]
        for q in report.queries
        if q.answerable
    }
    return {
        result.query_id: _brute(
            gold[result.query_id],
            [(h.doc, h.start, h.end) for h in result.hits],
            texts,
            tokenizer,
            budget,
        )
        for result in report.stage(stage).queries
    }


def _check(report: EvalReport, texts: Mapping[str, str], tokenizer: Tokenizer, budget: int) -> None:
    for stage in report.stages:
        expected = _report_brute(report, stage.name, texts, tokenizer, budget)
        assert len(expected) == 24
        for result in stage.queries:
            recall, ndcg = expected[result.query_id]
            assert result.scores[f"recall@{budget}t"] == pytest.approx(recall, abs=1e-12)
            if f"ndcg@{budget}t" in result.scores:
                assert result.scores[f"ndcg@{budget}t"] == pytest.approx(ndcg, abs=1e-12)
        mean = math.fsum(r for r, _ in expected.values()) / len(expected)
        assert stage.aggregates[f"recall@{budget}t"].mean == pytest.approx(mean, abs=1e-12)


# ---------------------------------------------------------------- the CLI, in a subprocess


def test_grk_eval_run_counts_cl100k_tokens(tmp_path: Path) -> None:
    texts, corpus, judgments = _write_inputs(tmp_path)
    report_path = tmp_path / "report.json"
    flags = [
        "--corpus", str(corpus), "--judgments", str(judgments), "--report", str(report_path),
        "--tokenizer", "cl100k_base", "--chunker", "tokens:256:32",
        "--metric", "recall@1024t", "--metric", "ndcg@1024t", "--metric", "recall@300t",
        "--resamples", "200", "--no-items", "--no-progress",
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "groundkit.cli", "eval", "run", *flags],
        env={**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = load_report(report_path)
    assert report.run.headline_metrics == ["recall@1024t", "ndcg@1024t", "recall@300t"]
    assert report.run.tokenizer is not None
    assert report.run.tokenizer.name == "cl100k_base"
    cl100k = load_tokenizer("cl100k_base")
    _check(report, texts, cl100k, 1024)
    _check(report, texts, cl100k, 300)
    # The budgets bite: 300 tokens read less than 1024, and words would count otherwise.
    bm25 = report.stages[0]
    assert bm25.aggregates["recall@300t"].mean < bm25.aggregates["recall@1024t"].mean
    in_words = _report_brute(report, "bm25", texts, load_tokenizer("words"), 300)
    assert any(r.scores["recall@300t"] != in_words[r.query_id][0] for r in bm25.queries), (
        "the run's tokenizer made no difference: is it passed through?"
    )


# ---------------------------------------------------------------- Python


@pytest.mark.parametrize("tokenizer", ["words", "cl100k_base"])
def test_evaluate_counts_the_settings_tokenizer(tokenizer: str) -> None:
    texts = _corpus()
    data: dict[str, Any] = {
        "chunker": "chars:400:50",
        "headline_metrics": ["recall@150t", "ndcg@150t", "recall@10"],
        "bootstrap": {"resamples": 200, "seed": 1},
    }
    if tokenizer != "words":
        data["tokenizer"] = tokenizer  # left out, the run's default (words) counts
    report = evaluate(texts, _judgments(texts), EvalSettings.model_validate(data))
    _check(report, texts, load_tokenizer(tokenizer), 150)


def test_settings_accept_token_budgets_and_refuse_bad_ones() -> None:
    settings = EvalSettings.model_validate({"headline_metrics": ["recall@1024t", "ndcg@64t"]})
    assert settings.headline_metrics == ["recall@1024t", "ndcg@64t"]
    for bad, message in [
        ("recall@0t", "the budget must be a positive integer without leading zeros"),
        ("span_recall@5t", "token budgets exist only for recall and ndcg"),
    ]:
        with pytest.raises(ValidationError, match=message):
            EvalSettings.model_validate({"headline_metrics": [bad]})
    with pytest.raises(ValidationError, match="has no document-level meaning"):
        EvalSettings.model_validate({"level": "document", "headline_metrics": ["recall@100t"]})


# ---------------------------------------------------------------- one-line errors


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    _, corpus, judgments = _write_inputs(tmp_path_factory.mktemp("inputs"))
    return corpus, judgments


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--metric", "recall@0t"], "error: --metric: metric 'recall@0t': the budget "
         "must be a positive integer without leading zeros"),
        (["--metric", "recall@t"], "error: --metric: unknown metric 'recall@t'"),
        (["--metric", "recall@-1t"], "error: --metric: unknown metric 'recall@-1t'"),
        (["--metric", "span_recall@5t"], "error: --metric: metric "
         "'span_recall@5t': token budgets exist only for recall and ndcg"),
        (["--tokenizer", "gpt-17", "--metric", "recall@1024t"], "error: --tokenizer gpt-17: "
         "unknown tokenizer 'gpt-17' (use words"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_exit_2(
    inputs: tuple[Path, Path], tmp_path: Path, flags: list[str], message: str
) -> None:
    corpus, judgments = inputs
    report = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        [
            "eval", "run", "--corpus", str(corpus), "--judgments", str(judgments),
            "--report", str(report), "--no-items", "--no-progress", *flags,
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(message)
    assert not report.exists()


# ---------------------------------------------------------------- adjudication


def test_adjudication_counts_the_runs_tokens_again(tmp_path: Path) -> None:
    texts, corpus, judgments = _write_inputs(tmp_path)
    report_path = tmp_path / "report.json"
    run = CliRunner().invoke(
        cli,
        [
            "eval", "run", "--corpus", str(corpus), "--judgments", str(judgments),
            "--report", str(report_path), "--tokenizer", "cl100k_base",
            "--chunker", "tokens:64:0", "--metric", "recall@200t", "--resamples", "200",
            "--no-items", "--no-progress",
        ],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    report = load_report(report_path)
    queries = {q.query_id: q for q in report.queries}
    # The judge finds every unjudged top-3 hit relevant: each becomes a gold quote (grade 1).
    rows = []
    for result in report.stage("bm25").queries:
        for hit in result.hits[:3]:
            passage = texts[hit.doc][hit.start : hit.end]
            rows.append({"query": queries[result.query_id].query, "passage": passage,
                         "grades": [3, 3, 3], "reason": "recorded"})  # fmt: skip
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    adjudicate = [
        "eval", "adjudicate", str(report_path), "--stage", "bm25", "--k", "3",
        "--judge", f"recorded:{answers}", "--corpus", str(corpus),
        "--out", str(tmp_path / "adj.json"), "--list", str(tmp_path / "list.jsonl"),
    ]  # fmt: skip
    done = CliRunner().invoke(cli, adjudicate)
    assert done.exit_code == 0, done.output
    adjudicated = load_report(tmp_path / "adj.json")
    cl100k = load_tokenizer("cl100k_base")
    raised = 0
    for result in adjudicated.stage("bm25").queries:
        query = queries[result.query_id]
        gold = [(g.grade, [(g.doc, s, e) for s, e in g.spans]) for g in query.gold]
        spans = [span for _, quote in gold for span in quote]
        # The top-3 hits that touch no gold were judged, each one more quote of grade 1.
        for hit in result.hits[:3]:
            if not any(
                d == hit.doc and min(hit.end, e) - max(hit.start, s) >= 1 for d, s, e in spans
            ):
                gold.append((1, [(hit.doc, hit.start, hit.end)]))
        hits = [(h.doc, h.start, h.end) for h in result.hits]
        recall, _ = _brute(gold, hits, texts, cl100k, 200)
        assert result.adjudicated_scores["recall@200t"] == pytest.approx(recall, abs=1e-12)
        raised += result.adjudicated_scores["recall@200t"] > result.scores["recall@200t"]
    assert raised  # the judged hits count, within the budget only

    # Another tokenizer than the run's cannot count them again: refused before judging.
    data = json.loads(report_path.read_text(encoding="utf-8"))
    data["run"]["tokenizer"]["version"] = "tiktoken 0.0.1, ranks sha256:000000000000"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data), encoding="utf-8")
    adjudicate[2] = str(other)
    adjudicate[adjudicate.index("--out") + 1] = str(tmp_path / "adj2.json")
    refused = CliRunner().invoke(cli, adjudicate)
    assert refused.exit_code == 2, refused.output
    lines = refused.output.strip().splitlines()
    assert len(lines) == 1
    assert "the run counted tokens with cl100k_base tiktoken 0.0.1" in lines[0]
    assert not (tmp_path / "adj2.json").exists()
