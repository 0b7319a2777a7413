"""A report from elsewhere is data: it runs no code it names, and reads nothing outside its corpus.

`grk eval reproduce` refuses a stage whose kind runs code (a command, a Python function, a
framework object, a plugin, a rerank with a ``target``) unless ``--trust-report``; a marker
file the command would create proves that nothing ran. A hit naming ``../../etc/passwd`` (or
a span past its document's end) is refused by every command that reads the report's
documents, with exit 2, one line naming the report, and nothing written.
"""

from __future__ import annotations

import importlib.resources
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli

STAGE = "bm25-document"


def _grk(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [os.fspath(a) for a in args])


def _error_line(result: Result) -> str:
    text = result.output  # standard output and error, as a terminal shows them
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in text
    return lines[0]


def _state(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A real run of three BM25 stages on the packaged demo data: (report, corpus)."""
    out = tmp_path_factory.mktemp("recorded")
    root = importlib.resources.files("groundkit.harness") / "demo_data"
    with importlib.resources.as_file(root) as folder:
        config = out / "run.toml"
        config.write_text(
            f"corpus = {str(folder / 'corpus')!r}\n"
            f"judgments = {str(folder / 'judgments.jsonl')!r}\n"
            + "".join(
                f'[[stages]]\nname = "{name}"\nretriever = {{ kind = "bm25" }}\n'
                f"chunker = {chunker!r}\n"
                for name, chunker in (
                    ("bm25", "paragraphs:1000"),
                    ("bm25-chars", "chars:200:0"),
                    (STAGE, "document"),
                )
            ),
            encoding="utf-8",
        )
        result = _grk(
            "eval", "run", "--config", config, "--report", out / "run.json", "--no-items",
            "--resamples", "20",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        page = _grk("eval", "report", out / "run.json", "--html", out / "page.html")
        assert page.exit_code == 0, page.output
        yield out / "run.json", folder / "corpus"


def _edited(recorded: Path, folder: Path, edit: Any) -> Path:
    data = json.loads(recorded.read_text(encoding="utf-8"))
    edit(data)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _with_retriever(retriever: dict[str, Any]) -> Any:
    def edit(data: dict[str, Any]) -> None:
        stage = next(s for s in data["run"]["config"]["stages"] if s["name"] == STAGE)
        stage["retriever"] = retriever
        stage.pop("chunker", None)

    return edit


def _marker_command(marker: Path) -> dict[str, Any]:
    code = f"import pathlib; pathlib.Path({os.fspath(marker)!r}).write_text('ran')"
    return {"kind": "command", "argv": [sys.executable, "-c", code]}


# --- reproduce ----------------------------------------------------------------------------


def test_reproduce_refuses_a_command_stage_and_runs_nothing(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    report = _edited(recorded[0], tmp_path / "work", _with_retriever(_marker_command(marker)))
    before = _state(tmp_path)
    result = _grk("eval", "reproduce", report)
    assert result.exit_code == 2, result.output
    line = _error_line(result)
    assert f"stage {STAGE!r} (command)" in line
    assert "--trust-report" in line
    assert "edited.json" in line
    assert not marker.exists()  # the command never ran
    assert _state(tmp_path) == before


def test_reproduce_with_trust_report_runs_it_and_says_so(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    report = _edited(recorded[0], tmp_path / "work", _with_retriever(_marker_command(marker)))
    result = _grk("eval", "reproduce", report, "--trust-report")
    assert marker.read_text(encoding="utf-8") == "ran"
    assert f"running code named by the report: stage {STAGE!r} (command)" in result.stderr
    # The command printed no predictions: the stage now fails where it once scored.
    assert result.exit_code == 1, result.output


@pytest.mark.parametrize(
    ("retriever", "kind"),
    [
        ({"kind": "callable", "target": "os:system"}, "callable"),
        ({"kind": "langchain", "target": "os:system"}, "langchain"),
        ({"kind": "rerank", "stage": "bm25", "target": "os:system"}, "rerank"),
        ({"kind": "some-plugin", "anything": 1}, "some-plugin"),
        ({"argv": ["true"]}, "unknown kind"),
    ],
)
def test_reproduce_refuses_every_kind_that_runs_code(
    retriever: dict[str, Any], kind: str, recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    report = _edited(recorded[0], tmp_path / "work", _with_retriever(retriever))
    before = _state(tmp_path)
    result = _grk("eval", "reproduce", report)
    assert result.exit_code == 2, result.output
    line = _error_line(result)
    assert f"stage {STAGE!r} ({kind})" in line
    assert "--trust-report" in line
    assert _state(tmp_path) == before


def test_reproduce_of_builtin_kinds_needs_no_trust(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    # A rerank without a target scores with a packaged model: no code of the report's.
    report = _edited(recorded[0], tmp_path / "work", lambda data: None)
    result = _grk("eval", "reproduce", report)
    assert result.exit_code == 0, result.output
    assert "running code" not in result.stderr


# --- documents outside the corpus ---------------------------------------------------------


def _hit_doc(value: str) -> Any:
    def edit(data: dict[str, Any]) -> None:
        data["stages"][0]["hit_columns"]["docs"][0] = value

    return edit


def _past_the_end(data: dict[str, Any]) -> None:
    data["stages"][0]["hit_columns"]["chunk_end"][0] = 10**9


COMMANDS = {
    "export": lambda report, corpus, out: [
        "eval", "export", report, "--stage", "bm25",
        "--run", out / "run.trec", "--qrels", out / "qrels.trec",
    ],
    "sample": lambda report, corpus, out: [
        "eval", "sample", report, "--hits", "--corpus", corpus, "--out", out / "sheet",
    ],
    "html": lambda report, corpus, out: [
        "eval", "report", report, "--corpus", corpus, "--html", out / "page.html",
    ],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(
    ("case", "edit", "named"),
    [
        ("traversal", _hit_doc("../../etc/passwd"), "../../etc/passwd"),
        ("absolute", _hit_doc("/etc/passwd"), "/etc/passwd"),
        ("past the end", _past_the_end, "past the end"),
    ],
)
def test_a_report_naming_files_outside_its_corpus_is_refused(
    command: str,
    case: str,
    edit: Any,
    named: str,
    recorded: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    report = _edited(recorded[0], tmp_path / "work", edit)
    out = tmp_path / "out"
    out.mkdir()
    # An earlier page (of the unedited report) that a new one would replace.
    (out / "page.html").write_bytes(recorded[0].with_name("page.html").read_bytes())
    before = _state(tmp_path)
    result = _grk(*COMMANDS[command](report, recorded[1], out))
    assert result.exit_code == 2, result.output
    line = _error_line(result)
    assert "edited.json" in line
    assert named in line
    assert _state(tmp_path) == before  # nothing written, nothing replaced
