"""`grk eval compare A.items.jsonl B.items.jsonl`: verdicts, exit codes, guardrails, A/A rate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli
from groundkit.cli.compare._items import ItemsSettings, compare_item_rows
from groundkit.harness import write_items
from groundkit.judgments import EvalReport, QueryResult, StageReport
from groundkit.judgments.report import GoldEvidence, QueryInfo, RunInfo

Rows = dict[str, dict[str, float]]


def _report(stages: dict[str, Rows]) -> EvalReport:
    ids = list(next(iter(stages.values())))
    queries = [
        QueryInfo(query_id=q, query=f"question {q}", gold=[GoldEvidence(doc="d", quote="x")])
        for q in ids
    ]
    reports = [
        StageReport(
            name=name,
            kind="bm25",
            baseline=position == 0,
            queries=[QueryResult(query_id=q, scores=rows[q]) for q in ids],
        )
        for position, (name, rows) in enumerate(stages.items())
    ]
    run = RunInfo(
        created_at="2024-01-01T00:00:00Z",
        package_versions={},
        corpus_fingerprint="0" * 64,
        judgments_fingerprint="0" * 64,
    )
    return EvalReport(run=run, queries=queries, stages=reports)


def write(path: Path, stages: dict[str, Rows]) -> Path:
    """An items file with the given stages (the first one is named bm25 by the contract)."""
    write_items(_report(stages), path)
    return path


def rows(hits: list[int], seed: int = 0) -> Rows:
    """Rows whose recall@10 is the given 0/1 outcome, with ndcg@10 and mrr beside it."""
    rng = np.random.default_rng(seed)
    out: Rows = {}
    for i, hit in enumerate(hits):
        quality = float(hit) * float(rng.uniform(0.3, 1.0))
        out[f"q{i:03d}"] = {"recall@10": float(hit), "ndcg@10": quality, "mrr": quality}
    return out


def compare(*args: str) -> Result:
    return CliRunner().invoke(cli, ["eval", "compare", *args])


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    base = [1] * 50 + [0] * 50
    better = [1] * 50 + [1] * 30 + [0] * 20
    worse = [1] * 25 + [0] * 25 + [0] * 50
    same = [1] * 45 + [0] * 5 + [1] * 5 + [0] * 45
    return {
        "a": write(tmp_path / "a.items.jsonl", {"bm25": rows(base)}),
        "better": write(tmp_path / "better.items.jsonl", {"bm25": rows(better, 1)}),
        "worse": write(tmp_path / "worse.items.jsonl", {"bm25": rows(worse, 2)}),
        "same": write(tmp_path / "same.items.jsonl", {"bm25": rows(same, 3)}),
    }


def test_better_exits_zero_and_shows_guardrails(files: dict[str, Path]) -> None:
    result = compare(str(files["a"]), str(files["better"]))
    assert result.exit_code == 0, result.output
    assert "▲ better" in result.output
    assert "ndcg@10 (guardrail)" in result.output
    assert "mrr (guardrail)" in result.output
    assert "paired limit" in result.output
    assert "(paired, a family of one)" in " ".join(result.output.split())  # its family, named


def test_worse_exits_one(files: dict[str, Path]) -> None:
    result = compare(str(files["a"]), str(files["worse"]), "--json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["verdict"] == "worse"
    assert data["comparison"]["kind"] == "binary"
    assert data["comparison"]["mcnemar_p_value"] < 0.05
    assert {g["metric"] for g in data["guardrails"]} == {"ndcg@10", "mrr"}


def test_inconclusive_exits_zero_unless_asked(files: dict[str, Path]) -> None:
    plain = compare(str(files["a"]), str(files["same"]))
    assert plain.exit_code == 0, plain.output
    assert "inconclusive" in plain.output
    strict = compare(str(files["a"]), str(files["same"]), "--fail-on-inconclusive")
    assert strict.exit_code == 1


def test_fail_under_uses_the_low_end_of_b(files: dict[str, Path]) -> None:
    # B = better has recall@10 0.8 over 100 queries: its 95% range starts near 0.72.
    ok = compare(str(files["a"]), str(files["better"]), "--fail-under", "0.6", "--json")
    assert ok.exit_code == 0
    data = json.loads(ok.output)
    assert 0.6 < data["b_low"] < 0.8
    assert data["below_fail_under"] is False
    under = compare(str(files["a"]), str(files["better"]), "--fail-under", "0.78")
    assert under.exit_code == 1
    assert "FAIL" in under.output


def test_seed_and_resamples_are_used(files: dict[str, Path]) -> None:
    result = compare(
        str(files["a"]), str(files["same"]), "--seed", "3", "--resamples", "300", "--json"
    )
    data = json.loads(result.output)
    assert data["comparison"]["seed"] == 3
    assert data["comparison"]["resamples"] == 300


def test_metric_option_and_unknown_metric(files: dict[str, Path]) -> None:
    by_ndcg = compare(str(files["a"]), str(files["better"]), "--metric", "ndcg@10", "--json")
    assert by_ndcg.exit_code == 0
    data = json.loads(by_ndcg.output)
    assert data["metric"] == "ndcg@10"
    assert data["comparison"]["kind"] == "numeric"
    unknown = compare(str(files["a"]), str(files["better"]), "--metric", "map")
    assert unknown.exit_code == 2
    assert "'map'" in unknown.output
    assert "recall@10" in unknown.output


def test_different_query_ids_cannot_be_compared(tmp_path: Path, files: dict[str, Path]) -> None:
    other = write(tmp_path / "other.items.jsonl", {"bm25": rows([1] * 99)})
    result = compare(str(files["a"]), str(other))
    assert result.exit_code == 2
    line = result.output.strip()
    assert "\n" not in line
    assert "1 only in" in line
    assert "q099" in line


def test_unreadable_items_file_exits_two(tmp_path: Path, files: dict[str, Path]) -> None:
    broken = tmp_path / "broken.items.jsonl"
    broken.write_text('{"stage": "bm25"}\n')
    result = compare(str(files["a"]), str(broken))
    assert result.exit_code == 2
    assert f"{broken}:1" in result.output
    missing = compare(str(files["a"]), str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == 2
    assert "nope.jsonl" in missing.output


def test_several_stages_need_a_choice(tmp_path: Path, files: dict[str, Path]) -> None:
    both = write(
        tmp_path / "both.items.jsonl",
        {"bm25": rows([1] * 50 + [0] * 50), "dense": rows([1] * 80 + [0] * 20, 4)},
    )
    ambiguous = compare(str(files["a"]), str(both))
    assert ambiguous.exit_code == 2
    assert "--stage-b" in ambiguous.output
    assert "bm25, dense" in ambiguous.output
    chosen = compare(str(files["a"]), str(both), "--stage-b", "dense")
    assert chosen.exit_code == 0
    assert "[dense]" in chosen.output
    unknown = compare(str(files["a"]), str(both), "--stage-b", "hybrid")
    assert unknown.exit_code == 2
    assert "'hybrid'" in unknown.output


def test_mode_specific_flags_are_refused(files: dict[str, Path]) -> None:
    result = compare(str(files["a"]), str(files["better"]), "--candidate", "dense")
    assert result.exit_code == 2
    too_many = compare(str(files["a"]), str(files["a"]), str(files["a"]))
    assert too_many.exit_code == 2


def _same_distribution_pair(rng: np.random.Generator, n: int) -> tuple[Rows, Rows]:
    # Per-query difficulty shared by both runs (as two retrievers over one corpus), each run an
    # independent draw from the same distribution: the true difference is zero.
    ease = rng.beta(2.0, 2.0, size=n)
    a = (rng.random(n) < ease).astype(float)
    b = (rng.random(n) < ease).astype(float)
    quality_a = np.clip(ease + rng.normal(0, 0.15, n), 0, 1)
    quality_b = np.clip(ease + rng.normal(0, 0.15, n), 0, 1)
    rows_a = {f"q{i}": {"recall@10": a[i], "ndcg@10": quality_a[i]} for i in range(n)}
    rows_b = {f"q{i}": {"recall@10": b[i], "ndcg@10": quality_b[i]} for i in range(n)}
    return rows_a, rows_b


@pytest.mark.parametrize("metric", ["recall@10", "ndcg@10"])
def test_false_alarm_rate_on_seeded_a_a_comparisons(metric: str) -> None:
    rng = np.random.default_rng(20240601)
    alarms = 0
    pairs = 200
    for _ in range(pairs):
        rows_a, rows_b = _same_distribution_pair(rng, 80)
        outcome = compare_item_rows(
            rows_a,
            rows_b,
            path_a=Path("a"),
            path_b=Path("b"),
            stage_a="bm25",
            stage_b="bm25",
            metric=metric,
            settings=ItemsSettings(
                guardrail_metrics=[], resamples=500, seed=int(rng.integers(0, 2**31))
            ),
        )
        alarms += outcome.decision.verdict != "inconclusive"
    assert alarms / pairs <= 0.07


def test_a_a_comparisons_through_the_cli_are_inconclusive(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    for index in range(2):
        rows_a, rows_b = _same_distribution_pair(rng, 120)
        a = write(tmp_path / f"a{index}.items.jsonl", {"bm25": rows_a})
        b = write(tmp_path / f"b{index}.items.jsonl", {"bm25": rows_b})
        result = compare(str(a), str(b), "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["verdict"] == "inconclusive"


def test_a_named_guardrail_must_be_in_both_files(files: dict[str, Path], tmp_path: Path) -> None:
    asked = compare(str(files["a"]), str(files["better"]), "--guardrail", "mrr")
    assert asked.exit_code == 0, asked.output
    assert "mrr (guardrail)" in asked.output
    assert "ndcg@10 (guardrail)" not in asked.output
    typo = compare(str(files["a"]), str(files["better"]), "--guardrail", "recal@10")
    assert typo.exit_code == 2
    assert typo.output.count("\n") == 1, typo.output
    assert "--guardrail 'recal@10'" in typo.output
    assert "a.items.jsonl: query 'q000' has no 'recal@10'" in typo.output
    # A guardrail missing from one row of B (hand-edited or cut short) is named, not dropped.
    partial = rows([1] * 50 + [1] * 30 + [0] * 20, 1)
    del partial["q007"]["mrr"]
    cut = write(tmp_path / "cut.items.jsonl", {"bm25": partial})
    missing = compare(str(files["a"]), str(cut), "--guardrail", "mrr")
    assert missing.exit_code == 2
    assert "cut.items.jsonl: query 'q007' has no 'mrr'" in missing.output
    # Unnamed, the default guardrails are the ones both files hold in every row.
    default = compare(str(files["a"]), str(cut))
    assert default.exit_code == 0, default.output
    assert "mrr (guardrail)" not in default.output
    assert "ndcg@10 (guardrail)" in default.output
    assert "not compared: mrr (missing from some rows" in default.output
