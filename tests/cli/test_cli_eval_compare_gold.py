"""`grk eval compare A B` refuses items scored on different gold or corpus (issue 14, item 6).

The issue's case: relabelling 60 of the demo's 172 queries and comparing two runs of the same
retriever said "worse" and exited 1. It must exit 2 naming both judgments fingerprints.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli
from groundkit.harness import load_items
from groundkit.judgments import Corpus, load_judgments
from groundkit.judgments.gold import judgments_fingerprint

RELABELLED = 60


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def relabel(source: Path, target: Path, count: int) -> None:
    """Rotate the gold of the first ``count`` answerable queries: same ids, other gold."""
    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    answerable = [i for i, line in enumerate(lines) if line.get("gold")]
    assert len(answerable) >= count
    chosen = answerable[:count]
    golds = [lines[i]["gold"] for i in chosen]
    for position, index in enumerate(chosen):
        lines[index]["gold"] = golds[(position + 1) % count]
    target.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def run_items(root: Path, name: str, corpus: Path, judgments: Path) -> Path:
    items = root / f"{name}.items.jsonl"
    result = invoke(
        "eval",
        "run",
        "--corpus",
        str(corpus),
        "--judgments",
        str(judgments),
        "--report",
        str(root / f"{name}.json"),
        "--items",
        str(items),
    )
    assert result.exit_code == 0, result.output
    return items


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two runs of the same BM25 baseline on the demo: the gold as shipped and relabelled."""
    root = tmp_path_factory.mktemp("gold")
    with resources.as_file(resources.files("groundkit.harness") / "demo_data") as demo:
        shutil.copytree(demo / "corpus", root / "corpus")
        shutil.copy(demo / "judgments.jsonl", root / "judgments.jsonl")
    relabel(root / "judgments.jsonl", root / "relabelled.jsonl", RELABELLED)
    edited = root / "edited-corpus"
    shutil.copytree(root / "corpus", edited)
    page = sorted(edited.rglob("*.md"))[0]
    page.write_text(page.read_text(encoding="utf-8") + "\nAn added closing line.\n", "utf-8")
    return {
        "root": root,
        "judgments": root / "judgments.jsonl",
        "relabelled": root / "relabelled.jsonl",
        "corpus": root / "corpus",
        "edited": edited,
        "a": run_items(root, "a", root / "corpus", root / "judgments.jsonl"),
        "b": run_items(root, "b", root / "corpus", root / "relabelled.jsonl"),
        "c": run_items(root, "c", edited, root / "judgments.jsonl"),
    }


def test_demo_has_172_queries_and_the_relabelling_keeps_their_ids(runs: dict[str, Path]) -> None:
    shipped = load_judgments(runs["judgments"])
    relabelled = load_judgments(runs["relabelled"])
    assert sum(1 for j in shipped if j.gold) == 172  # the 172 (answerable) queries
    assert [j.query_id for j in shipped] == [j.query_id for j in relabelled]
    changed = sum(a.gold != b.gold for a, b in zip(shipped, relabelled, strict=True))
    assert changed == RELABELLED


def test_relabelled_gold_exits_2_naming_both_judgments_fingerprints(
    runs: dict[str, Path],
) -> None:
    before = {p: p.read_bytes() for p in (runs["a"], runs["b"])}
    result = invoke("eval", "compare", str(runs["a"]), str(runs["b"]))
    assert result.exit_code == 2, result.output
    shipped = judgments_fingerprint(load_judgments(runs["judgments"]))
    relabelled = judgments_fingerprint(load_judgments(runs["relabelled"]))
    assert shipped != relabelled
    message = result.output.strip()
    assert len(message.splitlines()) == 1
    assert message == (
        f"error: cannot compare: {runs['a']} was scored on judgments {shipped[:12]}… and "
        f"{runs['b']} on {relabelled[:12]}…; pass --allow-different-gold to compare anyway"
    )
    assert "corpus" not in message  # the corpus is the same: only what differs is named
    assert {p: p.read_bytes() for p in before} == before


