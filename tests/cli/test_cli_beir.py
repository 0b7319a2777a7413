"""`grk beir adapt` through click's runner and through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.judgments import load_judgments


def write_beir(
    root: Path,
    documents: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    qrels: list[tuple[str, str, int]],
    split: str = "test",
) -> Path:
    (root / "qrels").mkdir(parents=True)
    for name, records in (("corpus", documents), ("queries", queries)):
        lines = "".join(json.dumps(record) + "\n" for record in records)
        (root / f"{name}.jsonl").write_text(lines, encoding="utf-8")
    rows = "".join(f"{q}\t{d}\t{s}\n" for q, d, s in qrels)
    (root / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows)
    return root


@pytest.fixture
def small_beir(tmp_path: Path) -> Path:
    return write_beir(
        tmp_path / "beir",
        [
            {"_id": "d1", "title": "Aspirin", "text": "Aspirin thins the blood."},
            {"_id": "d2", "title": "", "text": "Ibuprofen reduces fever."},
            {"_id": "d3", "title": "Trains", "text": "Unrelated."},
        ],
        [{"_id": "q1", "text": "What thins the blood?"}, {"_id": "q2", "text": "Fever?"}],
        [("q1", "d1", 1), ("q2", "d2", 2), ("q2", "d3", 0)],
    )


@pytest.fixture
def dbpedia_like(tmp_path: Path) -> Path:
    return write_beir(
        tmp_path / "dbpedia",
        [
            {"_id": "<dbpedia:Oceanic_Airlines>", "title": "Oceanic", "text": "An airline."},
            {"_id": "<dbpedia:Trains>", "title": "", "text": "Rail."},
        ],
        [{"_id": "SemSearch_ES-2", "text": "oceanic airlines"}],
        [("SemSearch_ES-2", "<dbpedia:Oceanic_Airlines>", 2)],
    )


def test_adapt_prints_summary(small_beir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["beir", "adapt", str(small_beir), str(out)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"adapted BEIR split 'test' from {small_beir.absolute()}")
    assert "documents: 3 (" in lines[1]
    assert str(out.absolute() / "corpus") in lines[1]
    assert "judgments: 2 queries, 2 relevant documents" in lines[2]
    assert lines[3] == (
        "  id map: 0 document and 0 query ids renamed, every document named <id>.txt -> "
        f"{out.absolute() / 'id_map.json'}"
    )
    assert lines[4].startswith("note: ")
    assert "not comparable to published BEIR numbers" in lines[4]
    assert "grk eval run --level document" in lines[4]
    assert len(lines) == 5  # no progress bar when the output is not a terminal
    assert [j.query_id for j in load_judgments(out / "judgments.jsonl")] == ["q1", "q2"]


def test_bad_input_is_one_line_exit_2_and_writes_nothing(small_beir: Path, tmp_path: Path) -> None:
    with (small_beir / "qrels" / "test.tsv").open("a") as handle:
        handle.write("q1\tmissing-doc\t1\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["beir", "adapt", str(small_beir), str(out)])
    assert result.exit_code == 2
    message = result.output.strip()
    assert "\n" not in message
    assert message.startswith("error: ")
    assert "test.tsv:5: document id 'missing-doc' is not in the corpus" in message
    assert "Traceback" not in result.output
    assert not out.exists()


def test_strict_refusal_names_the_option_then_slug_succeeds(
    dbpedia_like: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    refused = CliRunner().invoke(cli, ["beir", "adapt", str(dbpedia_like), str(out)])
    assert refused.exit_code == 2
    assert "'<dbpedia:Oceanic_Airlines>'" in refused.output
    assert "--id-mapping slug" in refused.output
    assert not out.exists()

    result = CliRunner().invoke(
        cli, ["beir", "adapt", str(dbpedia_like), str(out), "--id-mapping", "slug"]
    )
    assert result.exit_code == 0, result.output
    assert "id map: 2 document and 1 query ids renamed" in result.output
    id_map = json.loads((out / "id_map.json").read_text())
    assert id_map["document_suffix"] == ".txt"
    assert set(id_map["documents"]) == {"<dbpedia:Oceanic_Airlines>", "<dbpedia:Trains>"}
    assert list(id_map["queries"]) == ["SemSearch_ES-2"]


def test_split_option(small_beir: Path, tmp_path: Path) -> None:
    (small_beir / "qrels" / "dev.tsv").write_text("q1\td3\t1\n")  # headerless
    result = CliRunner().invoke(
        cli, ["beir", "adapt", str(small_beir), str(tmp_path / "out"), "--split", "dev"]
    )
    assert result.exit_code == 0, result.output
    assert "judgments: 1 queries, 1 relevant documents" in result.output
    bad = CliRunner().invoke(
        cli, ["beir", "adapt", str(small_beir), str(tmp_path / "o2"), "--split", "../dev"]
    )
    assert bad.exit_code == 2
    assert "split name '../dev' is not allowed" in bad.output
    assert not (tmp_path / "o2").exists()


def test_unknown_id_mapping_choice_is_a_usage_error(small_beir: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["beir", "adapt", str(small_beir), str(tmp_path / "out"), "--id-mapping", "loose"]
    )
    assert result.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_help_mentions_layout() -> None:
    result = CliRunner().invoke(cli, ["beir", "adapt", "--help"])
    assert result.exit_code == 0
    assert "--id-mapping [strict|slug]" in result.output
    assert "qrels/<split>.tsv" in result.output


def test_real_subprocess(small_beir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "NO_COLOR": "1"}
    command = [sys.executable, "-m", "groundkit.cli", "beir", "adapt", str(small_beir), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "judgments: 2 queries" in done.stdout
    assert done.stderr == ""
    assert len(load_judgments(out / "judgments.jsonl")) == 2

    # Adapting again replaces the earlier adaptation as a whole.
    before = (out / "judgments.jsonl").read_bytes()
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    assert (out / "judgments.jsonl").read_bytes() == before

    other = tmp_path / "other"
    (other / "corpus").mkdir(parents=True)
    (other / "corpus" / "mine.txt").write_text("a user's document")
    refused = subprocess.run(
        [*command[:-1], str(other)], capture_output=True, text=True, env=env, timeout=120
    )
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr.count("\n") == 1
    assert refused.stderr.startswith("error: ")
    assert "corpus folder is not empty" in refused.stderr


def test_relative_paths_on_the_command_line(
    small_beir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(small_beir.parent)
    result = CliRunner().invoke(cli, ["beir", "adapt", f"{small_beir.name}/", "out-rel/"])
    assert result.exit_code == 0, result.output
    assert len(load_judgments(tmp_path / "out-rel" / "judgments.jsonl")) == 2
