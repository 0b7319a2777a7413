"""A report's verdict, reproduced from its items file by the command `grk eval compare` prints.

The demo's corpus and judgments (172 answerable queries), three BM25 stages with different
chunkers, two headline metrics: a family of four comparisons under Holm. For every candidate and
metric, report mode prints an items-mode command (``--alpha`` at the level Holm gives that
comparison); running it gives the report's verdict. Items mode names its family of one.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli

DEMO = Path(__file__).resolve().parents[2] / "packages/cli/src/groundkit/harness/demo_data"
METRICS = ("recall@10", "mrr")
STAGES = ("c200", "doc")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reproduce")
    path = folder / "run.json"
    args = ["eval", "run", "--corpus", str(DEMO / "corpus"), "--judgments"]
    args += [str(DEMO / "judgments.jsonl"), "--report", str(path), "--no-progress"]
    args += ["--stage", "c200=bm25@chars:200:0", "--stage", "doc=bm25@document"]
    args += ["--resamples", "500"]
    for metric in METRICS:
        args += ["--metric", metric]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1), result.output
    return path


@pytest.mark.parametrize("candidate", STAGES)
@pytest.mark.parametrize("metric", METRICS)
def test_the_printed_items_command_gives_the_reports_verdict(
    report: Path, candidate: str, metric: str
) -> None:
    runner = CliRunner()
    args = ["eval", "compare", str(report), "--candidate", candidate, "--metric", metric]
    shown = runner.invoke(cli, [*args, "--json"])
    assert shown.exit_code in (0, 1), shown.output
    outcome = json.loads(shown.output)
    assert outcome["family"] == "holm over 4 comparisons"
    command = outcome["items_command"]
    assert command is not None, outcome
    words = shlex.split(command)
    assert words[:3] == ["grk", "eval", "compare"]
    assert Path(words[3]) == report.with_name("run.items.jsonl")
    assert float(words[words.index("--alpha") + 1]) == pytest.approx(outcome["items_alpha"])
    assert outcome["items_alpha"] <= 0.05
    again = runner.invoke(cli, [*words[1:], "--json"])
    assert again.exit_code in (0, 1), again.output
    items = json.loads(again.output)
    assert items["verdict"] == outcome["verdict"] == outcome["report_verdict"]
    assert items["family"] == "a family of one"
    # The console says the same, with the family named beside the limit.
    text = " ".join(runner.invoke(cli, args).output.split())
    assert "(paired, holm over 4 comparisons)" in text
    assert "the same verdict from the items file:" in text


def test_holm_levels_differ_from_a_family_of_one(report: Path) -> None:
    levels = []
    for candidate in STAGES:
        for metric in METRICS:
            args = ["eval", "compare", str(report), "--candidate", candidate]
            result = CliRunner().invoke(cli, [*args, "--metric", metric, "--json"])
            levels.append(json.loads(result.output)["items_alpha"])
    assert min(levels) == pytest.approx(0.05 / 4)  # Holm's first step: not items mode's 0.05


def test_alpha_is_refused_in_report_mode_and_out_of_range(report: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "compare", str(report), "--alpha", "0.01"])
    assert result.exit_code == 2
    assert "--alpha" in result.output
    items = str(report.with_name("run.items.jsonl"))
    bad = CliRunner().invoke(cli, ["eval", "compare", items, items, "--alpha", "nan"])
    assert bad.exit_code == 2
    assert len(bad.output.strip().splitlines()) == 1
