"""`grk eval sweep` and ``run_sweep``: expansion, validation, shared work, the family, the front,
resuming (after kill -9 in a real subprocess) and the HTML page in headless Chromium.

A small generated corpus keeps every test fast (BM25 arms; one dense test, marked, shows that
embeddings are computed once per chunk text). The 12-arm demo sweep with hybrid arms is
measured in ``tests/benchmarks/bench_harness_sweep.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from tests.cli._chromium import Browser

import groundkit.harness as harness
from groundkit.cli import cli
from groundkit.cli.html._sweep import render_sweep_html
from groundkit.harness import (
    ConfigError,
    SweepSummary,
    dense_available,
    load_sweep,
    load_sweep_summary,
    run_sweep,
)
from groundkit.harness.run import SharedWork, _pipeline
from groundkit.harness.sweep import SWEEP_SCHEMA_VERSION, arm_paths, pareto_front
from groundkit.judgments import load_report
from groundkit.stats import holm_adjust

_WORDS = [
    "latency",
    "budget",
    "replica",
    "failover",
    "quorum",
    "ledger",
    "invoice",
    "refund",
    "audit",
    "badge",
    "laptop",
    "travel",
    "meal",
    "allowance",
    "deploy",
    "canary",
    "rollback",
    "flag",
    "tier",
    "pager",
    "escalation",
    "review",
    "merge",
    "branch",
    "release",
    "vendor",
    "gift",
    "policy",
    "retention",
    "backup",
    "region",
    "cluster",
    "token",
    "secret",
    "rotation",
]


def _write_inputs(folder: Path, docs: int = 5, queries: int = 24) -> tuple[Path, Path]:
    rng = np.random.default_rng(7)
    corpus = folder / "corpus"
    corpus.mkdir(parents=True)
    texts = {}
    for d in range(docs):
        sentences = [" ".join(rng.choice(_WORDS, 12)).capitalize() + "." for _ in range(40)]
        texts[f"doc-{d}"] = " ".join(sentences)
        (corpus / f"doc-{d}.txt").write_text(texts[f"doc-{d}"], encoding="utf-8")
    lines = []
    for q in range(queries):
        doc = f"doc-{q % docs}"
        start = int(rng.integers(0, len(texts[doc]) - 120))
        quote = texts[doc][start : start + 80].strip()
        words = quote.split()[1:5]
        gold = [{"doc": doc, "quote": quote}]
        lines.append(json.dumps({"query_id": f"q{q}", "query": " ".join(words), "gold": gold}))
    judgments = folder / "judgments.jsonl"
    judgments.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return corpus, judgments


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    return _write_inputs(tmp_path / "data")


def _sweep_file(folder: Path, body: str, *, resamples: int = 200) -> Path:
    path = folder / "sweep.toml"
    path.write_text(
        f'corpus = "data/corpus"\njudgments = "data/judgments.jsonl"\n'
        f"[bootstrap]\nresamples = {resamples}\n{body}",
        encoding="utf-8",
    )
    return path


GRID = '[sweep.grid]\nchunk_size = [300, 600]\nchunk_overlap = [0]\nretriever = "bm25"\n'


# --- expansion and validation ------------------------------------------------------------------


def test_grid_expands_to_stably_named_arms(tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    body = (
        "[sweep.grid]\nchunk_size = [300, 600]\nchunk_overlap = [0, 100]\n"
        'retriever = ["bm25", "hybrid"]\nfusion_k = [30, 60]\n'
    )
    plan = load_sweep(_sweep_file(tmp_path, body))
    names = [arm.name for arm in plan.arms]
    # bm25 arms are not multiplied by the fusion constant; hybrids are.
    assert len(names) == 4 * (1 + 2)
    assert names[:3] == ["chars-300-0.bm25", "chars-300-0.hybrid.rrf30", "chars-300-0.hybrid.rrf60"]
    assert [arm.name for arm in load_sweep(tmp_path / "sweep.toml").arms] == names  # stable
    hybrid = plan.arms[1]
    assert [s.name for s in hybrid.config.stages] == ["bm25", "sparse", "dense", hybrid.name]
    assert hybrid.pipeline == ("sparse", "dense", hybrid.name)
    assert hybrid.config.stage(hybrid.name).retriever.model_dump()["k"] == 30
    assert hybrid.config.stage("sparse").chunker is not None
    assert hybrid.config.stage("sparse").chunker.model_dump() == {
        "kind": "chars",
        "size": 300,
        "overlap": 0,
    }
    assert plan.metric == "recall@10"
    assert len({arm.config_hash for arm in plan.arms}) == len(plan.arms)


def test_named_arms_and_own_stages(tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    body = (
        '[[sweep.arms]]\nname = "small"\nchunker = "chars:300:50"\nk = 20\n'
        '[[sweep.arms]]\nname = "same"\n'
        '[[sweep.arms]]\nname = "custom"\n'
        'stages = [{name = "x", retriever = {kind = "bm25", k1 = 0.9}, chunker = "paragraphs"}]\n'
    )
    plan = load_sweep(_sweep_file(tmp_path, body))
    small, same, custom = plan.arms
    assert small.config.depth == 20
    assert same.same_as_baseline
    assert not small.same_as_baseline
    assert custom.pipeline == ("custom",)
    assert custom.config.stage("custom").retriever.model_dump()["k1"] == 0.9


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("[sweep.grid]\nchunk_sizes = [300]\n", "sweep.grid.chunk_sizes: unknown key"),
        ('[sweep.grid]\nretriever = ["bm25", "splade"]\n', "sweep.grid.retriever[1]"),
        ("[sweep.grid]\nchunk_size = [300]\nchunk_overlap = [300]\n", "sweep.grid: chunk_size 300"),
        ('[sweep.grid]\nchunker = ["chars:x"]\n', "sweep.grid.chunker: chunker 'chars:x'"),
        ('[sweep]\nmetric = "recall@7"\n[sweep.grid]\n', "sweep.metric"),
        ("[sweep]\ncontext_k = 0\n[sweep.grid]\n", "sweep.context_k"),
        ('[sweep]\n[[sweep.arms]]\nname = "bm25"\n', "sweep.arms[0].name"),
        ('[sweep.dense]\nbatch_size = 0\n[sweep.grid]\nretriever = "dense"\n', "batch_size"),
        ("[sweep]\n", "exactly one of [sweep.grid] or [[sweep.arms]]"),
        ("", "needs a [sweep] table"),
    ],
)
def test_a_bad_sweep_file_is_one_line_exit_2(
    tmp_path: Path, inputs: tuple[Path, Path], body: str, where: str
) -> None:
    path = _sweep_file(tmp_path, body)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["eval", "sweep", "--config", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert len(message.splitlines()) == 1, message
    assert where in message
    assert "sweep.toml" in message
    assert not out.exists()


def test_a_bad_base_key_names_the_key_and_the_arm(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    path = _sweep_file(tmp_path, GRID, resamples=0)
    with pytest.raises(ConfigError) as caught:
        load_sweep(path)
    assert "bootstrap.resamples" in str(caught.value)
    assert "(arm 'chars-300-0.bm25')" in str(caught.value)


def test_a_foreign_folder_is_refused_before_any_work(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    out = tmp_path / "elsewhere"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    path = _sweep_file(tmp_path, GRID)
    result = CliRunner().invoke(cli, ["eval", "sweep", "--config", str(path), "--out", str(out)])
    assert result.exit_code == 2
    assert "no earlier sweep" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


# --- the front ---------------------------------------------------------------------------------


def test_pareto_front_by_hand() -> None:
    points = {
        "a": (0.8, 1000.0, 0.001),  # best metric
        "b": (0.7, 500.0, 0.001),  # fewer chars
        "c": (0.7, 600.0, 0.001),  # dominated by b
        "d": (0.6, 500.0, 0.0005),  # fastest
        "e": (0.7, 500.0, 0.001),  # equal to b: both stay
        "f": (0.9, 100.0, None),  # no latency counts as the worst, still best on the rest
        "g": (0.5, 2000.0, None),  # dominated by a
    }
    assert pareto_front(points) == ["a", "b", "d", "e", "f"]
    # Without latency, f beats every other point; without f, d falls behind b (same chars).
    assert pareto_front(points, ("metric", "context_chars")) == ["f"]
    del points["f"]
    assert pareto_front(points, ("metric", "context_chars")) == ["a", "b", "e"]
    assert pareto_front(points, ("metric",)) == ["a"]


# --- running -----------------------------------------------------------------------------------


def _alone_counts(path: Path) -> dict[str, int]:
    """Chunkings and BM25 indexes of each arm run alone, added up."""
    plan = load_sweep(path)
    total: dict[str, int] = {}
    for arm in plan.arms:
        work = SharedWork()
        corpus, judgments = _pipeline.load_run_inputs(arm.config)
        _pipeline.evaluate_loaded(arm.config, corpus, judgments, shared=work)
        for key, value in work.counts.items():
            total[key] = total.get(key, 0) + value
    return total


def test_arms_share_chunks_and_indexes(tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    body = '[sweep.grid]\nchunker = ["chars:300:0", "chars:600:0"]\n[sweep.bm25]\nk1 = 1.2\n'
    path = _sweep_file(tmp_path, body)
    # The baseline is cut and indexed once for both arms; alone, each arm does it again.
    summary = run_sweep(load_sweep(path), tmp_path / "out")
    assert summary.shared == {
        "chunkings": 3,
        "bm25_indexes": 3,
        "embeddings": 0,
        "stages_run": 3,
        "stages_reused": 1,  # the baseline of the second arm
    }
    assert _alone_counts(path) == {
        "chunkings": 4,
        "bm25_indexes": 4,
        "embeddings": 0,
        "stages_run": 4,
        "stages_reused": 0,
    }


def test_an_index_is_shared_by_arms_with_the_same_chunks(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    # Arm "same" is the baseline's stage again; "deep" retrieves deeper from the same index.
    body = '[[sweep.arms]]\nname = "same"\n[[sweep.arms]]\nname = "deep"\nk = 200\n'
    summary = run_sweep(load_sweep(_sweep_file(tmp_path, body)), tmp_path / "out")
    # "same" is the baseline again (reused); "deep" runs its baseline at depth 200 again,
    # from the same chunks and index, and is that stage again (reused).
    assert summary.shared == {
        "chunkings": 1,
        "bm25_indexes": 1,
        "embeddings": 0,
        "stages_run": 2,
        "stages_reused": 2,
    }
    assert summary.point("same").same_as_baseline
    assert summary.point("same").comparisons == []


@pytest.mark.dense
@pytest.mark.skipif(not dense_available(), reason="needs the dense extra")
def test_embeddings_are_computed_once_per_chunk_text(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    body = (
        '[sweep.grid]\nchunker = ["chars:600:0"]\nretriever = ["dense", "hybrid"]\n'
        "fusion_k = [30, 60]\n"
    )
    path = _sweep_file(tmp_path, body)
    # A fresh embedding cache, so that what is embedded is this sweep's work.
    path.write_text('embedding_cache_dir = "cache"\n' + path.read_text(), encoding="utf-8")
    plan = load_sweep(path)
    names = ["chars-600-0.dense", "chars-600-0.hybrid.rrf30", "chars-600-0.hybrid.rrf60"]
    assert [a.name for a in plan.arms] == names
    summary = run_sweep(plan, tmp_path / "out")
    report = load_report(arm_paths(tmp_path / "out", names[0])[0])
    chunks = report.stage(names[0]).chunk_count
    assert chunks is not None
    assert chunks > 0
    # Three arms embed the same chunks; each text is embedded once (the cache serves the rest).
    assert summary.shared["embeddings"] == chunks
    assert summary.shared["chunkings"] == 2  # the baseline's and the arms' one chunker
    # The hybrids reuse the dense arm's dense stage and the baseline; each fusion runs.
    assert summary.shared["stages_reused"] == 5  # rrf30: baseline, dense; rrf60: + sparse


@dataclass(frozen=True)
class Swept:
    """One CLI sweep of GRID, shared by the tests that only read its outputs."""

    out: Path
    sweep_file: Path
    output: str
    summary: SweepSummary


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Swept:
    folder = tmp_path_factory.mktemp("swept")
    _write_inputs(folder / "data")
    path = _sweep_file(folder, GRID)
    out = folder / "out"
    result = CliRunner().invoke(cli, ["eval", "sweep", "--config", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return Swept(out, path, result.output, load_sweep_summary(out / "sweep.json"))


def test_every_arm_is_in_one_family_with_the_baseline(swept: Swept) -> None:
    summary = swept.summary
    arms = [p for p in summary.points if p.role == "arm"]
    decisions = [c for p in arms for c in p.comparisons]
    assert len(arms) == 2
    assert len(decisions) == 2 * len(summary.headline_metrics)
    assert summary.family_size == len(decisions)
    assert {c.family_size for c in decisions} == {len(decisions)}
    # Holm over the whole sweep (every arm × metric), not within each arm's report.
    expected = holm_adjust([c.p_value for c in decisions])
    assert [c.p_holm for c in decisions] == pytest.approx(expected)
    within = load_report(swept.out / arms[0].report).stage(arms[0].name).comparisons
    assert within[0].family_size == len(summary.headline_metrics)
    for point in arms:
        report = load_report(swept.out / point.report)
        stage = report.stage(point.name)
        assert point.metric_mean == stage.aggregates[summary.metric].mean
        chars = sum(h.end - h.start for r in stage.queries for h in r.hits[:10])
        assert point.context_chars == pytest.approx(chars / len(report.queries))
        cost = stage.cost
        assert cost is not None
        assert point.latency_p95 == cost.latency_p95
    assert summary.front
    assert set(summary.front) <= {p.name for p in summary.points}


def test_cli_prints_the_front_and_writes_the_outputs(swept: Swept) -> None:
    out, summary = swept.out, swept.summary
    assert "Pareto front (recall@10" in swept.output
    assert "★" in swept.output
    assert "[2/2] arm chars-600-0.bm25: done" in swept.output
    assert summary.schema_version == SWEEP_SCHEMA_VERSION
    assert summary.ran == [a.name for a in load_sweep(swept.sweep_file).arms]
    for point in summary.points[1:]:
        report_path, items_path = arm_paths(out, point.name)
        assert report_path.is_file()
        assert items_path.is_file()
    assert (out / "sweep.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    data = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    data["surprise"] = 1
    with pytest.raises(ValueError, match="surprise"):
        SweepSummary.model_validate(data)
    assert "run_sweep" in harness.__all__
    assert "load_sweep" in harness.__all__


def _mtimes(out: Path, names: list[str]) -> dict[str, tuple[int, int]]:
    found = {}
    for name in names:
        for path in arm_paths(out, name):
            stat = path.stat()
            found[path.name] = (stat.st_ino, stat.st_mtime_ns)
    return found


def test_a_changed_sweep_file_reruns_only_the_changed_arms(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    path = _sweep_file(tmp_path, GRID)
    out = tmp_path / "out"
    first = run_sweep(load_sweep(path), out)
    before = _mtimes(out, first.ran)
    again = run_sweep(load_sweep(path), out)
    assert again.ran == []
    assert again.skipped == first.ran
    assert _mtimes(out, first.ran) == before
    assert again.shared["chunkings"] == 0  # nothing recomputed
    # One more size: only its arm runs; a changed BM25 setting changes every arm.
    path.write_text(path.read_text().replace("[300, 600]", "[300, 600, 900]"), encoding="utf-8")
    grown = run_sweep(load_sweep(path), out)
    assert grown.ran == ["chars-900-0.bm25"]
    assert grown.skipped == first.ran
    assert _mtimes(out, first.ran) == before
    path.write_text(path.read_text() + "[sweep.bm25]\nk1 = 1.0\n", encoding="utf-8")
    changed = run_sweep(load_sweep(path), out)
    assert changed.skipped == []
    assert len(changed.ran) == 3


# --- kill -9 and resume, in a real subprocess ---------------------------------------------------

SLOW_RETRIEVER = """
import os, time
from pathlib import Path

