"""A config file gets the flags' answer: numbers given as text or booleans, an empty headline
list and a margin past the metric's scale are one-line errors naming the key (exit 2, nothing
written), never read through pydantic's lax mode; chunks too small for a word no longer fail
inside bm25s."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from groundkit.cli import cli
from groundkit.harness import Bm25Retriever, EvalSettings
from groundkit.judgments import CharsChunker, load_report
from groundkit.judgments.report import BootstrapSettings


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text("Laptops must use full-disk encryption.\n")
    judgment = {"query_id": "q", "query": "laptop", "gold": [{"doc": "a.txt", "quote": "Laptops"}]}
    (tmp_path / "j.jsonl").write_text(json.dumps(judgment) + "\n")
    return tmp_path


def _run(folder: Path, toml: str) -> tuple[int, str]:
    config = folder / "c.toml"
    config.write_text(f'corpus = "corpus"\njudgments = "j.jsonl"\n{toml}\n', encoding="utf-8")
    report = folder / "r.json"
    result = CliRunner().invoke(
        cli, ["eval", "run", "--config", str(config), "--report", str(report), "--no-items"]
    )
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('depth = "100"', "depth: must be a number, not str '100'"),
        ('min_overlap_fraction = "0.5"', "min_overlap_fraction: must be a number, not str"),
        ("cutoffs = [true, 10]", "cutoffs[0]: must be a number, not bool True"),
        ("budgets = [false]", "budgets[0]: must be a number, not bool False"),
        ("headline_metrics = []", "headline_metrics: give at least one metric"),
        ("[bootstrap]\nequivalence_margin = 5", "bootstrap.equivalence_margin"),
        ('[bootstrap]\nresamples = "500"', "bootstrap.resamples: must be a number"),
        ('chunker = {kind = "chars", size = "80"}', "chunker.size: must be a number"),
        (
            '[[stages]]\nname = "b"\nretriever = {kind = "bm25", k1 = "1.2"}',
            "stages[0].retriever.k1: must be a number",
        ),
    ],
)
def test_the_config_file_is_held_to_the_flags(folder: Path, toml: str, message: str) -> None:
    code, output = _run(folder, toml)
    assert code == 2, output
    assert message in output
    assert len(output.strip().splitlines()) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["c.toml", "corpus", "j.jsonl"]


def test_chunks_too_small_for_a_word_find_nothing_instead_of_crashing(folder: Path) -> None:
    # chars:1:0 leaves BM25 no term to index: bm25s itself cannot index that (it raised from
    # inside its own code); a chunk sharing no term with a query is never a hit, so none is.
    code, output = _run(folder, 'chunker = "chars:1:0"')
    assert code == 0, output
    assert "Traceback" not in output
    report = load_report(folder / "r.json")
    assert all(not q.hits for q in report.stage("bm25").queries)
    assert report.stage("bm25").error is None


def test_numbers_still_read_as_numbers(folder: Path) -> None:
    code, output = _run(folder, "depth = 50\nmin_overlap_fraction = 0\ncutoffs = [1, 5]")
    assert code == 0, output


def test_the_python_api_refuses_the_same() -> None:
    for bad in ({"depth": "100"}, {"cutoffs": [True]}, {"headline_metrics": []}):
        with pytest.raises(ValidationError):
            EvalSettings.model_validate(bad)
    with pytest.raises(ValidationError):
        BootstrapSettings(equivalence_margin=5.0)
    with pytest.raises(ValidationError):
        Bm25Retriever.model_validate({"k1": "1.2"})
    with pytest.raises(ValidationError):
        CharsChunker.model_validate({"size": True})
    assert EvalSettings(depth=7, min_overlap_fraction=1).depth == 7  # an int is a number


def test_a_real_subprocess_exits_2(folder: Path) -> None:
    (folder / "c.toml").write_text('corpus = "corpus"\njudgments = "j.jsonl"\ndepth = "9"\n')
    done = subprocess.run(
        [sys.executable, "-m", "groundkit.cli", "eval", "run", "--config", "c.toml",
         "--report", "r.json"],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "error: c.toml: depth: must be a number, not str '9'"
    assert not (folder / "r.json").exists()
