"""`grk eval demo`: the README's first command, offline, on the packaged handbook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.cli.run import _run as eval_run
from groundkit.harness import load_items
from groundkit.judgments import load_report
from groundkit.judgments.report import check_report


def test_demo_bm25_stages_tell_a_story(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["eval", "demo", "--out", str(out), "--no-dense", "--resamples", "400"]
    )
    assert result.exit_code == 0, result.output
    for text in ("bm25 (baseline)", "bm25-chars200", "bm25-document", "recall@2000c", "notes"):
        assert text in result.output
    assert "▲ better" in result.output
    assert "▼ worse" in result.output
    assert "detection limit" in result.output
    assert str(out / "report.json") in result.output
    data = json.loads((out / "report.json").read_text())
    assert check_report(data) == []
    report = load_report(out / "report.json")
    assert [s.name for s in report.stages] == ["bm25", "bm25-chars200", "bm25-document"]
    verdicts = {(c.candidate, c.metric): c.verdict for s in report.stages for c in s.comparisons}
    # Small windows cut quotes apart; whole documents rank well but blow the context budget.
    assert verdicts[("bm25-chars200", "recall@10")] == "worse"
    assert verdicts[("bm25-document", "recall@10")] == "better"
    assert verdicts[("bm25-document", "recall@2000c")] == "worse"
    assert report.notes
    assert [s.name for s in load_items(out / "items.jsonl").stages] == [
        "bm25",
        "bm25-chars200",
        "bm25-document",
    ]
    # The demo shows each stage's cost: real figures, batch-attributed latency said so.
    assert "cost and latency per stage" in result.output
    assert "batch seconds shared evenly" in result.output
    for stage in report.stages:
        cost = stage.cost
        assert cost is not None
        assert cost.latency_basis == "batch"
        assert cost.chunks_indexed == stage.chunk_count
        assert cost.usd is None
        assert cost.index_seconds is not None
        assert cost.index_seconds > 0


def test_demo_without_arguments_writes_to_the_default_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(eval_run, "dense_ready", lambda: False)
    result = CliRunner().invoke(cli, ["eval", "demo"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "groundkit-demo" / "report.json").is_file()
    assert (tmp_path / "groundkit-demo" / "items.jsonl").is_file()
    page = tmp_path / "groundkit-demo" / "report.html"
    assert page.is_file()
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "bm25-document" in text
    # The page is named where a reader looks next: the html line and the next-step hint.
    assert "html:   groundkit-demo/report.html" in result.output
    assert "next: open groundkit-demo/report.html in a browser" in result.output
    assert "groundkit-cli[dense]" in result.output


def test_demo_no_html_writes_no_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eval_run, "dense_ready", lambda: False)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["eval", "demo", "--out", str(out), "--no-html"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["items.jsonl", "report.json"]
    assert "report.html" not in result.output
    assert "next: grk eval compare" in result.output


def test_demo_html_is_guarded_like_every_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file of the user's own at report.html is not replaced without --force; nothing written.
    monkeypatch.setattr(eval_run, "dense_ready", lambda: False)
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("my notes", encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", "demo", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "report.html" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["report.html"]
    assert (out / "report.html").read_text(encoding="utf-8") == "my notes"


def test_demo_refuses_dense_without_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(eval_run, "dense_ready", lambda: False)
    result = CliRunner().invoke(cli, ["eval", "demo", "--out", str(tmp_path), "--dense"])
    assert result.exit_code == 2
    assert "groundkit-cli[dense]" in result.output


def test_demo_out_must_be_a_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(cli, ["eval", "demo", "--out", str(blocker / "sub"), "--no-dense"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


@pytest.mark.dense
@pytest.mark.slow
def test_demo_with_dense_and_hybrid(tmp_path: Path) -> None:
    if not eval_run.dense_ready():
        pytest.skip("the dense extra is not installed")
    result = CliRunner().invoke(cli, ["eval", "demo", "--out", str(tmp_path), "--resamples", "300"])
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "report.json")
    assert [s.name for s in report.stages][-2:] == ["dense", "hybrid"]
    assert report.stage("hybrid").retriever["stages"] == ["bm25", "dense"]
    dense, rerank = report.stage("dense").cost, report.stage("rerank").cost
    assert dense is not None
    assert dense.embedding_calls is not None
    assert dense.embedding_calls >= report.answerable_count  # the queries, at least
    assert rerank is not None
    assert rerank.model_calls is not None
    assert rerank.model_calls > 0
