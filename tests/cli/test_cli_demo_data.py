"""Integrity checks for the demo dataset shipped inside groundkit.harness (corpus + judgments)."""

from __future__ import annotations

import importlib.resources
import json
import re
from collections import Counter
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
DOC_ID_RE = re.compile(r"^(?:[a-z0-9]+(?:-[a-z0-9]+)*/)*[a-z0-9]+(?:-[a-z0-9]+)*\.(?:md|txt)$")
QTYPES = {"factoid", "numeric", "comparative", "multi-hop", "summarisation", "tabular"}
CATEGORIES = {"normal", "unanswerable"}
LONG_QUOTE = 700
FALLBACK_DIR = Path(__file__).resolve().parents[2] / "packages/cli/src/groundkit/harness/demo_data"


@dataclass(frozen=True)
class DemoData:
    docs: dict[str, str]
    judgments: list[dict[str, Any]]
    raw_files: dict[str, bytes]


def _demo_root() -> Traversable:
    # The installed package is preferred; the source tree covers checkouts where
    # groundkit.harness is not importable (yet).
    try:
        root = importlib.resources.files("groundkit.harness") / "demo_data"
    except ModuleNotFoundError:
        root = FALLBACK_DIR
    if not root.is_dir():
        root = FALLBACK_DIR
    return root


def _walk(node: Traversable, prefix: str = "") -> dict[str, Traversable]:
    files: dict[str, Traversable] = {}
    for child in node.iterdir():
        if child.name == "__pycache__":
            continue
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            files.update(_walk(child, f"{rel}/"))
        else:
            files[rel] = child
    return files


@pytest.fixture(scope="module")
def demo() -> DemoData:
    root = _demo_root()
    assert root.is_dir(), f"demo data folder not found: {root}"
    raw = {rel: node.read_bytes() for rel, node in _walk(root).items()}
    docs = {
        rel.removeprefix("corpus/"): data.decode("utf-8")
        for rel, data in raw.items()
        if rel.startswith("corpus/")
    }
    judgments: list[dict[str, Any]] = []
    for lineno, line in enumerate(raw["judgments.jsonl"].decode("utf-8").splitlines(), 1):
        assert line.strip(), f"judgments.jsonl line {lineno}: blank line"
        record = json.loads(line)
        assert isinstance(record, dict), f"judgments.jsonl line {lineno}: not an object"
        judgments.append(record)
    return DemoData(docs=docs, judgments=judgments, raw_files=raw)


def _answerable(demo: DemoData) -> list[dict[str, Any]]:
    return [j for j in demo.judgments if j["category"] == "normal"]


def test_every_file_is_strict_utf8_without_bom(demo: DemoData) -> None:
    for rel, data in demo.raw_files.items():
        data.decode("utf-8")  # raises on invalid bytes
        assert not data.startswith(b"\xef\xbb\xbf"), f"{rel}: starts with a BOM"
        assert b"\r" not in data, f"{rel}: contains carriage returns"


def test_readme_states_licence(demo: DemoData) -> None:
    readme = demo.raw_files["README.md"].decode("utf-8")
    assert "Apache-2.0" in readme


def test_corpus_size_and_doc_ids(demo: DemoData) -> None:
    assert len(demo.docs) >= 40
    for doc_id, text in demo.docs.items():
        assert DOC_ID_RE.fullmatch(doc_id), f"unsafe doc id {doc_id!r}"
        path = PurePosixPath(doc_id)
        assert not path.is_absolute(), doc_id
        assert ".." not in path.parts, doc_id
        assert 1500 <= len(text) <= 5000, f"{doc_id}: {len(text)} characters"
        assert text.lstrip().startswith("# "), f"{doc_id}: no title heading"
        assert "\n## " in text, f"{doc_id}: no section headings"
    assert len(set(demo.docs.values())) == len(demo.docs), "two documents are identical"


def test_query_ids_are_valid_unique_and_sorted(demo: DemoData) -> None:
    ids = [j["query_id"] for j in demo.judgments]
    for query_id in ids:
        assert isinstance(query_id, str), query_id
        assert ID_RE.fullmatch(query_id), query_id
    duplicates = [q for q, n in Counter(ids).items() if n > 1]
    assert not duplicates, f"duplicate query ids: {duplicates}"
    assert ids == sorted(ids), "judgments.jsonl is not sorted by query_id"


def test_record_fields(demo: DemoData) -> None:
    expected = {"query_id", "query", "category", "gold", "answer", "qtype", "meta"}
    for j in demo.judgments:
        qid = j["query_id"]
        assert set(j) == expected, f"{qid}: fields {sorted(j)}"
        assert isinstance(j["query"], str), qid
        assert j["query"].strip(), qid
        assert j["category"] in CATEGORIES, qid
        assert j["qtype"] in QTYPES, qid
        assert isinstance(j["meta"], dict), qid
        assert isinstance(j["meta"].get("reviewed"), bool), qid
        assert isinstance(j["gold"], list), qid


def test_answerable_queries_have_verbatim_gold(demo: DemoData) -> None:
    answerable = _answerable(demo)
    assert len(answerable) >= 80
    for j in answerable:
        qid = j["query_id"]
        assert j["gold"], f"{qid}: answerable query without gold"
        assert isinstance(j["answer"], str), qid
        assert j["answer"].strip(), qid
        assert any(g["grade"] == 2 for g in j["gold"]), f"{qid}: no grade-2 passage"
        for g in j["gold"]:
            assert set(g) == {"doc", "quote", "grade"}, qid
            assert g["grade"] in (1, 2), qid
            assert g["doc"] in demo.docs, f"{qid}: unknown doc {g['doc']!r}"
            assert g["quote"].strip(), f"{qid}: empty quote"
            assert g["quote"] in demo.docs[g["doc"]], f"{qid}: quote not verbatim in {g['doc']}"


def test_unanswerable_queries_have_no_gold(demo: DemoData) -> None:
    unanswerable = [j for j in demo.judgments if j["category"] == "unanswerable"]
    assert len(unanswerable) >= 5
    for j in unanswerable:
        assert j["gold"] == [], j["query_id"]
        assert j["answer"] is None, j["query_id"]


def test_long_quotes_exist_for_chunk_splitting(demo: DemoData) -> None:
    lengths = [len(g["quote"]) for j in demo.judgments for g in j["gold"]]
    assert sum(n > LONG_QUOTE for n in lengths) >= 5


def test_multi_hop_queries_span_documents(demo: DemoData) -> None:
    multi_hop = [j for j in _answerable(demo) if j["qtype"] == "multi-hop"]
    assert multi_hop
    for j in multi_hop:
        assert len({g["doc"] for g in j["gold"]}) >= 2, j["query_id"]


def test_every_document_is_cited(demo: DemoData) -> None:
    cited = {g["doc"] for j in demo.judgments for g in j["gold"]}
    assert set(demo.docs) - cited == set()
