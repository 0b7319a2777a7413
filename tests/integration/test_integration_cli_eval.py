"""End to end through a real process: `python -m groundkit.cli eval run | compare`."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from groundkit.judgments import load_report
from groundkit.judgments.report import check_report

FACTS = {
    "leave": "Parental leave lasts sixteen weeks at full pay for every new parent.",
    "expenses": "Receipts for travel expenses must be filed within thirty days of the trip.",
    "oncall": "The on-call engineer acknowledges a page within fifteen minutes, day or night.",
    "laptops": "Every employee receives a laptop that is replaced after four years of service.",
    "security": "Passwords are rotated yearly and stored only in the approved secrets vault.",
    "reviews": "Performance reviews happen twice a year, in March and in September.",
}
FILLER = "Background that rarely answers anything: teams, schedules and general principles."


def grk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "groundkit.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    judgments = []
    for name, fact in FACTS.items():
        (corpus / f"{name}.md").write_text(f"# {name}\n\n{FILLER}\n\n{fact}\n\n{FILLER}\n")
        judgments.append(
            {
                "query_id": name,
                "query": " ".join(fact.split()[:5]),
                "gold": [{"doc": f"{name}.md", "quote": fact}],
            }
        )
    (tmp_path / "judgments.jsonl").write_text("".join(json.dumps(j) + "\n" for j in judgments))
    return tmp_path


def test_run_then_compare_items(workspace: Path) -> None:
    common = ["--corpus", "corpus", "--judgments", "judgments.jsonl", "--resamples", "200"]
    first = grk(
        "eval", "run", *common, "--chunker", "paragraphs", "--report", "a.json", cwd=workspace
    )
    assert first.returncode == 0, first.stderr
    assert "bm25 (baseline)" in first.stdout
    second = grk(
        "eval", "run", *common, "--chunker", "chars:40:0", "--report", "b.json", cwd=workspace
    )
    assert second.returncode == 0, second.stderr
    for name in ("a.json", "b.json"):
        assert check_report(json.loads((workspace / name).read_text())) == []
    assert load_report(workspace / "b.json").baseline.chunker_record == {
        "kind": "chars",
        "size": 40,
        "overlap": 0,
    }
    compared = grk("eval", "compare", "a.items.jsonl", "b.items.jsonl", "--json", cwd=workspace)
    assert compared.returncode in (0, 1), compared.stderr
    data = json.loads(compared.stdout)
    assert data["verdict"] in ("better", "worse", "inconclusive")
    assert data["comparison"]["item_count"] == len(FACTS)


def test_failed_command_stage_exits_one_with_the_stderr_tail(workspace: Path) -> None:
    failing = workspace / "fail.py"
    failing.write_text("import sys\nsys.stderr.write('model server unreachable\\n')\nsys.exit(4)\n")
    command = f"remote={shlex.quote(sys.executable)} {shlex.quote(str(failing))}"
    result = grk(
        "eval",
        "run",
        "--corpus",
        "corpus",
        "--judgments",
        "judgments.jsonl",
        "--command",
        command,
        "--resamples",
        "100",
        cwd=workspace,
    )
    assert result.returncode == 1
    assert "model server unreachable" in result.stderr
    assert "Traceback" not in result.stderr
    assert load_report(workspace / "groundkit-report.json").stage("remote").error is not None


def test_bad_input_is_one_line_on_stderr_with_exit_two(workspace: Path) -> None:
    (workspace / "judgments.jsonl").write_text('{"query_id": "x"\n')
    result = grk(
        "eval", "run", "--corpus", "corpus", "--judgments", "judgments.jsonl", cwd=workspace
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "judgments.jsonl:1" in lines[0]
    assert not (workspace / "groundkit-report.json").exists()
    debug = grk(
        "--debug",
        "eval",
        "run",
        "--corpus",
        "corpus",
        "--judgments",
        "judgments.jsonl",
        cwd=workspace,
    )
    assert debug.returncode == 2
    assert "Traceback" in debug.stderr
