"""`grk doctor`: what is installed, the device a dense stage would use, where the caches are."""

from __future__ import annotations

import json
import os
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
    cores = facts["cores"]
    assert 1 <= cores["used"] <= cores["processors"]
    if cores["cpu_limit"] is not None:
        assert cores["used"] == min(cores["processors"], -(-cores["cpu_limit"] // 1))


def test_doctor_says_how_many_cores_a_run_uses_and_why(monkeypatch: pytest.MonkeyPatch) -> None:
    import groundkit.stats.kernels as kernels
    from groundkit.stats.kernels import _cores

    # A 1.5-CPU container on a 16-processor node: the count (in _cores) and the doctor's
    # account of it (through the package's name) both see the quota.
    monkeypatch.setattr(_cores, "cgroup_cpu_limit", lambda: 1.5)
    monkeypatch.setattr(kernels, "cgroup_cpu_limit", lambda: 1.5)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(16)), raising=False)
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 0, result.output
    expected = "cores     2 for a run's workers (16 processors allowed, a CPU limit of 1.5 by"
    assert expected in result.output


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
