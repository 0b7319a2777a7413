"""`grk eval compare REPORT --baseline A --candidate B`: two stages of one report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.judgments import EvalReport, QueryResult, StageReport, dump_report
from groundkit.judgments.report import GoldEvidence, MetricAggregate, QueryInfo, RunInfo


def _report(stage_scores: dict[str, list[float]], metric: str = "recall@10") -> EvalReport:
    count = len(next(iter(stage_scores.values())))
    queries = [
        QueryInfo(
            query_id=f"q{i:03d}", query=f"question {i}", gold=[GoldEvidence(doc="d", quote="x")]
        )
        for i in range(count)
    ]
    stages = []
    for position, (name, scores) in enumerate(stage_scores.items()):
        mean = float(np.mean(scores))
        stages.append(
            StageReport(
                name=name,
                kind="bm25" if position == 0 else "dense",
                baseline=position == 0,
                queries=[
                    QueryResult(query_id=q.query_id, scores={metric: s, "mrr": s / 2})
                    for q, s in zip(queries, scores, strict=True)
                ],
                aggregates={
                    metric: MetricAggregate(mean=mean, low=mean, high=mean, query_count=count)
                },
            )
        )
    run = RunInfo(
        created_at="2024-01-01T00:00:00Z",
        package_versions={},
        corpus_fingerprint="0" * 64,
        judgments_fingerprint="0" * 64,
        headline_metrics=[metric],
    )
    return EvalReport(run=run, queries=queries, stages=stages)


def _write(tmp_path: Path, stage_scores: dict[str, list[float]]) -> Path:
    path = tmp_path / "report.json"
    dump_report(_report(stage_scores), path)
    return path


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["eval", "compare", *args])


def _scores(seed: int, n: int = 60, p: float = 0.5) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(v) for v in (rng.random(n) < p)]


def test_report_mode_prints_the_paired_bootstrap(tmp_path: Path) -> None:
    base = _scores(1, p=0.3)
    better = [1.0 if i % 3 else b for i, b in enumerate(base)]
    path = _write(tmp_path, {"bm25": base, "dense": better})
    result = _invoke(
        str(path), "--baseline", "bm25", "--candidate", "dense", "--metric", "recall@10"
    )
    assert result.exit_code == 0, result.output
    assert "dense vs bm25 on 60 queries" in result.output
    assert "better" in result.output


def test_report_mode_json_and_worse_exits_one(tmp_path: Path) -> None:
    base = [1.0] * 40 + [0.0] * 20
    worse = [0.0] * 30 + [1.0] * 10 + [0.0] * 20
    path = _write(tmp_path, {"bm25": base, "dense": worse})
    result = _invoke(str(path), "--candidate", "dense", "--json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert data["verdict"] == "worse"
    assert data["difference"] < 0
    assert data["low"] <= data["difference"] <= data["high"]
    assert data["baseline"] == "bm25"


def test_report_mode_unknown_stage_names_it_and_lists_known(tmp_path: Path) -> None:
    path = _write(tmp_path, {"bm25": _scores(1), "dense": _scores(2)})
    result = _invoke(str(path), "--baseline", "bm25", "--candidate", "hybrid")
    assert result.exit_code == 2
    assert "'hybrid'" in result.output
    assert "bm25, dense" in result.output
    assert "Traceback" not in result.output


def test_report_mode_refuses_repeated_stage_names_naming_them(tmp_path: Path) -> None:
    path = _write(tmp_path, {"bm25": _scores(1), "dense": _scores(2), "other": _scores(3)})
    data = json.loads(path.read_text())
    data["stages"][2]["name"] = "dense"
    path.write_text(json.dumps(data))
    result = _invoke(str(path), "--candidate", "dense")
    assert result.exit_code == 2
    assert "'dense'" in result.output
    assert "unique" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_report_mode_unknown_metric_lists_available(tmp_path: Path) -> None:
    path = _write(tmp_path, {"bm25": _scores(1), "dense": _scores(2)})
    result = _invoke(str(path), "--candidate", "dense", "--metric", "ndcg@7")
    assert result.exit_code == 2
    assert "ndcg@7" in result.output
    assert "mrr, recall@10" in result.output


def test_report_mode_unreadable_report_exits_two(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = _invoke(str(bad), "--candidate", "dense")
    assert result.exit_code == 2
    assert "bad.json" in result.output
    assert "Traceback" not in result.output


def test_report_mode_needs_candidate_when_ambiguous(tmp_path: Path) -> None:
    path = _write(tmp_path, {"bm25": _scores(1), "dense": _scores(2), "small": _scores(3)})
    result = _invoke(str(path))
    assert result.exit_code == 2
    assert "--candidate" in result.output


def test_report_mode_four_queries_all_improving_is_not_a_verdict(tmp_path: Path) -> None:
    # Four +1 deltas: the exact test's p is 0.125 whatever happens, so four queries can never
    # be a verdict: report mode says so (items mode does too).
    path = _write(tmp_path, {"bm25": [0.0] * 4, "dense": [1.0] * 4})
    result = _invoke(str(path), "--candidate", "dense", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["low"] > 0.0
    assert data["p_value"] == 0.125
    assert data["verdict"] == "too few queries"
    assert data["comparison"]["minimum_queries"] == 6
    path = _write(tmp_path, {"bm25": [0.0] * 12, "dense": [1.0] * 12})
    data = json.loads(_invoke(str(path), "--candidate", "dense", "--json").output)
    assert data["verdict"] == "better"
