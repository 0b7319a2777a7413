"""Hostile inputs to `grk`: one-line errors, exit code 2, no traceback, nothing half-written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli

JUDGMENT = {
    "query_id": "refund-window",
    "query": "How long is the refund window?",
    "gold": [{"doc": "refunds.md", "quote": "The refund window is thirty days."}],
}
CORPUS = {
    "refunds.md": "Refunds\n\nThe refund window is thirty days.\n\nAsk the desk.\n",
    "leave.md": "Leave\n\nEveryone gets twenty-five days of annual leave.\n",
}


def _grk(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _assert_input_error(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, SystemExit) or result.exception.code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture
def dataset(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in CORPUS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text(json.dumps(JUDGMENT) + "\n", encoding="utf-8")
    return corpus, judgments


# --- grk evalset filter / classify / generate: output paths -----------------------------------


def test_filter_out_onto_a_folder_is_one_line_exit_2(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    _assert_input_error(_grk("evalset", "filter", dataset[1], "--out", folder), str(folder))


def test_filter_out_into_a_missing_folder_is_one_line_exit_2(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    target = tmp_path / "nope" / "kept.jsonl"
    _assert_input_error(_grk("evalset", "filter", dataset[1], "--out", target), "nope")


def test_filter_bad_rejected_path_writes_nothing(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "kept.jsonl"
    folder = tmp_path / "taken"
    folder.mkdir()
    result = _grk("evalset", "filter", dataset[1], "--out", out, "--rejected", folder)
    _assert_input_error(result, "--rejected")
    assert not out.exists()  # the kept items are not written when the rejections cannot be


def test_filter_out_and_rejected_must_differ(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "kept.jsonl"
    _assert_input_error(
        _grk("evalset", "filter", dataset[1], "--out", out, "--rejected", out), "--rejected"
    )
    assert not out.exists()


def test_classify_out_onto_a_folder_is_one_line_exit_2(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    _assert_input_error(_grk("evalset", "classify", dataset[1], "--out", tmp_path), "--out")


def test_generate_checks_out_before_calling_the_model(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    # Port 9 on loopback refuses connections: a check after the call would exit 1 instead.
    result = _grk(
        "evalset",
        "generate",
        "--corpus",
        dataset[0],
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--timeout",
        "2",
        "--out",
        tmp_path / "nope" / "drafts.jsonl",
    )
    _assert_input_error(result, "--out")


# --- grk eval trec: numbers too large for an integer ------------------------------------------


def _trec_files(tmp_path: Path, relevance: str = "1") -> tuple[Path, Path]:
    qrels = tmp_path / "qrels"
    qrels.write_text(f"q1 0 d1 {relevance}\nq1 0 d2 0\n", encoding="utf-8")
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\n", encoding="utf-8")
    return qrels, run


@pytest.mark.parametrize("measure", ["ndcg_cut.99999999999999999999999", "P.inf", "P.1e400"])
def test_trec_huge_measure_cutoff_is_one_line_exit_2(tmp_path: Path, measure: str) -> None:
    qrels, run = _trec_files(tmp_path)
    _assert_input_error(_grk("eval", "trec", "-m", measure, qrels, run), measure)


def test_trec_huge_relevance_is_one_line_exit_2(tmp_path: Path) -> None:
    qrels, run = _trec_files(tmp_path, relevance="99999999999999999999999")
    _assert_input_error(_grk("eval", "trec", qrels, run), "qrels:1")


# --- bootstrap resamples: huge values -----------------------------------------------------------


def test_run_huge_resamples_flag_names_the_flag(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = _grk(
        "eval",
        "run",
        "--corpus",
        dataset[0],
        "--judgments",
        dataset[1],
        "--resamples",
        "99999999999999999999",
        "--report",
        report,
    )
    assert result.exit_code == 2
    assert "--resamples" in result.output
    assert "Traceback" not in result.output
    assert not report.exists()


def test_run_huge_resamples_in_config_names_the_file(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    config = tmp_path / "run.toml"
    config.write_text(
        f'corpus = "{dataset[0]}"\njudgments = "{dataset[1]}"\n'
        "[bootstrap]\nresamples = 99999999999999999999\n",
        encoding="utf-8",
    )
    report = tmp_path / "r.json"
    result = _grk("eval", "run", "--config", config, "--report", report)
    _assert_input_error(result, "run.toml", "resamples")
    assert not report.exists()


# --- grk eval compare --fail-under: outside [0, 1] ----------------------------------------------


@pytest.mark.parametrize("value", ["-1", "2", "nan", "inf"])
def test_compare_fail_under_out_of_range_is_exit_2(tmp_path: Path, value: str) -> None:
    items = tmp_path / "a.items.jsonl"
    rows = [
        {"stage": "s", "config": {"name": "s"}, "config_hash": "0" * 64},
        *(
            {"stage": "s", "query_id": f"q-{i}", "scores": {"recall@10": float(i % 2)}}
            for i in range(6)
        ),
    ]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = _grk("eval", "compare", items, items, "--fail-under", value)
    assert result.exit_code == 2, result.output
    assert "--fail-under" in result.output
    assert "Traceback" not in result.output


# --- grk eval run: output paths -------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--items", "--html"])
def test_run_outputs_must_not_overwrite_the_report(
    dataset: tuple[Path, Path], tmp_path: Path, flag: str
) -> None:
    report = tmp_path / "same.json"
    args: list[str | Path] = ["eval", "run", "--corpus", dataset[0], "--judgments", dataset[1]]
    args += ["--resamples", "20", "--report", report, flag, report]
    if flag == "--html":
        args.append("--no-items")
    _assert_input_error(_grk(*args), flag)
    assert not report.exists()


def test_run_report_onto_a_non_regular_file_is_refused(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    # A FIFO stands for a device such as /dev/full: renaming over it would replace it.
    import os

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    result = _grk(
        "eval",
        "run",
        "--corpus",
        dataset[0],
        "--judgments",
        dataset[1],
        "--resamples",
        "20",
        "--no-items",
        "--report",
        fifo,
    )
    _assert_input_error(result, "--report", "not a regular file")
    assert fifo.is_fifo()


# --- grk --debug: a traceback for errors the commands raise themselves -------------------------


def test_debug_shows_one_traceback_for_a_command_input_error(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    args = ["evalset", "filter", str(dataset[1]), "--out", str(tmp_path)]
    assert "Traceback" not in _grk(*args).output
    result = CliRunner().invoke(cli, ["--debug", *args])
    assert result.exit_code == 2
    assert result.output.count("Traceback") == 1, result.output
    assert result.output.rstrip().splitlines()[-1].startswith("error: --out")


def test_debug_shows_one_traceback_for_a_library_input_error(tmp_path: Path) -> None:
    qrels, run = _trec_files(tmp_path)
    run.write_text("q1 Q0 d1 1 nan r\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--debug", "eval", "trec", str(qrels), str(run)])
    assert result.exit_code == 2
    assert result.output.count("Traceback") == 1, result.output


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["eval", "run", "--k", "0"], "Invalid value for '--k'"),
        (["eval", "nope"], "No such command 'nope'"),
        (["eval", "compare"], "Missing argument"),
    ],
)
def test_click_usage_errors_are_one_line_exit_2(argv: list[str], needle: str) -> None:
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert needle in lines[0]
    assert "--help" in lines[0]
