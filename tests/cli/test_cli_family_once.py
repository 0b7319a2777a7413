"""A report's family is computed once per command: reading it checks it, the command reuses it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import groundkit.harness.analysis._stats as stats_module
from groundkit.cli import cli


@pytest.fixture(scope="module")
def report(two_stage_report: Path) -> Path:
    # The two-stage report of tests/cli/conftest.py (the report-verification tests' too).
    return two_stage_report


def _count_families(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = stats_module._report_family

    def counting(report: object) -> object:
        calls.append(1)
        return real(report)  # type: ignore[arg-type]

    monkeypatch.setattr(stats_module, "_report_family", counting)
    monkeypatch.setattr(stats_module, "_LAST_FAMILY", None)
    return calls


def test_compare_report_computes_the_family_once(
    report: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_families(monkeypatch)
    result = CliRunner().invoke(cli, ["eval", "compare", str(report)])
    assert result.exit_code in (0, 1), result.output
    assert "decided within the report's family" in result.output
    assert len(calls) == 1


def test_overridden_settings_make_a_family_of_their_own(
    report: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_families(monkeypatch)
    result = CliRunner().invoke(cli, ["eval", "compare", str(report), "--seed", "7"])
    assert result.exit_code in (0, 1), result.output
    assert len(calls) == 2  # the recorded settings (the check), then the seed asked for
