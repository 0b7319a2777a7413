"""Fixtures for the BEIR adapter tests: small generated BEIR datasets and tree snapshots."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

Snapshot = dict[str, tuple[str, bytes | str | None]]

DOCUMENTS: list[dict[str, Any]] = [
    {"_id": "d1", "title": "Aspirin", "text": "Aspirin thins the blood.", "metadata": {"x": 1}},
    {"_id": "d2", "title": "", "text": "Ibuprofen reduces fever.\r\nIt is an NSAID."},
    {"_id": "d3", "title": "Paracetamol", "text": "Paracetamol is also called acetaminophen."},
    {"_id": "d4", "text": "Unrelated text about trains."},
    {"_id": "d5", "title": "Only a title", "text": ""},
]
QUERIES: list[dict[str, Any]] = [
    {"_id": "q1", "text": "What thins the blood?", "metadata": {}},
    {"_id": "q2", "text": "Which drug reduces fever?"},
    {"_id": "q3", "text": "What is acetaminophen?"},
    {"_id": "q4", "text": "A query without positives."},
]
QRELS: list[tuple[str, str, int]] = [
    ("q1", "d1", 1),
    ("q2", "d2", 2),
    ("q2", "d3", 1),
    ("q3", "d3", 1),
    ("q3", "d5", 1),
    ("q4", "d4", 0),
    ("q1", "d4", 0),
]


def _jsonl(records: Iterable[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def write_beir(
    root: Path,
    *,
    documents: Iterable[Mapping[str, Any]] = DOCUMENTS,
    queries: Iterable[Mapping[str, Any]] = QUERIES,
    qrels: Iterable[tuple[str, str, int]] = QRELS,
    split: str = "test",
    header: bool = True,
    gzipped: bool = False,
    corpus_text: str | None = None,
    queries_text: str | None = None,
    qrels_text: str | None = None,
) -> Path:
    """Write a BEIR dataset in BEIR's layout; the ``*_text`` arguments override a file raw."""
    root.mkdir(parents=True, exist_ok=True)
    corpus = _jsonl(documents) if corpus_text is None else corpus_text
    query_lines = _jsonl(queries) if queries_text is None else queries_text
    for name, text in (("corpus", corpus), ("queries", query_lines)):
        if gzipped:
            with gzip.open(root / f"{name}.jsonl.gz", "wt", encoding="utf-8", newline="") as f:
                f.write(text)
        else:
            (root / f"{name}.jsonl").write_text(text, encoding="utf-8", newline="")
    if qrels_text is None:
        rows = "".join(f"{q}\t{d}\t{s}\n" for q, d, s in qrels)
        qrels_text = ("query-id\tcorpus-id\tscore\n" if header else "") + rows
    (root / "qrels").mkdir(exist_ok=True)
    (root / "qrels" / f"{split}.tsv").write_text(qrels_text, encoding="utf-8", newline="")
    return root


def snapshot(path: Path) -> Snapshot | None:
    """Every entry below ``path`` (without following links): kind and content or link target."""
    if not (path.exists() or path.is_symlink()):
        return None
    entries: Snapshot = {}
    if path.is_symlink():
        return {".": ("link", str(path.readlink()))}
    if path.is_file():
        return {".": ("file", path.read_bytes())}
    for folder, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            item = Path(folder) / name
            key = item.relative_to(path).as_posix()
            if item.is_symlink():
                entries[key] = ("link", str(item.readlink()))
            elif item.is_dir():
                entries[key] = ("dir", None)
            else:
                entries[key] = ("file", item.read_bytes())
    return entries


@pytest.fixture
def make_beir(tmp_path: Path) -> Callable[..., Path]:
    """Build a BEIR dataset under tmp_path/<name> (default ``beir``); see ``write_beir``."""

    def make(name: str = "beir", **kwargs: Any) -> Path:
        return write_beir(tmp_path / name, **kwargs)

    return make


@pytest.fixture
def tree() -> Callable[[Path], Snapshot | None]:
    """The ``snapshot`` function: compare an output location before and after a call."""
    return snapshot


@pytest.fixture
def beir_records() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str, int]]]:
    """Fresh copies of the default documents, queries and qrels rows (safe to modify)."""
    return (
        [dict(record) for record in DOCUMENTS],
        [dict(record) for record in QUERIES],
        list(QRELS),
    )