HERE = Path(__file__).resolve().parent

def search(query):
    (HERE / "started").touch()
    while (HERE / "hold").exists():
        time.sleep(0.05)
    return []
"""


def _grk(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "groundkit.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def held_sweep(tmp_path: Path, inputs: tuple[Path, Path]) -> Iterator[Path]:
    (tmp_path / "slow.py").write_text(SLOW_RETRIEVER, encoding="utf-8")
    body = (
        '[[sweep.arms]]\nname = "small"\nchunker = "chars:300:0"\n'
        '[[sweep.arms]]\nname = "slow"\n'
        'stages = [{name = "x", retriever = {kind = "callable", target = "slow.py:search"}}]\n'
        '[[sweep.arms]]\nname = "after"\nchunker = "chars:600:0"\n'
    )
    _sweep_file(tmp_path, body)
    return tmp_path


@pytest.mark.slow
def test_kill_9_mid_sweep_then_resume_reruns_only_unfinished_arms(held_sweep: Path) -> None:
    folder = held_sweep
    (folder / "hold").touch()
    process = _grk("eval", "sweep", "--config", "sweep.toml", "--out", "out", cwd=folder)
    deadline = time.monotonic() + 120
    while not (folder / "started").exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the slow arm never started"
        time.sleep(0.05)
    finished = ["small"]
    before = _mtimes(folder / "out", finished)  # both written before the slow arm started
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert not (folder / "out" / "sweep.json").exists()
    assert not arm_paths(folder / "out", "slow")[0].exists()
    (folder / "hold").unlink()
    rerun = _grk("eval", "sweep", "--config", "sweep.toml", "--out", "out", cwd=folder)
    _stdout, stderr = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, stderr
    assert "arm small: skipped" in stderr
    assert "arm slow: done" in stderr
    assert "arm after: done" in stderr
    assert _mtimes(folder / "out", finished) == before
    resumed = load_sweep_summary(folder / "out" / "sweep.json")
    assert resumed.skipped == finished
    assert resumed.ran == ["slow", "after"]
    clean = run_sweep(load_sweep(folder / "sweep.toml"), folder / "clean")
    assert _result(resumed) == _result(clean)
    for name in ("small", "slow", "after"):
        ours = load_report(arm_paths(folder / "out", name)[0])
        theirs = load_report(arm_paths(folder / "clean", name)[0])
        assert _scores(ours) == _scores(theirs)


def _result(summary: SweepSummary) -> list[Any]:
    """What a sweep found, without the times it took (latency is measured, not computed)."""
    return [
        (
            p.name,
            p.metric_mean,
            p.context_chars,
            p.config_hash,
            [(c.metric, c.effect, c.p_value, c.p_holm, c.verdict) for c in p.comparisons],
        )
        for p in summary.points
    ]


def _scores(report: Any) -> dict[str, dict[str, dict[str, float]]]:
    return {s.name: {r.query_id: r.scores for r in s.queries} for s in report.stages}


# --- the page ----------------------------------------------------------------------------------


def test_page_numbers_are_the_summarys(swept: Swept) -> None:
    summary = swept.summary
    page = render_sweep_html(summary)
    assert page == render_sweep_html(summary)  # deterministic
    assert "<script" not in page
    assert "http://" not in page.replace("http://www.w3.org", "")
    for point in summary.points:
        assert f'data-stage="{point.name}" data-metric="recall@10" data-field="mean" ' in page
        assert f'data-value="{point.metric_mean!r}"' in page
        assert f'data-field="context_chars" data-value="{point.context_chars!r}"' in page
    assert page.count('<td class="front">★</td>') == len(summary.front)
    assert page.count('<svg class="plot"') == 1
    for point in summary.points:  # each arm links to its report, in the plot and the table
        assert f'<a xlink:href="{point.report}"' in page
        assert f'<a href="{point.report}">{point.name}</a>' in page


@pytest.mark.browser
def test_page_renders_in_chromium_without_errors(browser: Browser, swept: Swept) -> None:
    summary = swept.summary
    page_path = swept.out / "sweep.html"  # the page the command wrote
    loaded = browser.load(page_path, screenshot=True)
    assert loaded.errors == []
    assert loaded.facts["title"].startswith("Retrieval sweep")
    assert len(loaded.facts["plots"]) == 1
    assert loaded.facts["plots"][0] > 300
    assert loaded.facts["scroll_width"] <= browser.width
    assert loaded.screenshot is not None
    assert loaded.screenshot.startswith(b"\x89PNG")
    for name in summary.front:
        assert f'data-arm="{name}"' in loaded.dom


def test_the_front_axes_are_chosen_in_the_sweep_file(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    body = '[sweep]\nfront = ["context_chars", "metric"]\n[sweep.grid]\n'
    assert load_sweep(_sweep_file(tmp_path, body)).front == ("metric", "context_chars")
    with pytest.raises(ConfigError, match=r"sweep\.front\[0\]"):
        load_sweep(_sweep_file(tmp_path, '[sweep]\nfront = ["speed"]\n[sweep.grid]\n'))


def test_names_do_not_depend_on_which_axes_vary(tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    plain = load_sweep(_sweep_file(tmp_path, "[sweep.grid]\n"))
    assert [a.name for a in plain.arms] == ["base.bm25"]
    assert plain.arms[0].same_as_baseline
    one = load_sweep(_sweep_file(tmp_path, '[sweep.grid]\nchunker = ["chars:300:0"]\n'))
    two = load_sweep(
        _sweep_file(tmp_path, '[sweep.grid]\nchunker = ["chars:300:0", "paragraphs"]\n')
    )
    assert one.arms[0].name == two.arms[0].name == "chars-300-0.bm25"
    assert one.arms[0].config_hash == two.arms[0].config_hash  # so resuming keeps it
    assert two.arms[1].name == "paragraphs-1000.bm25"
