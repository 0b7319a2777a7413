"""`grk doctor`: what is installed, the device a dense stage would use, where the caches are."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.cli.commands import _doctor


def test_doctor_reports_the_installation_as_json(repo_root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "groundkit.cli", "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["groundkit"]["groundkit-cli"] == metadata.version("groundkit-cli")
    assert set(facts["groundkit"]) >= {"groundkit-core-judgments", "groundkit-stats-bootstrap"}
    # The extras are groundkit-cli's own, as pyproject.toml declares them.
    project = tomllib.loads((repo_root / "packages/cli/pyproject.toml").read_text("utf-8"))
    assert set(facts["extras"]) == set(project["project"]["optional-dependencies"])
    assert "sentence-transformers" in facts["extras"]["dense"]
    # Without torch (an install without the dense extra) the device says why it is the CPU.
    assert facts["torch"]["device"].split(" ", 1)[0] in {"cpu", "cuda", "mps"}
    assert "groundkit" in facts["caches"]["embeddings"]


def test_doctor_says_what_is_missing_and_where_a_dense_stage_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = _doctor._version
    monkeypatch.setattr(
        _doctor, "_version", lambda name: None if name in {"torch", "faiss-cpu"} else real(name)
    )
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "faiss       missing faiss-cpu" in result.output
    assert 'dense stages with device = "auto" run on: cpu (torch is not installed)' in result.output
    assert "judge answers" in result.output
