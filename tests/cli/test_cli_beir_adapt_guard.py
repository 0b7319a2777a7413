"""`grk beir adapt SRC OUT` never replaces a file in OUT that it did not write, unless --force.

A user's own ``judgments.jsonl`` looks like the one an adaptation writes; only the folder's
manifest (``.groundkit-beir.json``) says an earlier adaptation wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.adapters_beir.conftest import snapshot, write_beir

from groundkit.cli import cli

USER_JUDGMENTS = '{"query_id": "mine", "query": "My own question?", "gold": []}\n'


def _adapt(source: Path, out: Path, *extra: str) -> Result:
    return CliRunner().invoke(cli, ["beir", "adapt", str(source), str(out), *extra])


def _one_error_line(result: Result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("judgments.jsonl", USER_JUDGMENTS),
        ("id_map.json", '{"mine": true}\n'),
        (".groundkit-beir.json", '{"kind": "something else"}\n'),
    ],
)
def test_a_file_it_did_not_write_is_refused(tmp_path: Path, name: str, content: str) -> None:
    source = write_beir(tmp_path / "beir")
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text(content, encoding="utf-8")
    (out / "notes.txt").write_text("the user's other file\n", encoding="utf-8")
    before = snapshot(out)
    result = _adapt(source, out)
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    assert name in line
    assert "--force" in line
    assert snapshot(out) == before  # byte for byte, no new entry, no temporary left
    assert (out / name).read_bytes() == content.encode("utf-8")


def test_force_replaces_the_users_judgments(tmp_path: Path) -> None:
    source = write_beir(tmp_path / "beir")
    out = tmp_path / "out"
    out.mkdir()
    (out / "judgments.jsonl").write_text(USER_JUDGMENTS, encoding="utf-8")
    (out / "notes.txt").write_text("kept\n", encoding="utf-8")
    result = _adapt(source, out, "--force")
    assert result.exit_code == 0, result.output
    written = (out / "judgments.jsonl").read_text(encoding="utf-8")
    assert written != USER_JUDGMENTS
    assert {json.loads(line)["query_id"] for line in written.splitlines()} == {"q1", "q2", "q3"}
    assert (out / "notes.txt").read_text(encoding="utf-8") == "kept\n"  # not an output
    assert (out / "corpus" / "d1.txt").is_file()


def test_a_second_adaptation_replaces_its_own_output(tmp_path: Path) -> None:
    first = write_beir(tmp_path / "beir-1")
    out = tmp_path / "out"
    assert _adapt(first, out).exit_code == 0
    old = (out / "judgments.jsonl").read_bytes()
    second = write_beir(
        tmp_path / "beir-2",
        documents=[{"_id": "e1", "title": "Other", "text": "Another dataset entirely."}],
        queries=[{"_id": "p1", "text": "Which dataset?"}],
        qrels=[("p1", "e1", 1)],
    )
    result = _adapt(second, out)
    assert result.exit_code == 0, result.output
    new = (out / "judgments.jsonl").read_bytes()
    assert new != old
    assert json.loads(new.decode("utf-8").splitlines()[0])["query_id"] == "p1"
    assert sorted(p.name for p in (out / "corpus").iterdir()) == ["e1.txt"]


def test_an_empty_judgments_file_is_nothing_to_lose(tmp_path: Path) -> None:
    source = write_beir(tmp_path / "beir")
    out = tmp_path / "out"
    out.mkdir()
    (out / "judgments.jsonl").write_bytes(b"")
    result = _adapt(source, out)
    assert result.exit_code == 0, result.output
    assert (out / "judgments.jsonl").stat().st_size > 0
