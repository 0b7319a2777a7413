"""`grk eval run`: flags, config files, outputs and every exit code (CliRunner)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli
from groundkit.harness import load_items
from groundkit.judgments import load_report
from groundkit.judgments.report import MEASURED_FIGURES, check_report

TOPICS = [
    ("leave", "Parental leave lasts sixteen weeks at full pay for every new parent."),
    ("expenses", "Receipts for travel expenses must be filed within thirty days of the trip."),
    ("oncall", "The on-call engineer acknowledges a page within fifteen minutes, day or night."),
    ("laptops", "Every employee receives a laptop that is replaced after four years of service."),
    ("security", "Passwords are rotated yearly and stored only in the approved secrets vault."),
    ("reviews", "Performance reviews happen twice a year, in March and in September."),
    ("deploys", "Production deploys are frozen from the twentieth of December to early January."),
    ("backups", "Database backups are restored in a drill on the first Monday of each quarter."),
]
FILLER = (
    "This section gives background that rarely answers a question. It mentions teams, "
    "schedules and a few general principles of working together in the company."
)


def make_corpus(root: Path) -> tuple[Path, Path]:
    """A small corpus (one document per topic, padded with filler) and its judgments."""
    corpus = root / "corpus"
    corpus.mkdir()
    lines = []
    for name, fact in TOPICS:
        text = "\n\n".join([f"# {name.title()}", FILLER, fact, FILLER])
        (corpus / f"{name}.md").write_text(text + "\n", encoding="utf-8")
        words = fact.split()
        lines.append(
            {
                "query_id": f"q-{name}",
                "query": " ".join(words[:6]) + "?",
                "gold": [{"doc": f"{name}.md", "quote": fact}],
            }
        )
    lines.append(
        {
            "query_id": "q-none",
            "query": "What is the office dog called?",
            "category": "unanswerable",
        }
    )
    judgments = root / "judgments.jsonl"
    judgments.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return corpus, judgments


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    return make_corpus(tmp_path)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, ["eval", "run", *args])


def base_args(data: tuple[Path, Path], out: Path) -> list[str]:
    corpus, judgments = data
    return [
        "--corpus",
        str(corpus),
        "--judgments",
        str(judgments),
        "--report",
        str(out / "report.json"),
        "--resamples",
        "200",
    ]


def script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "retriever.py"
    path.write_text(body, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


ECHO_RETRIEVER = """
import json, sys
for line in sys.stdin:
    q = json.loads(line)
    name = q["query_id"][2:]
    hit = {"doc": name + ".md", "text": q["query"].rstrip("?")}
    print(json.dumps({"query_id": q["query_id"], "hits": [hit]}))
