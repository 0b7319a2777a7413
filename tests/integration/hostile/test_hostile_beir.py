# ruff: noqa: E501 - the case tables read best one case per line
"""Hostile BEIR downloads through `grk beir adapt`: every problem in one run, nothing written."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.integration.hostile.conftest import Tally, check_case, snapshot

from groundkit.judgments import load_judgments

DOCS: list[dict[str, Any]] = [
    {"_id": "d1", "title": "Aspirin", "text": "Aspirin thins the blood."},
    {"_id": "d2", "title": "", "text": "Ibuprofen reduces fever."},
    {"_id": "d3", "title": "Paracetamol", "text": "Paracetamol is acetaminophen."},
]
QUERIES: list[dict[str, Any]] = [
    {"_id": "q1", "text": "What thins the blood?"},
    {"_id": "q2", "text": "Which drug reduces fever?"},
    {"_id": "q3", "text": "What else is paracetamol called?"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq3\td3\t1\n"


def _lines(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def write_dataset(
    root: Path,
    *,
    corpus: str | bytes | None = None,
    queries: str | bytes | None = None,
    qrels: str | bytes | None = None,
    gz: bool = False,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels").mkdir(exist_ok=True)
    for name, content in (("corpus", corpus), ("queries", queries)):
        data = content if content is not None else _lines(DOCS if name == "corpus" else QUERIES)
        raw = data.encode() if isinstance(data, str) else data
        if gz:
            (root / f"{name}.jsonl.gz").write_bytes(gzip.compress(raw))
        else:
            (root / f"{name}.jsonl").write_bytes(raw)
    text = QRELS if qrels is None else qrels
    (root / "qrels" / "test.tsv").write_bytes(text.encode() if isinstance(text, str) else text)
    return root


def _docs(*extra: dict[str, Any]) -> str:
    return _lines([*DOCS, *extra])


def _queries(*extra: dict[str, Any]) -> str:
    return _lines([*QUERIES, *extra])


# name -> (dataset files, what the one-line error names)
SINGLE: dict[str, tuple[dict[str, Any], list[str]]] = {
    "bad json corpus": ({"corpus": _docs() + "{oops\n"}, ["corpus.jsonl:4", "invalid JSON"]),
    "bad json queries": ({"queries": "[1]\n" + _queries()}, ["queries.jsonl:1", "JSON object"]),
    "missing _id": ({"corpus": _docs({"text": "x"})}, ["corpus.jsonl:4", "_id"]),
    "numeric _id": ({"corpus": _docs({"_id": 4, "text": "x"})}, ["corpus.jsonl:4", "_id"]),
    "empty _id": ({"corpus": _docs({"_id": "", "text": "x"})}, ["corpus.jsonl:4", "empty"]),
    "text not string": ({"corpus": _docs({"_id": "d9", "text": 3})}, ["corpus.jsonl:4", "d9"]),
    "nul in text": ({"corpus": _docs({"_id": "d9", "text": "a\x00b"})}, ["corpus.jsonl:4", "NUL"]),
    "surrogate": ({"corpus": _docs() + '{"_id": "d9", "text": "\\ud800"}\n'}, ["corpus.jsonl:4", "surrogate"]),
    "duplicate doc": ({"corpus": _docs(DOCS[0])}, ["corpus.jsonl:4", "d1", "duplicate"]),
    "duplicate query": ({"queries": _queries(QUERIES[0])}, ["queries.jsonl:4", "q1", "duplicate"]),
    "empty query": ({"queries": _queries({"_id": "q9", "text": " "})}, ["queries.jsonl:4", "empty"]),
    "empty document": (
        {"corpus": _docs({"_id": "d9", "title": "", "text": ""})},
        ["corpus.jsonl:4", "d9", "--skip-empty-documents"],
    ),
    "not utf-8": ({"corpus": _docs().encode() + b'{"_id": "d9", "text": "\xff"}\n'}, ["corpus.jsonl:4", "UTF-8"]),
    "unknown qrels doc": ({"qrels": QRELS + "q1\td9\t1\n"}, ["test.tsv:5", "d9"]),
    "unknown qrels query": ({"qrels": QRELS + "q9\td1\t1\n"}, ["test.tsv:5", "q9"]),
    "two columns": ({"qrels": QRELS + "q1\td2\n"}, ["test.tsv:5", "found 2"]),
    "score text": ({"qrels": QRELS + "q1\td2\thigh\n"}, ["test.tsv:5", "not a number"]),
    "score fraction": ({"qrels": QRELS + "q1\td2\t1.5\n"}, ["test.tsv:5", "whole number"]),
    "score 10**23": ({"qrels": QRELS + "q1\td2\t100000000000000000000000\n"}, ["test.tsv:5", "64 bits"]),
    "score 1e30": ({"qrels": QRELS + "q1\td2\t1e30\n"}, ["test.tsv:5", "64 bits"]),
    "score 2**63": ({"qrels": QRELS + f"q1\td2\t{2**63}\n"}, ["test.tsv:5", "64 bits"]),
    "score inf": ({"qrels": QRELS + "q1\td2\tinf\n"}, ["test.tsv:5", "whole number"]),
    "repeated pair": ({"qrels": QRELS + "q1\td1\t1\n"}, ["test.tsv:5", "already"]),
    "no positives": ({"qrels": "q1\td1\t0\n"}, ["test.tsv", "no positive rows"]),
    "qrels not utf-8": ({"qrels": QRELS.encode() + b"q\xff\td1\t1\n"}, ["test.tsv:5", "UTF-8"]),
    "ambiguous zero padding": (
        {"corpus": _docs({"_id": "01", "text": "a"}, {"_id": "001", "text": "b"}),
         "qrels": QRELS + "q1\t1\t1\n"},
        ["test.tsv:5", "leading zeros"],
    ),
    "unsafe id": ({"corpus": _docs({"_id": "../x", "text": "x"})}, ["corpus.jsonl:4", "--id-mapping slug"]),
    "empty corpus": ({"corpus": ""}, ["corpus.jsonl", "no documents"]),
    "truncated gzip": ({"gz": True, "corpus": "x" * 10}, ["corpus.jsonl.gz"]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(SINGLE))
def test_single_problem_is_refused_naming_it(case: str, tmp_path: Path, tally: Tally) -> None:
    files, places = SINGLE[case]
    source = write_dataset(tmp_path / "beir", **files)
    if case == "truncated gzip":
        packed = source / "corpus.jsonl.gz"
        packed.write_bytes(packed.read_bytes()[:-6])
    out = tmp_path / "out"
    check_case(
        tally, "beir", ["beir", "adapt", source, out], inputs=[source], outputs=[out], place=places
    )
    assert not out.exists()


def test_every_problem_is_reported_in_one_run(tmp_path: Path, tally: Tally) -> None:
    source = write_dataset(
        tmp_path / "beir",
        corpus=_docs(DOCS[0], {"_id": "d8", "text": ""}, {"text": "no id"}) + "{bad\n",
        queries=_queries(QUERIES[1]),
        qrels=QRELS + "q9\td1\t1\nq1\td7\t1\nq2\td3\t10000000000000000000000\n",
    )
    out = tmp_path / "out"
    result = check_case(
        tally,
        "beir",
        ["beir", "adapt", source, out],
        inputs=[source],
        outputs=[out],
        place=[
            "problems of",
            "1 × duplicate document id",
            "1 × empty document",
            "1 × missing or invalid '_id'",
            "1 × line that is not one JSON object",
            "1 × duplicate query id",
            "qrels row naming a query not in the queries file",
            "qrels row naming a document not in the corpus",
            "64-bit",
        ],
    )
    assert "corpus.jsonl:4" in result.output


@pytest.mark.parametrize("layout", ["trec four columns", "spaces", "zero padded", "skip empty"])
def test_unusual_but_valid_datasets_are_adapted_and_said(
    layout: str, tmp_path: Path, tally: Tally
) -> None:
    args: list[str | Path] = []
    note = ""
    if layout == "trec four columns":
        source = write_dataset(tmp_path / "beir", qrels="q1 0 d1 1\nq2 0 d2 2\nq3 0 d3 1\n")
        note = "4-column"
    elif layout == "spaces":
        source = write_dataset(tmp_path / "beir", qrels="q1 d1 1\nq2 d2 2\nq3 d3 1\n")
    elif layout == "zero padded":
        docs = [{"_id": "01", "text": "Aspirin thins the blood."}, *DOCS[1:]]
        source = write_dataset(
            tmp_path / "beir", corpus=_lines(docs), qrels=QRELS.replace("d1", "1")
        )
        note = "leading zeros"
    else:
        source = write_dataset(
            tmp_path / "beir",
            corpus=_docs({"_id": "d9", "title": " ", "text": ""}),
            qrels=QRELS + "q1\td9\t1\n",
        )
        args = ["--skip-empty-documents"]
        note = "Skipped 1 empty documents"
    out = tmp_path / "out"
    result = check_case(
        tally, "beir", ["beir", "adapt", source, out, *args], inputs=[source], exit_code=0
    )
    assert len(load_judgments(out / "judgments.jsonl")) == 3
    assert note in result.output


def _adapted(tmp_path: Path) -> tuple[Path, Path]:
    source = write_dataset(tmp_path / "beir")
    out = tmp_path / "out"
    from tests.integration.hostile.conftest import grk

    assert grk("beir", "adapt", source, out).exit_code == 0
    return source, out


OUTPUT_CASES: dict[str, tuple[Callable[[Path], Path], list[str]]] = {
    "user's judgments": (
        lambda out: (out.mkdir(), (out / "judgments.jsonl").write_text("my notes\n"))[0] or out,
        ["judgments.jsonl", "--force"],
    ),
    "user's corpus": (
        lambda out: (out.mkdir(), (out / "corpus").mkdir(), (out / "corpus" / "a.txt").write_text("x"))[0] or out,
        ["corpus folder is not empty", "--force"],
    ),
    "user's id map": (
        lambda out: (out.mkdir(), (out / "id_map.json").write_text("{}"))[0] or out,
        ["id_map.json"],
    ),
    "output is a file": (lambda out: (out.write_text("x"), out)[1], ["not a folder"]),
    "output name 300 characters": (lambda out: out.with_name("o" * 300), ["bytes long"]),
    "output inside the dataset": (lambda out: out.parent / "beir" / "adapted", ["inside the input folder"]),
    "output is the dataset": (lambda out: out.parent / "beir", ["same file as"]),
    "corpus is a link": (
        lambda out: (out.mkdir(), (out / "corpus").symlink_to(out.parent))[0] or out,
        ["symbolic link"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(OUTPUT_CASES))
def test_output_folder_cases(case: str, tmp_path: Path, tally: Tally) -> None:
    source = write_dataset(tmp_path / "beir")
    make, places = OUTPUT_CASES[case]
    out = make(tmp_path / "out")
    check_case(
        tally,
        "beir",
        ["beir", "adapt", source, out],
        inputs=[source],
        outputs=[out] if snapshot(out) is not None else [],
        place=places,
    )


def test_earlier_adaptation_is_replaced_whole(tmp_path: Path, tally: Tally) -> None:
    _, out = _adapted(tmp_path)
    (out / "notes.md").write_text("the user's file beside it")
    changed = write_dataset(tmp_path / "beir2", corpus=_docs({"_id": "d4", "text": "Trains."}))
    check_case(tally, "beir", ["beir", "adapt", changed, out], inputs=[changed], exit_code=0)
    assert (out / "corpus" / "d4.txt").is_file()
    assert (out / "notes.md").read_text() == "the user's file beside it"
    assert not [p for p in out.iterdir() if ".grk-" in p.name]
