"""`grk eval trec` reproduces trec_eval's quick-test outputs (NIST test collection, ../shared).

The commands are read from trec_eval's own ``quicktest_commands.txt``; each ``./trec_eval ARGS |
diff - EXPECTED`` line is run as ``grk eval trec ARGS`` and compared with EXPECTED: byte for byte
when every measure is supported, otherwise line for line on the supported measures (the
unsupported ones are listed below and their lines dropped from the expectation).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli

# trec_eval measures groundkit does not implement, and measure parameter forms it refuses.
UNSUPPORTED_MEASURES = {
    "infAP",
    "binG",
    "G",
    "ndcg_rel",
    "Rndcg",
    "rbp",
    "rbp_resid",
    "unj_5",
    "unj_10",
    "unj_20",
    "11pt_avg_.25,.5,.75",
    "ndcg_1=3,2=9,4=4.5",
    "utility_2,-1,0,0",
}
UNSUPPORTED_REQUESTS = {"11pt_avg..25,.5,.75", "ndcg.1=3,2=9,4=4.5", "utility.2,-1,0,0"}
# Features outside the scope of `grk eval trec`: preference judgments (-R), z-scores (-Z).
UNSUPPORTED_FLAGS = ("-R", "-Z")


def _quicktests(root: Path) -> list[tuple[list[str], str]]:
    cases = []
    for raw in (root / "quicktest_commands.txt").read_text().splitlines():
        line = raw.strip()
        if not line.startswith("./trec_eval") or "| diff - " not in line:
            continue
        command, expected = line.split("| diff - ")
        args = shlex.split(command)[1:]
        if any(a.startswith(flag) for a in args for flag in UNSUPPORTED_FLAGS):
            continue
        cases.append((args, expected.strip()))
    return cases


def _drop_unsupported_requests(args: list[str]) -> list[str]:
    out: list[str] = []
    skip_next = False
    for index, arg in enumerate(args):
        if skip_next:
            skip_next = False
            continue
        if arg == "-m" and args[index + 1] in UNSUPPORTED_REQUESTS:
            skip_next = True
            continue
        if arg.startswith("-m") and arg[2:] in UNSUPPORTED_REQUESTS:
            continue
        out.append(arg)
    return out


def _supported_lines(text: str) -> list[str]:
    return [
        line
        for line in text.splitlines()
        if line.split("\t")[0].rstrip() not in UNSUPPORTED_MEASURES
    ]


@pytest.fixture(scope="module")
def trec_root(shared_data: Path) -> Path:
    root = shared_data / "trec_eval"
    if not (root / "quicktest_commands.txt").is_file():
        pytest.skip(f"trec_eval test collection not available at {root}")
    return root


def test_every_supported_quicktest_reproduces_trec_eval(
    trec_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(trec_root)
    cases = _quicktests(trec_root)
    checked = 0
    for args, expected_file in cases:
        if not all(Path(a).is_file() for a in args if a.startswith("test/")):
            continue
        result = CliRunner().invoke(cli, ["eval", "trec", *_drop_unsupported_requests(args)])
        assert result.exit_code == 0, (args, result.output)
        expected = Path(expected_file).read_text()
        if any(
            line.split("\t")[0].rstrip() in UNSUPPORTED_MEASURES for line in expected.splitlines()
        ):
            assert result.output.splitlines() == _supported_lines(expected), args
        else:
            assert result.output == expected, args
        checked += 1
    # out.test (twice), out.comment.test, .a, .aq, .aqc, .aqcM, .aql, .meas_params
    assert checked >= 8


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


def test_aqc_byte_for_byte_on_supported_measures(trec_root: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            "trec",
            "-m",
            "all_trec",
            "-q",
            "-c",
            str(trec_root / "test/qrels.test"),
            str(trec_root / "test/results.trunc"),
        ],
    )
    assert result.exit_code == 0
    assert result.output.splitlines() == _supported_lines(
        (trec_root / "test/out.test.aqc").read_text()
    )


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
