"""Every command that reads a report recomputes its comparisons and refuses an edited one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.harness.analysis import comparison_problem
from groundkit.judgments import load_report
from groundkit.judgments.report import parse_report


def _edited(report: Path, tmp_path: Path, field: str, value: Any) -> Path:
    data = json.loads(report.read_text())
    comparison = data["stages"][1]["comparisons"][0]
    comparison[field] = value
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(data))
    return out


def test_a_fresh_report_reproduces_its_comparisons(two_stage_report: Path) -> None:
    report = load_report(two_stage_report)
    assert report.stages[1].comparisons  # there is something to check
    assert comparison_problem(report) is None


@pytest.mark.parametrize(
    "reader",
    [
        ["eval", "compare", "{r}"],
        ["eval", "report", "{r}", "--html", "{t}/page.html"],
        ["eval", "diagnose", "{r}", "--stage", "whole"],
        ["eval", "export", "{r}", "--stage", "whole", "--run", "{t}/r.trec", "--qrels", "{t}/q"],
    ],
)
def test_an_edited_comparison_is_refused_by_every_reader(
    reader: list[str], two_stage_report: Path, tmp_path: Path
) -> None:
    # Core's own checks pass (nothing contradicts the verdict); only the engine can tell.
    stored = load_report(two_stage_report).stages[1].comparisons[0]
    edited = _edited(two_stage_report, tmp_path, "paired_t_p_value", 0.5)
    parse_report(json.loads(edited.read_text()))  # core accepts it
    before = edited.read_bytes()
    args = [a.replace("{r}", str(edited)).replace("{t}", str(tmp_path)) for a in reader]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1, result.output
    assert f"stage 'whole', {stored.metric}: the stored paired_t_p_value is 0.5" in result.output
    assert "edited or damaged" in result.output
    assert edited.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edited.json"]  # nothing written


def test_a_changed_count_is_named(two_stage_report: Path, tmp_path: Path) -> None:
    stored = load_report(two_stage_report).stages[1].comparisons[0]
    edited = _edited(two_stage_report, tmp_path, "effect_size", 9.0)
    problem = comparison_problem(load_report(edited))
    assert problem is not None
    assert problem.startswith(f"stage 'whole', {stored.metric}: the stored effect_size is 9.0")


def test_a_report_from_another_engine_version_is_not_second_guessed(
    two_stage_report: Path, tmp_path: Path
) -> None:
    data = json.loads(two_stage_report.read_text())
    data["run"]["package_versions"]["groundkit-stats-bootstrap"] = "0.0.1"
    data["stages"][1]["comparisons"][0]["paired_t_p_value"] = 0.5
    other = tmp_path / "older.json"
    other.write_text(json.dumps(data))
    assert comparison_problem(load_report(other)) is None
