"""Edited and corrupted reports, read by every command that reads one.

A report from elsewhere is data: a hit naming a path outside the corpus, a span past the end
of its document, an impossible figure or a broken encoding is one line naming the report,
exit 2, and nothing is written; a harmless variant is read as it is.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.integration.hostile.conftest import Tally, check_case

Edit = Callable[[dict[str, Any]], Any]
REFUSED = 2
EITHER = (0, 2)


def _set(path: str, value: Any) -> Edit:
    """Set the value at a dotted ``path`` (list indexes as numbers) of the report."""

    def edit(report: dict[str, Any]) -> dict[str, Any]:
        *parents, last = path.split(".")
        node: Any = report
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return report

    return edit


def _drop(path: str) -> Edit:
    def edit(report: dict[str, Any]) -> dict[str, Any]:
        *parents, last = path.split(".")
        node: Any = report
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        del node[last]
        return report

    return edit


def _text(transform: Callable[[str], str | bytes]) -> Edit:
    """Edit the report's JSON text instead of its structure."""
    return lambda report: _Raw(transform(json.dumps(report)))


class _Raw:
    def __init__(self, content: str | bytes) -> None:
        self.content = content if isinstance(content, bytes) else content.encode("utf-8")


HITS = "stages.0.hit_columns"
GOLD = "queries.0.gold.0"

# name -> (edit, acceptable exit codes)
CASES: dict[str, tuple[Edit, int | tuple[int, ...]]] = {
    "hit doc traversal": (_set(f"{HITS}.docs.0", "../../etc/passwd"), REFUSED),
    "hit doc absolute": (_set(f"{HITS}.docs.0", "/etc/passwd"), REFUSED),
    "hit doc not in corpus": (_set(f"{HITS}.docs.0", "missing.md"), REFUSED),
    "chunk end past document": (_set(f"{HITS}.chunk_end.0", 10**9), REFUSED),
    "chunk start negative": (_set(f"{HITS}.chunk_start.0", -5), REFUSED),
    "chunk start after end": (_set(f"{HITS}.chunk_start.0", 70), REFUSED),
    "chunk doc out of range": (_set(f"{HITS}.chunk_doc.0", 99), REFUSED),
    "counts too many": (_set(f"{HITS}.counts.0", 1000), REFUSED),
    "chunk data not base64": (_set(f"{HITS}.chunk.data", "!!!"), REFUSED),
    "score dtype object": (_set(f"{HITS}.score.dtype", "|O"), REFUSED),
    "score data short": (_set(f"{HITS}.score.data", "AAAA"), REFUSED),
    "gold span past document": (_set(f"{GOLD}.spans", [[0, 10**12]]), REFUSED),
    "gold span reversed": (_set(f"{GOLD}.spans", [[30, 10]]), REFUSED),
    "gold doc traversal": (_set(f"{GOLD}.doc", "../../etc/passwd"), REFUSED),
    "schema version future": (_set("schema_version", "99.0"), REFUSED),
    "schema version missing": (_drop("schema_version"), REFUSED),
    "level unknown": (_set("run.level", "page"), REFUSED),
    "depth negative": (_set("run.depth", -1), REFUSED),
    "cutoffs empty": (_set("run.cutoffs", []), EITHER),
    "resamples huge": (_set("run.bootstrap.resamples", 10**30), REFUSED),
    "no stages": (_set("stages", []), REFUSED),
    "stage name empty": (_set("stages.0.name", ""), REFUSED),
    "stage name bidi": (_set("stages.0.name", "\u202ebm25"), REFUSED),
    "mean above one": (_set("stages.0.aggregates.recall@1.mean", 5.0), REFUSED),
    "mean negative": (_set("stages.0.aggregates.recall@1.mean", -0.5), REFUSED),
    "low above high": (_set("stages.0.aggregates.recall@1.low", 0.99), EITHER),
    "duplicate query id": (_set("queries.1.query_id", "refund-window"), REFUSED),
    "query id with escape": (_set("queries.0.query_id", "\x1b[31mred"), EITHER),
    "notes not a list": (_set("notes", 5), REFUSED),
    "unknown top-level key": (_set("surprise", 1), REFUSED),
    "not an object": (lambda report: [], REFUSED),
    "null": (lambda report: None, REFUSED),
    "nan literal": (_text(lambda t: t.replace('"mean": 1.0', '"mean": NaN', 1)), REFUSED),
    "1e400": (_text(lambda t: t.replace('"mean": 1.0', '"mean": 1e400', 1)), REFUSED),
    "truncated": (_text(lambda t: t[: len(t) // 2]), REFUSED),
    "empty file": (_text(lambda t: ""), REFUSED),
    "nested deep": (_text(lambda t: "[" * 100_000 + "]" * 100_000), REFUSED),
    "invalid utf-8": (_text(lambda t: t.encode().replace(b"refund", b"ref\xffund", 1)), REFUSED),
    "utf-16": (_text(lambda t: t.encode("utf-16")), REFUSED),
    "bom": (_text(lambda t: b"\xef\xbb\xbf" + t.encode()), EITHER),
    "duplicate key": (_text(lambda t: t.replace("{", '{"notes": [], ', 1)), REFUSED),
}

Command = Callable[[Path, Path, Path], list[str | Path]]

COMMANDS: dict[str, Command] = {
    "export": lambda report, corpus, out: [
        "eval", "export", report, "--stage", "bm25",
        "--run", out / "run.trec", "--qrels", out / "qrels.trec",
    ],
    "diagnose": lambda report, corpus, out: ["eval", "diagnose", report],
    "sample": lambda report, corpus, out: [
        "eval", "sample", report, "--hits", "--corpus", corpus, "--out", out / "sheet",
    ],
    "html": lambda report, corpus, out: [
        "eval", "report", report, "--corpus", corpus, "--html", out / "page.html",
    ],
}  # fmt: skip

OUTPUTS = ("run.trec", "qrels.trec", "sheet.jsonl", "sheet.csv", "page.html")

# Checked against the corpus: a command that reads no corpus (diagnose) cannot tell.
NEEDS_CORPUS = {
    "chunk end past document",
    "gold span past document",
    "hit doc not in corpus",
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_reports(
    case: str, command: str, old_run: Path, tmp_path: Path, tally: Tally
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(old_run.parent / "data" / "corpus", corpus)
    edit, codes = CASES[case]
    if command == "diagnose" and case in NEEDS_CORPUS:
        codes = EITHER
    edited = edit(json.loads((old_run / "run.json").read_text("utf-8")))
    report = tmp_path / "run.json"
    if isinstance(edited, _Raw):
        report.write_bytes(edited.content)
    else:
        report.write_text(json.dumps(edited, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    check_case(
        tally,
        f"reports: {command}",
        COMMANDS[command](report, corpus, out),
        inputs=[report, corpus],
        outputs=[out / name for name in OUTPUTS],
        exit_code=codes,
        place="run.json",
    )
