"""The demo's report is small (issue 15, item 4: ≤ 2 MB, 20.6 MB before schema 1.4).

Slow (it runs the demo, ~15 s idle): marked ``benchmark_suite``;
``tests/benchmarks/bench_cli_startup.py`` prints the same figure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.judgments import load_report

REPORT_TARGET_BYTES = 2_000_000


@pytest.mark.benchmark_suite
def test_demo_report_is_at_most_2_mb_and_keeps_every_hit(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "demo", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    path = tmp_path / "report.json"
    assert path.stat().st_size <= REPORT_TARGET_BYTES
    report = load_report(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    for stage, written in zip(report.stages, data["stages"], strict=True):
        # Every hit down to the run's depth is there (diagnosis replays them), as columns.
        assert sum(len(r.hits) for r in stage.queries) == sum(written["hit_columns"]["counts"])
        assert max(len(r.hits) for r in stage.queries) <= report.run.depth
    assert max(len(r.hits) for s in report.stages for r in s.queries) == report.run.depth
