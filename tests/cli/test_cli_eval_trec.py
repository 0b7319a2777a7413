"""`grk eval trec` reproduces trec_eval's quick-test outputs (NIST test collection, ../shared).

The commands are read from trec_eval's own ``quicktest_commands.txt``; each ``./trec_eval ARGS |
diff - EXPECTED`` line is run as ``grk eval trec ARGS`` and compared with EXPECTED byte for
byte: all 15 of them (every measure of trec_eval 10, -R prefs/qrels_prefs/qrels_jg, -Z).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.conftest import SHARED_DIR

from groundkit.cli import cli

QUICKTESTS = SHARED_DIR / "data" / "trec_eval" / "quicktest_commands.txt"


def _quicktests(path: Path) -> list[tuple[list[str], str]]:
    cases = []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line.startswith("./trec_eval") or "| diff - " not in line:
            continue
        command, expected = line.split("| diff - ")
        cases.append((shlex.split(command)[1:], expected.strip()))
    return cases


def _cases() -> list[object]:
    if not QUICKTESTS.is_file():  # collected anyway; the shared_data fixture skips them
        return [pytest.param([], "", id="quicktests")]
    params: list[object] = []
    for args, expected in _quicktests(QUICKTESTS):
        judgments = next(Path(a).name for a in args if a.startswith("test/"))
        params.append(pytest.param(args, expected, id=f"{Path(expected).name}-{judgments}"))
    return params


@pytest.fixture(scope="module")
def trec_root(shared_data: Path) -> Path:
    root = shared_data / "trec_eval"
    if not (root / "quicktest_commands.txt").is_file():
        pytest.skip(f"trec_eval test collection not available at {root}")
    return root


def test_every_quicktest_command_is_here(trec_root: Path) -> None:
    assert len(_quicktests(trec_root / "quicktest_commands.txt")) == 15


@pytest.mark.parametrize(("args", "expected_file"), _cases())
def test_quicktest_byte_for_byte(
    trec_root: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], expected_file: str
) -> None:
    monkeypatch.chdir(trec_root)
    result = CliRunner().invoke(cli, ["eval", "trec", *args])
    assert result.exit_code == 0, (args, result.output)
    assert result.output == Path(expected_file).read_text(), args


def test_out_test_byte_for_byte_through_a_real_process(trec_root: Path) -> None:
    produced = subprocess.run(
        [
            sys.executable,
            "-m",
            "groundkit.cli",
            "eval",
            "trec",
            "test/qrels.test",
            "test/results.test",
        ],
        cwd=trec_root,
        capture_output=True,
        check=True,
    ).stdout
    assert produced == (trec_root / "test" / "out.test").read_bytes()


def test_per_query_measure_selection(trec_root: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            "trec",
            "-q",
            "-m",
            "P.5",
            "-m",
            "map",
            str(trec_root / "test/qrels.test"),
            str(trec_root / "test/results.test"),
        ],
    )
    assert result.exit_code == 0
    names = {line.split("\t")[0].strip() for line in result.output.splitlines()}
    assert names == {"map", "P_5"}
    assert result.output.splitlines()[-1].split("\t")[1] == "all"


def test_malformed_run_line_is_one_line_exit_two(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2\n")
    result = CliRunner().invoke(cli, ["eval", "trec", str(qrels), str(run)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert f"{run}:2" in lines[0]


def test_unknown_measure_and_missing_file_exit_two(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 0.5 r\n")
    unknown = CliRunner().invoke(cli, ["eval", "trec", "-m", "nope", str(qrels), str(run)])
    assert unknown.exit_code == 2
    assert "nope" in unknown.output
    missing = CliRunner().invoke(cli, ["eval", "trec", str(qrels), str(tmp_path / "absent")])
    assert missing.exit_code == 2
    assert "absent" in missing.output
    assert "Traceback" not in missing.output
