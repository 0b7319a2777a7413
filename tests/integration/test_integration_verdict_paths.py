"""The same scores give the same verdict on every path.

A report's stored comparisons, the report's family recomputed (`report_family`), `grk eval
compare REPORT`, the HTML report, `grk eval compare A.items B.items` and the diagnosis track
record (`compare_items`, which it calls) must all decide alike, because they all go through
the one verdict engine in `groundkit.stats`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.cli.html._report import render_html_report
from groundkit.harness import EvalSettings, evaluate, load_items, write_items
from groundkit.harness.analysis import report_family
from groundkit.judgments import EvalReport, GoldQuote, Judgment, dump_report
from groundkit.stats import compare_items

TOPICS = [f"topic{i:02d}" for i in range(40)]


def corpus() -> dict[str, str]:
    return {
        f"{topic}.md": f"Policy {topic}: the {topic} rule is written here. Other words follow."
        for topic in TOPICS
    }


def judgments() -> list[Judgment]:
    return [
        Judgment(
            query_id=topic,
            query=f"What is the {topic} rule?",
            gold=(GoldQuote(doc=f"{topic}.md", quote=f"the {topic} rule is written here"),),
        )
        for topic in TOPICS
    ]


def hit_first(query: str) -> list[dict[str, object]]:
    """A retriever that finds the gold passage first for two thirds of the topics."""
    topic = query.split()[3]
    number = int(topic.removeprefix("topic"))
    doc = f"{topic}.md" if number % 3 else f"{TOPICS[(number + 1) % len(TOPICS)]}.md"
    return [{"doc": doc, "text": corpus()[doc][:40]}]


def miss_some(query: str) -> list[dict[str, object]]:
    topic = query.split()[3]
    number = int(topic.removeprefix("topic"))
    doc = f"{topic}.md" if number % 5 else f"{TOPICS[(number + 2) % len(TOPICS)]}.md"
    return [{"doc": doc, "text": corpus()[doc][:40]}]


def html_verdicts(page: str) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for match in re.finditer(r"<[^>]*data-field=\"verdict\"[^>]*>", page):
        tag = match.group(0)
        stage = re.search(r'data-stage="([^"]*)"', tag)
        metric = re.search(r'data-metric="([^"]*)"', tag)
        value = re.search(r'data-value="([^"]*)"', tag)
        if stage and metric and value:
            found.setdefault((stage.group(1), metric.group(1)), set()).add(value.group(1))
    return found


def compare_cli(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["eval", "compare", *args, "--json"])
    assert result.exit_code in (0, 1), result.output
    data: dict[str, object] = json.loads(result.output)
    return data


def assert_every_report_path_agrees(report: EvalReport, path: Path) -> int:
    recomputed = {(r.label, r.metric): r for r in report_family(report)}
    page = html_verdicts(render_html_report(report))
    checked = 0
    for stage in report.stages[1:]:
        for stored in stage.comparisons:
            again = recomputed[(stage.name, stored.metric)]
            assert again.verdict == stored.decision
            assert again.p_adjusted == stored.p_adjusted
            shown = compare_cli(str(path), "--candidate", stage.name, "--metric", stored.metric)
            assert shown["verdict"] == stored.decision
            assert shown["report_verdict"] == stored.decision
            assert page[(stage.name, stored.metric)] == {stored.decision}
            checked += 1
    return checked


def test_report_compare_and_html_agree_on_a_family(tmp_path: Path) -> None:
    report = evaluate(corpus(), judgments(), stages={"first": hit_first, "some": miss_some})
    path = tmp_path / "report.json"
    dump_report(report, path)
    assert report.stage("first").comparisons[0].family_size == 2 * len(report.run.headline_metrics)
    assert assert_every_report_path_agrees(report, path) == 2 * len(report.run.headline_metrics)


def test_every_path_agrees_on_a_family_of_one(tmp_path: Path) -> None:
    settings = EvalSettings(headline_metrics=["recall@1"])
    report = evaluate(corpus(), judgments(), settings, stages={"first": hit_first})
    path = tmp_path / "report.json"
    dump_report(report, path)
    assert assert_every_report_path_agrees(report, path) == 1
    stored = report.stage("first").comparisons[0]
    assert stored.family_size == 1
    # Items files: the CLI's items mode and compare_items (what the track record calls).
    write_items(report, tmp_path / "items.jsonl")
    items = load_items(tmp_path / "items.jsonl")
    rows = {s.name: s.scores for s in items.stages}
    column = {name: {q: r["recall@1"] for q, r in stage.items()} for name, stage in rows.items()}
    settings_record = report.run.bootstrap
    direct = compare_items(
        column["bm25"],
        column["first"],
        metric="recall@1",
        resamples=settings_record.resamples,
        seed=settings_record.seed,
    )
    assert direct.verdict == stored.decision
    assert direct.p_value == stored.p_value
    shown = compare_cli(
        str(tmp_path / "items.jsonl"),
        str(tmp_path / "items.jsonl"),
        "--stage-a",
        "bm25",
        "--stage-b",
        "first",
        "--metric",
        "recall@1",
        "--resamples",
        str(settings_record.resamples),
        "--seed",
        str(settings_record.seed),
    )
    assert shown["verdict"] == stored.decision


@pytest.mark.parametrize(("gained", "lost"), [(16, 6), (6, 16), (14, 4)])
def test_a_binary_table_near_alpha_gets_one_verdict_everywhere(
    tmp_path: Path, gained: int, lost: int
) -> None:
    # 16 gained / 6 lost of 40: the exact p is 0.0525. The old report path called it "better"
    # from a Monte Carlo sign-flip (p 0.043) while compare_items said "inconclusive".
    import numpy as np

    from groundkit.harness.analysis._stats import compare_stages
    from groundkit.judgments import StageReport

    n = 40
    base = np.zeros(n)
    cand = np.zeros(n)
    base[gained : gained + lost] = 1.0  # lost: right before, wrong after
    cand[:gained] = 1.0  # gained
    both = n - gained - lost - 8
    base[gained + lost : gained + lost + both] = 1.0
    cand[gained + lost : gained + lost + both] = 1.0
    ids = [f"q{i:02d}" for i in range(n)]
    settings = EvalSettings(headline_metrics=["hit@10"])
    stages = [StageReport(name="bm25", kind="bm25", baseline=True), StageReport(name="x", kind="x")]
    values = {"bm25": base[:, None], "x": cand[:, None]}
    (stored,) = compare_stages(stages, values, ids, ["hit@10"], settings)[1].comparisons
    direct = compare_items(
        dict(zip(ids, base.tolist(), strict=True)), dict(zip(ids, cand.tolist(), strict=True))
    )
    assert direct.verdict == stored.decision
    assert direct.p_value == stored.p_value
    if (gained, lost) == (16, 6):
        assert stored.decision == "inconclusive"
        assert stored.p_value == pytest.approx(0.0525, abs=1e-4)
