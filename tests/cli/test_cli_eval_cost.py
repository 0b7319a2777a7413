"""Cost and latency per stage: measured in the run, shown in the summary, HTML and compare."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.cli.test_cli_eval_run import make_corpus

from groundkit.cli import cli
from groundkit.cli.html._report import render_html_report
from groundkit.harness import EvalSettings, StageConfig, evaluate, load_items
from groundkit.harness.retrievers import Query
from groundkit.harness.run._cost import latency_quantiles, priced
from groundkit.judgments import Corpus, load_judgments, load_report
from groundkit.judgments.report import StagePrice

RETRIEVER = '''
def first_words(query):
    """A per-query function: the document whose name starts the query's topic."""
    return [{"doc": "leave.md", "text": "Parental leave lasts sixteen weeks"}]
'''


class _Counting:
    """A retriever object that searches one query per call and counts its tokens."""

    searches_each_query = True

    def __init__(self) -> None:
        self.calls = 0

    def search(self, queries: Sequence[Query], depth: int) -> list[list[Any]]:
        self.calls += 1
        assert len(queries) == 1
        return [[("leave.md", 0, 40, 1.0)] for _ in queries]

    def usage(self) -> dict[str, int]:
        return {"model_calls": self.calls, "tokens": 1000 * self.calls}


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    return make_corpus(tmp_path)


def _settings(*stages: StageConfig) -> EvalSettings:
    return EvalSettings.model_validate(
        {"chunker": {"kind": "paragraphs"}, "stages": list(stages), "bootstrap": {"resamples": 50}}
    )


def test_every_stage_records_its_cost(data: tuple[Path, Path]) -> None:
    corpus, judgments = data
    counting = _Counting()
    price = StagePrice(usd_per_query=0.01, usd_per_million_tokens=2.0)
    stage = StageConfig.model_validate(
        {"name": "own", "retriever": {"kind": "callable", "target": counting}, "price": price}
    )
    report = evaluate(Corpus.load(corpus), load_judgments(judgments), _settings(stage))
    bm25, own = report.stage("bm25").cost, report.stage("own").cost
    assert bm25 is not None
    assert own is not None
    queries = report.answerable_count
    # A built-in searches the batch once: its latency is the batch's share, p50 = p95 = p99.
    assert bm25.latency_basis == "batch"
    assert bm25.latency_p50 == bm25.latency_p95 == bm25.latency_p99
    assert bm25.search_seconds is not None
    assert bm25.latency_p50 is not None
    assert bm25.latency_p50 == pytest.approx(bm25.search_seconds / queries, abs=1e-6)
    assert bm25.chunks_indexed == report.stage("bm25").chunk_count
    texts = Corpus.load(corpus)
    assert bm25.characters_indexed is not None
    assert 0 < bm25.characters_indexed <= sum(len(t) for t in texts.values())
    assert bm25.usd is None
    assert bm25.price is None
    # A retriever that searches one query per call is timed query by query.
    assert own.latency_basis == "per_query"
    assert own.latency_p50 is not None
    assert own.latency_p95 is not None
    assert own.latency_p99 is not None
    assert 0 <= own.latency_p50 <= own.latency_p95 <= own.latency_p99
    assert counting.calls == queries
    assert (own.model_calls, own.tokens) == (queries, 1000 * queries)
    assert own.chunks_indexed is None  # its own index is its to count
    assert own.usd == pytest.approx(0.01 * queries + 2.0 * 1000 * queries / 1e6)
    if sys.platform == "linux":
        assert own.memory_method in ("rss_peak_reset", "rss_delta")
        assert own.peak_memory_bytes is not None
        assert own.peak_memory_bytes >= 0


def test_pricing_needs_every_priced_count() -> None:
    assert priced(None, {"queries": 3}) is None
    assert priced(StagePrice(usd_per_query=0.5), {"queries": 3}) == 1.5
    # A price per token for a retriever that counts no tokens is not turned into zero.
    assert priced(StagePrice(usd_per_million_tokens=1.0), {"queries": 3}) is None
    both = {"embedding_calls": 2, "model_calls": 3}
    assert priced(StagePrice(usd_per_call=0.1), both) == pytest.approx(0.5)


def test_latency_quantiles_against_numpy_by_hand() -> None:
    seconds = [0.001 * i for i in range(1, 101)]
    p50, p95, p99 = latency_quantiles(seconds) or (0, 0, 0)
    # Linear interpolation between order statistics (numpy's default), computed by hand.
    assert p50 == pytest.approx(0.0505)
    assert p95 == pytest.approx(0.09505)
    assert p99 == pytest.approx(0.09901)
    assert latency_quantiles([]) is None


def test_an_unpriced_stage_config_dumps_as_before() -> None:
    plain = StageConfig.model_validate({"name": "x", "retriever": {"kind": "bm25"}})
    assert "price" not in plain.model_dump(mode="json")
    priced_stage = plain.model_copy(update={"price": StagePrice(usd_per_query=1.0)})
    assert priced_stage.model_dump(mode="json")["price"]["usd_per_query"] == 1.0


def _run(data: tuple[Path, Path], tmp_path: Path) -> tuple[Result, Path]:
    corpus, judgments = data
    (tmp_path / "retriever.py").write_text(RETRIEVER, encoding="utf-8")
    config = tmp_path / "groundkit.toml"
    config.write_text(
        f'corpus = "{corpus.name}"\njudgments = "{judgments.name}"\n'
        'chunker = { kind = "paragraphs" }\n[bootstrap]\nresamples = 100\n\n'
        '[[stages]]\nname = "fn"\n'
        'retriever = { kind = "callable", target = "retriever.py:first_words" }\n'
        "price = { usd_per_query = 0.002 }\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(
        cli, ["eval", "run", "--config", str(config), "--report", str(out / "report.json")]
    )
    return result, out


def test_the_run_summary_and_html_show_cost(data: tuple[Path, Path], tmp_path: Path) -> None:
    result, out = _run(data, tmp_path)
    assert result.exit_code in (0, 1), result.output
    assert "cost and latency per stage" in result.output
    assert "timed query by query for fn" in result.output
    report = load_report(out / "report.json")
    fn = report.stage("fn").cost
    assert fn is not None
    assert fn.latency_basis == "per_query"
    assert fn.usd == pytest.approx(0.002 * report.answerable_count)
    assert f"${fn.usd:.4g}" in result.output
    items = load_items(out / "report.items.jsonl")
    assert items.stage("fn").cost == fn
    page = render_html_report(report)
    assert 'id="cost"' in page
    assert "Cost and latency" in page
    assert 'data-stage="fn" data-field="cost.usd"' in page


@pytest.fixture
def ran(data: tuple[Path, Path], tmp_path: Path) -> Path:
    """The output folder of a run with a priced per-query stage ``fn``."""
    return _run(data, tmp_path)[1]


def _compare(*args: str) -> Result:
    return CliRunner().invoke(cli, ["eval", "compare", *args])


def test_cost_guardrails_in_both_compare_modes(ran: Path) -> None:
    out = ran
    items = str(out / "report.items.jsonl")
    pair = [items, items, "--stage-a", "bm25", "--stage-b", "bm25", "--metric", "recall@10"]
    same = _compare(*pair, "--guardrail", "latency_p95<=1.0x", "--guardrail", "ndcg@10")
    assert same.exit_code == 0, same.output
    assert "cost guardrails (thresholds, not tests)" in same.output
    assert "not statistical tests" in same.output
    assert "ndcg@10 (guardrail)" in same.output
    # Zero latency allowed: B's recorded latency is over the bound, exit 1.
    tight = _compare(*pair, "--guardrail", "latency_p95<=0x", "--json")
    assert tight.exit_code == 1, tight.output
    payload = json.loads(tight.output)
    check = payload["cost_guardrails"]["checks"][0]
    assert check["passed"] is False
    assert check["kind"] == "threshold"
    assert "not statistical tests" in payload["cost_guardrails"]["note"]
    # An unpriced stage has no USD to check: an input error naming the file and stage.
    unpriced = _compare(*pair, "--guardrail", "usd<=1")
    assert unpriced.exit_code == 2
    assert "stage 'bm25' did not record usd" in unpriced.output
    bad = _compare(*pair, "--guardrail", "speed<=2x")
    assert bad.exit_code == 2
    assert "no cost figure 'speed'" in bad.output
    report = str(out / "report.json")
    mode = [report, "--candidate", "fn", "--metric", "recall@10"]
    loose = _compare(*mode, "--guardrail", "index_seconds<=1000000x")
    assert "cost guardrails" in loose.output
    assert loose.exit_code in (0, 1)
    priced_check = _compare(*mode, "--guardrail", "usd<=0", "--json")
    assert priced_check.exit_code == 2  # the baseline bm25 is unpriced
    metric = _compare(*mode, "--guardrail", "ndcg@10")
    assert metric.exit_code == 2
    assert "applies to two items files" in metric.output


def test_an_invalid_cost_in_an_items_file_names_the_line(ran: Path, tmp_path: Path) -> None:
    path = ran / "report.items.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["cost"]["latency_p50"] = 99.0  # above p95
    lines[0] = json.dumps(header)
    bad = tmp_path / "bad.items.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _compare(str(bad), str(path), "--stage-a", "bm25", "--stage-b", "bm25")
    assert result.exit_code == 2
    assert "bad.items.jsonl:1: stage 'bm25': invalid 'cost'" in result.output


def test_a_failed_cost_guardrail_exits_1_in_a_real_process(ran: Path) -> None:
    items = str(ran / "report.items.jsonl")
    argv = [sys.executable, "-m", "groundkit.cli", "eval", "compare", items, items]
    argv += ["--stage-a", "bm25", "--stage-b", "fn", "--metric", "recall@10"]
    done = subprocess.run(
        [*argv, "--guardrail", "latency_p95<=0x"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL" in done.stdout
    assert "not statistical tests" in done.stdout
