from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.judgments import load_judgments


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


GOLD = [{"doc": "a.md", "quote": "Employees get 25 days of paid leave."}]


@pytest.fixture
def three(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "judgments.jsonl",
        [
            {
                "query_id": "q1",
                "query": "How many days of paid leave do employees get?",
                "gold": GOLD,
            },
            {
                "query_id": "q2",
                "query": "How many days of paid leave do employees get each?",
                "gold": GOLD,
            },
            {"query_id": "q3", "query": "Leave?", "gold": [{"doc": "a.md", "quote": "not there"}]},
        ],
    )


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.md").write_text("Employees get 25 days of paid leave. Managers approve it.\n")
    return folder


def test_assess(three: Path, corpus: Path) -> None:
    result = CliRunner().invoke(cli, ["evalset", "assess", str(three), "--corpus", str(corpus)])
    assert result.exit_code == 0, result.output
    assert "3 questions, 3 answerable, 0 reviewed, 2 portable" in result.output
    assert "detects differences of 1.536 or more" in result.output  # t quantiles at n = 3
    assert "paired, per-query differences ±1" in result.output
    assert "CAUTION: no model for the general-knowledge filter" in result.output
    assert "q3" in result.output  # unresolved gold named


def test_assess_strict_fails_on_caution(three: Path) -> None:
    result = CliRunner().invoke(cli, ["evalset", "assess", str(three), "--strict"])
    assert result.exit_code == 1
    assert "--strict" in result.output


def test_assess_with_scores(three: Path, tmp_path: Path) -> None:
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"q1": 1.0, "q2": [1.0, 0.0], "q3": 0.5}))
    result = CliRunner().invoke(cli, ["evalset", "assess", str(three), "--scores", str(scores)])
    assert result.exit_code == 0, result.output
    assert "aced by all 2 systems" in result.output


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "scores.json:1: not JSON"),
        ("[1, 2]", "scores must be a JSON object"),
        ('{"q1": "high"}', "q1: score must be a number"),
        ('{"q1": 3}', "q1: score must be in [0, 1]"),
    ],
)
def test_bad_scores_exit_2_one_line(
    three: Path, tmp_path: Path, content: str, expected: str
) -> None:
    scores = tmp_path / "scores.json"
    scores.write_text(content)
    result = CliRunner().invoke(cli, ["evalset", "assess", str(three), "--scores", str(scores)])
    assert result.exit_code == 2
    assert expected in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_bad_judgments_exit_2_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"query_id": "ok", "query": "A fine question?", "category": "unanswerable"}\n'
        '{"query_id": "Bad Id", "query": "x"}\n'
    )
    for command in ("assess", "filter", "classify", "review"):
        args = ["evalset", command, str(bad)] + (
            ["-o", str(tmp_path / "o.jsonl")] if command == "filter" else []
        )
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (command, result.output)
        assert "bad.jsonl:2" in result.output
        assert len(result.output.strip().splitlines()) == 1


def test_model_options_go_together(three: Path) -> None:
    result = CliRunner().invoke(cli, ["evalset", "assess", str(three), "--model", "m"])
    assert result.exit_code == 2
    assert "--model and --base-url go together" in result.output
    bad_url = CliRunner().invoke(
        cli, ["evalset", "assess", str(three), "--model", "m", "--base-url", "ftp://x"]
    )
    assert bad_url.exit_code == 2
    assert "not an http(s) URL" in bad_url.output


def test_filter_writes_kept_with_bumped_version(three: Path, corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "kept.jsonl"
    rejected = tmp_path / "rejected.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "evalset",
            "filter",
            str(three),
            "-o",
            str(out),
            "--corpus",
            str(corpus),
            "--rejected",
            str(rejected),
        ],
    )
    assert result.exit_code == 0, result.output
    kept = load_judgments(out)
    assert [j.query_id for j in kept] == ["q1"]
    assert kept[0].meta["set_version"] == 1
    rows = [json.loads(line) for line in rejected.read_text().splitlines()]
    assert {(r["filter"], r["query_id"]) for r in rows} == {
        ("too-short", "q3"),
        ("near-duplicate", "q2"),
    }
    assert "general-knowledge did not run" in result.output
    assert "kept 1 of 3" in result.output


def test_classify(three: Path, tmp_path: Path) -> None:
    out = tmp_path / "typed.jsonl"
    result = CliRunner().invoke(cli, ["evalset", "classify", str(three), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [j.qtype for j in load_judgments(out)] == ["numeric", "numeric", "factoid"]
    assert "numeric" in result.output
    dry = CliRunner().invoke(cli, ["evalset", "classify", str(three)])
    assert dry.exit_code == 0
    assert "wrote" not in dry.output