"""


def test_flags_run_writes_report_and_items(data: tuple[Path, Path], tmp_path: Path) -> None:
    result = invoke(
        *base_args(data, tmp_path),
        "--chunker",
        "paragraphs",
        "--stage",
        "small=bm25@chars:60:10",
        "--hybrid",
        "both=bm25,small",
    )
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "report.json")
    assert [s.name for s in report.stages] == ["bm25", "small", "both"]
    assert report.stages[0].chunker_record == {"kind": "paragraphs", "max_chars": 1000}
    assert report.stages[1].chunker_record == {"kind": "chars", "size": 60, "overlap": 10}
    assert check_report(json.loads((tmp_path / "report.json").read_text())) == []
    assert report.run.bootstrap.resamples == 200
    assert report.run.command is not None
    assert "--hybrid" in report.run.command
    items = load_items(tmp_path / "report.items.jsonl")
    assert [s.name for s in items.stages] == ["bm25", "small", "both"]
    for word in ("bm25 (baseline)", "small", "both", "recall@10", "detection limit", "notes"):
        assert word in result.output
    verdicts = ("better", "worse", "inconclusive", "too few queries")
    assert any(verdict in result.output for verdict in verdicts)


def test_config_file_and_flag_overrides(data: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, judgments = data
    config = tmp_path / "groundkit.toml"
    config.write_text(
        f'corpus = "{corpus.name}"\njudgments = "{judgments.name}"\n'
        'chunker = { kind = "paragraphs" }\n'
        '[bootstrap]\nseed = 5\n\n[[stages]]\nname = "wide"\nretriever = { kind = "bm25" }\n'
        'chunker = { kind = "chars", size = 120, overlap = 0 }\n',
        encoding="utf-8",
    )
    result = invoke(
        "--config",
        str(config),
        "--seed",
        "9",
        "--level",
        "document",
        "--report",
        str(tmp_path / "doc.json"),
        "--no-items",
    )
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "doc.json")
    assert report.run.bootstrap.seed == 9
    assert report.run.level == "document"
    assert report.stages[1].name == "wide"
    assert report.stages[1].chunker_record == {"kind": "chars", "size": 120, "overlap": 0}
    assert report.stages[0].chunker_record == {"kind": "paragraphs", "max_chars": 1000}
    assert not (tmp_path / "doc.items.jsonl").exists()


def test_command_stage_through_the_cli(data: tuple[Path, Path], tmp_path: Path) -> None:
    result = invoke(
        *base_args(data, tmp_path), "--command", f"echo={script(tmp_path, ECHO_RETRIEVER)}"
    )
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "report.json")
    assert report.stage("echo").aggregates["recall@10"].mean == 1.0


@pytest.mark.parametrize(
    ("body", "extra", "expected"),
    [
        (
            "import sys\nsys.stderr.write('index file is corrupt\\n')\nsys.exit(3)\n",
            [],
            "index file is corrupt",
        ),
        (
            "import sys, time\nsys.stderr.write('warming up\\n')\nsys.stderr.flush()\n"
            "time.sleep(30)\n",
            ["--command-timeout", "0.5"],
            "timed out",
        ),
        (
            "import sys\nsys.stdin.read()\nsys.stderr.write('nothing to say\\n')\n",
            [],
            "wrote no predictions",
        ),
    ],
    ids=["failing", "timing-out", "silent"],
)
def test_failed_command_stage_exits_one_and_still_writes_the_report(
    data: tuple[Path, Path], tmp_path: Path, body: str, extra: list[str], expected: str
) -> None:
    result = invoke(
        *base_args(data, tmp_path), "--command", f"mine={script(tmp_path, body)}", *extra
    )
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("error: ")
    assert "'mine'" in last
    assert expected in last
    assert "Traceback" not in result.output
    report = load_report(tmp_path / "report.json")
    failed = report.stage("mine")
    assert failed.error is not None
    assert expected in failed.error
    assert report.baseline.aggregates
    if "timed out" in expected:
        assert "warming up" in last  # the stderr tail is quoted


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--chunker", "chars:abc"], "chars:abc"),
        (["--chunker", "pages:3"], "unknown kind 'pages'"),
        (["--stage", "x=bm42"], "unknown retriever 'bm42'"),
        (["--stage", "Bad Name=bm25"], "Bad Name"),
        (["--stage", "a=bm25", "--stage", "a=bm25@document"], "'a' is given twice"),
        (["--hybrid", "bm25,nothing"], "nothing"),
        (["--metric", "recall@ten"], "recall@ten"),
        (["--command", "broken"], "NAME=VALUE"),
    ],
)
def test_bad_flags_exit_two_in_one_line(
    data: tuple[Path, Path], tmp_path: Path, extra: list[str], fragment: str
) -> None:
    result = invoke(*base_args(data, tmp_path), *extra)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert fragment in lines[0]
    assert not (tmp_path / "report.json").exists()


def test_bad_judgments_line_names_file_and_line(data: tuple[Path, Path], tmp_path: Path) -> None:
    judgments = data[1]
    with judgments.open("a", encoding="utf-8") as handle:
        handle.write('{"query_id": "Q X", "query": "?"}\n')
    result = invoke(*base_args(data, tmp_path))
    assert result.exit_code == 2
    line = result.output.strip()
    assert f"{judgments}:10" in line
    assert "\n" not in line


def test_missing_inputs_and_output_folder(data: tuple[Path, Path], tmp_path: Path) -> None:
    nothing = invoke("--report", str(tmp_path / "r.json"))
    assert nothing.exit_code == 2
    assert "--corpus" in nothing.output
    absent = invoke("--corpus", str(tmp_path / "absent"), "--judgments", str(data[1]))
    assert absent.exit_code == 2
    assert "absent" in absent.output
    no_folder = invoke(*base_args(data, tmp_path)[:4], "--report", str(tmp_path / "no" / "r.json"))
    assert no_folder.exit_code == 2
    assert "does not exist" in no_folder.output


def test_bad_config_file_names_the_file(data: tuple[Path, Path], tmp_path: Path) -> None:
    config = tmp_path / "groundkit.toml"
    config.write_text(
        'corpus = "corpus"\njudgments = "judgments.jsonl"\ndepht = 10\n', encoding="utf-8"
    )
    result = invoke("--config", str(config), "--report", str(tmp_path / "r.json"))
    assert result.exit_code == 2
    assert str(config) in result.output
    assert "depht" in result.output
    config.write_text("corpus = \n", encoding="utf-8")
    result = invoke("--config", str(config))
    assert result.exit_code == 2
    assert f"{config}:1" in result.output


def test_debug_shows_a_traceback(data: tuple[Path, Path], tmp_path: Path) -> None:
    data[1].write_text("{broken\n", encoding="utf-8")
    plain = invoke(*base_args(data, tmp_path))
    assert plain.exit_code == 2
    assert "Traceback" not in plain.output
    result = CliRunner().invoke(cli, ["--debug", "eval", "run", *base_args(data, tmp_path)])
    assert result.exit_code == 2
    assert "Traceback" in result.output


def _normalised(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    del data["run"]["created_at"]
    del data["timings"]
    for stage in data["stages"]:
        del stage["timings"]
        # Measured times and memory vary run to run; the counts in the cost record do not.
        for key in MEASURED_FIGURES:
            del stage["cost"][key]
    return data


def test_two_runs_give_identical_reports(
    data: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outputs = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        monkeypatch.chdir(folder)
        result = invoke(
            *base_args(data, Path()), "--stage", "small=bm25@chars:80:20", "--hybrid", "bm25,small"
        )
        assert result.exit_code == 0, result.output
        outputs.append(folder / "report.json")
    assert _normalised(outputs[0]) == _normalised(outputs[1])
    assert _items_without_measurements(tmp_path / "one") == _items_without_measurements(
        tmp_path / "two"
    )


def _items_without_measurements(folder: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (folder / "report.items.jsonl").read_text().splitlines()]
    for line in lines:
        for key in MEASURED_FIGURES:
            line.get("cost", {}).pop(key, None)
    return lines


def test_a_stage_failure_raised_by_the_engine_exits_one(
    data: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groundkit.cli.run import _run as _eval_run
    from groundkit.harness import StageFailed

    def fail(*_: object, **__: object) -> None:
        raise StageFailed("remote", "the service refused", stderr_tail="HTTP 503")

    monkeypatch.setattr(_eval_run, "run_evaluation", fail)
    result = invoke(*base_args(data, tmp_path))
    assert result.exit_code == 1
    assert "HTTP 503" in result.output
    assert not (tmp_path / "report.json").exists()
