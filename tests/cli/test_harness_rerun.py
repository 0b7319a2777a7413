"""Chunk fixes replayed exactly: `rerun_chunk_fixes` and `grk eval diagnose --rerun`.

The reference for every replayed gain is an independent run: `grk eval run` with the variant
chunker, in its own process, scored by the harness as any run is; the replay must equal the
difference of the two reports' recall@k.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.cli._process import grk_process

from groundkit.diagnosis import chunk_variant, diagnose, fixes
from groundkit.harness.analysis import rerun_chunk_fixes
from groundkit.harness.run import ReproductionRefusedError
from groundkit.judgments import CharsChunker, load_report

_WORDS = [f"w{n:03d}" for n in range(150)]


def _write_inputs(folder: Path, seed: int = 11) -> None:
    """24 documents of 9 random sentences; each query quotes three consecutive sentences."""
    rng = random.Random(seed)
    corpus = folder / "corpus"
    corpus.mkdir()
    lines = []
    for d in range(24):
        sentences = [
            " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 12))).capitalize() + "."
            for _ in range(9)
        ]
        doc = f"doc-{d:02d}.txt"
        (corpus / doc).write_text(" ".join(sentences), encoding="utf-8")
        for s in rng.sample(range(7), 2):
            quote = " ".join(sentences[s : s + 3])
            words = quote.replace(".", "").lower().split()
            query = " ".join(rng.sample(words, 3) + rng.sample(_WORDS, 2))
            gold = [{"doc": doc, "quote": quote}]
            lines.append(json.dumps({"query_id": f"q-{d:02d}-{s}", "query": query, "gold": gold}))
    (folder / "judgments.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _grk(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The bare environment these tests have always run with (no HOME, no PYTHONPATH).
    return grk_process(
        folder, *args, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    )


def _run(folder: Path, chunker: str, name: str) -> Path:
    done = _grk(
        folder,
        *("eval", "run", "--corpus", "corpus", "--judgments", "judgments.jsonl"),
        *("--chunker", chunker, "--report", f"{name}.json", "--no-progress", "--resamples", "200"),
    )
    assert done.returncode == 0, done.stderr
    return folder / f"{name}.json"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("rerun")
    _write_inputs(folder)
    out: dict[str, Any] = {"folder": folder, "a": _run(folder, "chars:60:10", "a")}
    # the variants of chars:60:10, each run apart as a user would apply the fix
    for fix, spec in (
        ("larger-chunks", "chars:120:20"),
        ("smaller-chunks", "chars:30:5"),
        ("chunk-overlap", "chars:60:30"),
    ):
        out[fix] = _run(folder, spec, fix)
    return out


def _recall(path: Path, k: int = 10) -> float:
    return load_report(path).stage("bm25").aggregates[f"recall@{k}"].mean


def test_variants_are_the_chunkers_a_user_would_apply(runs: dict[str, Any]) -> None:
    base = CharsChunker(size=60, overlap=10)
    assert chunk_variant(base, "larger-chunks") == CharsChunker(size=120, overlap=20)
    assert chunk_variant(base, "smaller-chunks") == CharsChunker(size=30, overlap=5)
    assert chunk_variant(base, "chunk-overlap") == CharsChunker(size=60, overlap=30)


def test_replayed_gains_equal_independent_runs(runs: dict[str, Any]) -> None:
    report = load_report(runs["a"])
    reruns = rerun_chunk_fixes(runs["a"], "bm25")
    assert [r.fix for r in reruns] == ["chunk-overlap", "larger-chunks", "smaller-chunks"]
    diagnosis = diagnose(report, "bm25", k=10, reruns=reruns)
    by_name = {f.name: f for f in fixes(diagnosis)}
    before = _recall(runs["a"])
    for fix in ("larger-chunks", "smaller-chunks", "chunk-overlap"):
        measured = _recall(runs[fix]) - before
        expected, ceiling = by_name[fix].expected, by_name[fix].ceiling
        assert by_name[fix].exact
        assert expected == pytest.approx(measured, abs=1e-12), fix
        assert expected is not None
        assert ceiling is not None
        assert expected <= ceiling
    # the variants change the rankings here, so equal figures are not zero against zero
    assert all(by_name[fix].expected for fix in ("larger-chunks", "smaller-chunks"))


def test_a_changed_corpus_is_refused(runs: dict[str, Any], tmp_path: Path) -> None:
    moved = tmp_path / "corpus"
    moved.mkdir()
    for file in (runs["folder"] / "corpus").iterdir():
        moved.joinpath(file.name).write_text(file.read_text() + " extra", encoding="utf-8")
    with pytest.raises(ReproductionRefusedError):
        rerun_chunk_fixes(runs["a"], "bm25", corpus=moved)


def test_diagnose_replays_a_bm25_stage_by_default(runs: dict[str, Any]) -> None:
    folder = runs["folder"]
    before = (folder / "a.json").read_bytes()
    done = _grk(folder, "eval", "diagnose", "a.json", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    larger = next(f for f in payload["fixes"] if f["name"] == "larger-chunks")
    assert larger["exact"]
    assert larger["expected"] == pytest.approx(_recall(runs["larger-chunks"]) - _recall(runs["a"]))
    assert "the stage re-run with chunks chars:120:20 instead of chars:60:10" in larger["basis"]
    assert (folder / "a.json").read_bytes() == before  # nothing written but what was asked

    estimated = _grk(folder, "eval", "diagnose", "a.json", "--json", "--no-rerun")
    assert estimated.returncode == 0, estimated.stderr
    larger = next(f for f in json.loads(estimated.stdout)["fixes"] if f["name"] == "larger-chunks")
    assert not larger["exact"]


def test_inputs_not_found_fall_back_or_fail_in_one_line(
    runs: dict[str, Any], tmp_path: Path
) -> None:
    # a copied report whose corpus is not beside it: estimates and a note by default...
    copy = tmp_path / "a.json"
    copy.write_bytes(runs["a"].read_bytes())
    done = _grk(tmp_path, "eval", "diagnose", "a.json")
    assert done.returncode == 0, done.stderr
    assert "the chunk fixes are estimated: the stage could not be run again" in done.stdout
    # ...and one line, exit 2, when the re-run was asked for
    asked = _grk(tmp_path, "eval", "diagnose", "a.json", "--rerun")
    assert asked.returncode == 2, asked.stdout + asked.stderr
    lines = [line for line in asked.stderr.splitlines() if line.strip()]
    assert len(lines) == 1
    assert "corpus" in lines[0]
    assert "--corpus" in lines[0]
    # given where the inputs are now, it replays
    moved = _grk(
        tmp_path,
        *("eval", "diagnose", "a.json", "--rerun", "--json"),
        *("--corpus", str(runs["folder"] / "corpus")),
        *("--judgments", str(runs["folder"] / "judgments.jsonl")),
    )
    assert moved.returncode == 0, moved.stderr
    larger = next(f for f in json.loads(moved.stdout)["fixes"] if f["name"] == "larger-chunks")
    assert larger["exact"]


def test_only_packages_the_stage_uses_are_checked(runs: dict[str, Any]) -> None:
    report = load_report(runs["a"])
    versions = dict(report.run.package_versions)
    assert "bm25s" in versions
    # a dense stage of the same run recorded torch: not loaded for a BM25 re-run, not refused
    other = {**versions, "torch": "9.9.9"}
    unused = report.model_copy(
        update={"run": report.run.model_copy(update={"package_versions": other})}
    )
    inputs = {"corpus": runs["folder"] / "corpus", "judgments": runs["folder"] / "judgments.jsonl"}
    assert len(rerun_chunk_fixes(unused, "bm25", fixes=["larger-chunks"], **inputs)) == 1
    # the stage's own package at another version would not replay the same stage
    moved = {**versions, "bm25s": "0.0.1"}
    changed = report.model_copy(
        update={"run": report.run.model_copy(update={"package_versions": moved})}
    )
    with pytest.raises(ReproductionRefusedError, match=r"bm25s 0\.0\.1 recorded"):
        rerun_chunk_fixes(changed, "bm25", fixes=["larger-chunks"], **inputs)