def test_allow_different_gold_compares_and_says_so(runs: dict[str, Path]) -> None:
    result = invoke(
        "eval", "compare", str(runs["a"]), str(runs["b"]), "--allow-different-gold", "--json"
    )
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.output)
    assert data["verdict"] == "worse"  # what the issue saw: the gold moved, not the retriever
    assert len(data["notes"]) == 1
    assert data["notes"][0].startswith("compared anyway (--allow-different-gold):")
    shown = invoke("eval", "compare", str(runs["a"]), str(runs["b"]), "--allow-different-gold")
    assert "note: compared anyway" in shown.output


def test_same_gold_and_corpus_compare_as_before(runs: dict[str, Path], tmp_path: Path) -> None:
    again = run_items(tmp_path, "again", runs["corpus"], runs["judgments"])
    result = invoke("eval", "compare", str(runs["a"]), str(again), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["verdict"] == "inconclusive"
    assert data["comparison"]["difference"] == 0.0
    assert data["notes"] == []


def test_a_different_corpus_is_refused_naming_both_corpus_fingerprints(
    runs: dict[str, Path],
) -> None:
    result = invoke("eval", "compare", str(runs["a"]), str(runs["c"]))
    assert result.exit_code == 2, result.output
    shipped = Corpus.load(runs["corpus"]).fingerprint()
    edited = Corpus.load(runs["edited"]).fingerprint()
    assert load_items(runs["c"]).stage().corpus_fingerprint == edited
    assert (
        f"{runs['a']} was scored on corpus {shipped[:12]}… and {runs['c']} on {edited[:12]}…"
        in result.output
    )
    assert "judgments" not in result.output


def test_gold_and_corpus_both_differing_are_both_named(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    both = run_items(tmp_path, "both", runs["edited"], runs["relabelled"])
    result = invoke("eval", "compare", str(runs["a"]), str(both))
    assert result.exit_code == 2, result.output
    assert "was scored on judgments" in result.output
    assert " and corpus " in result.output
    assert result.output.count("…") == 4


def strip_fingerprints(source: Path, target: Path) -> Path:
    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line.pop("corpus_fingerprint", None)
        line.pop("judgments_fingerprint", None)
    target.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return target


def test_older_items_without_fingerprints_are_read_with_a_note(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    old_b = strip_fingerprints(runs["b"], tmp_path / "old-b.items.jsonl")
    result = invoke("eval", "compare", str(runs["a"]), str(old_b), "--json")
    assert result.exit_code == 1, result.output  # compared: the relabelled gold looks worse
    data = json.loads(result.output)
    assert data["notes"] == [
        f"{old_b} carries no corpus or judgments fingerprint (written by an older groundkit): "
        "whether both were scored on the same gold and corpus could not be checked"
    ]
    old_a = strip_fingerprints(runs["a"], tmp_path / "old-a.items.jsonl")
    both = json.loads(invoke("eval", "compare", str(old_a), str(old_b), "--json").output)
    assert both["notes"][0].startswith(f"{old_a} and {old_b} carry no corpus")
    shown = invoke("eval", "compare", str(old_a), str(old_b))
    assert "note:" in shown.output
    assert "could not be checked" in " ".join(shown.output.split())


def test_allow_different_gold_is_refused_in_report_mode(runs: dict[str, Path]) -> None:
    result = invoke("eval", "compare", str(runs["root"] / "a.json"), "--allow-different-gold")
    assert result.exit_code == 2
    assert "--allow-different-gold applies to two items files" in result.output


def test_real_subprocess_exits_2_with_one_line(runs: dict[str, Path]) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    command = [sys.executable, "-m", "groundkit.cli", "eval", "compare", str(runs["a"])]
    done = subprocess.run(
        [*command, str(runs["b"])], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "pass --allow-different-gold to compare anyway" in done.stderr
    assert "Traceback" not in done.stderr
