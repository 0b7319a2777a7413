"""Hostile judgments files, read by every command that reads judgments."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.integration.hostile.conftest import FAST, JUDGMENTS, Dataset, Tally, check_case, jsonl

GOOD = JUDGMENTS[0]


def _with(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


def _gold(**changes: Any) -> dict[str, Any]:
    return _with(gold=[{**GOOD["gold"][0], **changes}])


# name -> (raw bytes of the judgments file, what the one-line error must name)
CASES: dict[str, tuple[bytes, list[str]]] = {
    "invalid json": (b'{"query_id": "a",\n', ["judgments.jsonl:1", "invalid JSON", "column 18"]),
    "second line invalid": (
        (jsonl([GOOD]) + "{oops}\n").encode(),
        ["judgments.jsonl:2", "invalid JSON"],
    ),
    "array line": (b"[1, 2]\n", ["judgments.jsonl:1", "expected a JSON object"]),
    "string line": (b'"text"\n', ["judgments.jsonl:1", "a string"]),
    "number line": (b"42\n", ["judgments.jsonl:1", "a number"]),
    "null line": (b"null\n", ["judgments.jsonl:1", "null"]),
    "duplicate key": (
        b'{"query_id": "a", "query_id": "b", "query": "q", "gold": []}\n',
        ["judgments.jsonl:1", "appears twice"],
    ),
    "nan": (
        b'{"query_id": "a", "query": "q", "gold": [], "meta": {"x": NaN}}\n',
        ["judgments.jsonl:1", "NaN"],
    ),
    "infinity": (
        b'{"query_id": "a", "query": "q", "gold": [], "meta": {"x": Infinity}}\n',
        ["judgments.jsonl:1", "Infinity"],
    ),
    "deep nesting": (
        (
            '{"query_id": "a", "query": "q", "meta": {"x": '
            + "[" * 100_000
            + "]" * 100_000
            + "}}\n"
        ).encode(),
        ["judgments.jsonl:1"],
    ),
    "not utf-8": (
        b'{"query_id": "a", "query": "caf\xe9", "gold": []}\n',
        ["judgments.jsonl:1", "UTF-8"],
    ),
    "utf-16": ('{"query_id": "a"}\n'.encode("utf-16"), ["judgments.jsonl:1", "UTF-8"]),
    "empty file": (b"", ["judgments.jsonl", "no judgments"]),
    "only blank lines": (b"\n  \n\t\n", ["judgments.jsonl", "no judgments"]),
    "missing query_id": (
        json.dumps({k: v for k, v in GOOD.items() if k != "query_id"}).encode() + b"\n",
        ["judgments.jsonl:1", "query_id"],
    ),
    "missing query": (
        json.dumps({k: v for k, v in GOOD.items() if k != "query"}).encode() + b"\n",
        ["judgments.jsonl:1", "refund-window", "query"],
    ),
    "query id not kebab": (
        jsonl([_with(query_id="Refund Window")]).encode(),
        ["judgments.jsonl:1", "kebab"],
    ),
    "query id number": (jsonl([_with(query_id=7)]).encode(), ["judgments.jsonl:1", "query_id"]),
    "lone surrogate in id": (
        b'{"query_id": "a\\ud800", "query": "q", "gold": []}\n',
        ["judgments.jsonl:1", "\\ud800"],
    ),
    "lone surrogate in query": (
        b'{"query_id": "a", "query": "q\\udfff", "gold": []}\n',
        ["judgments.jsonl:1"],
    ),
    "duplicate query id": (
        jsonl([GOOD, GOOD]).encode(),
        ["judgments.jsonl:2", "refund-window", "duplicate"],
    ),
    "unknown field": (jsonl([_with(colour="red")]).encode(), ["judgments.jsonl:1", "colour"]),
    "unknown gold field": (
        jsonl([_gold(span=[5, 2])]).encode(),
        ["judgments.jsonl:1", "gold.0.span"],
    ),
    "gold not a list": (jsonl([_with(gold="refunds.md")]).encode(), ["judgments.jsonl:1", "gold"]),
    "doc not a string": (jsonl([_gold(doc=3)]).encode(), ["judgments.jsonl:1", "gold.0.doc"]),
    "doc escapes": (
        jsonl([_gold(doc="../secret.txt")]).encode(),
        ["judgments.jsonl:1", "gold.0.doc"],
    ),
    "doc absolute": (
        jsonl([_gold(doc="/etc/passwd")]).encode(),
        ["judgments.jsonl:1", "gold.0.doc"],
    ),
    "doc backslash": (jsonl([_gold(doc="a\\b.md")]).encode(), ["judgments.jsonl:1", "gold.0.doc"]),
    "doc with nul": (jsonl([_gold(doc="a\x00.md")]).encode(), ["judgments.jsonl:1", "gold.0.doc"]),
    "empty quote": (jsonl([_gold(quote="   ")]).encode(), ["judgments.jsonl:1", "quote"]),
    "quote not a string": (
        jsonl([_gold(quote=["x"])]).encode(),
        ["judgments.jsonl:1", "gold.0.quote"],
    ),
    "grade zero": (jsonl([_gold(grade=0)]).encode(), ["judgments.jsonl:1", "gold.0.grade"]),
    "grade negative": (jsonl([_gold(grade=-3)]).encode(), ["judgments.jsonl:1", "gold.0.grade"]),
    "grade fraction": (jsonl([_gold(grade=1.5)]).encode(), ["judgments.jsonl:1", "gold.0.grade"]),
    "grade bool": (jsonl([_gold(grade=True)]).encode(), ["judgments.jsonl:1", "gold.0.grade"]),
    "grade string": (jsonl([_gold(grade="2")]).encode(), ["judgments.jsonl:1", "gold.0.grade"]),
    "grade 2**63": (jsonl([_gold(grade=2**63)]).encode(), ["judgments.jsonl:1", "gold.0.grade"]),
    "grade 10**23": (jsonl([_gold(grade=10**23)]).encode(), ["judgments.jsonl:1", "gold.0.grade"]),
    "repeated quote": (
        jsonl([_with(gold=[GOOD["gold"][0], GOOD["gold"][0]])]).encode(),
        ["judgments.jsonl:1", "repeats"],
    ),
    "empty query": (jsonl([_with(query=" ")]).encode(), ["judgments.jsonl:1", "query"]),
}

# Reading commands: (suite label, argument builder). Each reads the judgments before any work.
COMMANDS = {
    "eval run": lambda d, out: [
        "eval", "run", "--corpus", d.corpus, "--judgments", d.judgments,
        "--report", out / "r.json", *FAST,
    ],
    "evalset filter": lambda d, out: ["evalset", "filter", d.judgments, "-o", out / "kept.jsonl"],
    "evalset classify": lambda d, out: [
        "evalset", "classify", d.judgments, "-o", out / "typed.jsonl",
    ],
    "evalset assess": lambda d, out: ["evalset", "assess", d.judgments],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_judgments_are_refused_in_one_line(
    case: str, command: str, dataset: Dataset, tmp_path: Path, tally: Tally
) -> None:
    content, places = CASES[case]
    dataset.judgments.write_bytes(content)
    out = tmp_path / "out"
    out.mkdir()
    outputs = [out / "r.json", out / "r.items.jsonl", out / "kept.jsonl", out / "typed.jsonl"]
    check_case(
        tally,
        "judgments",
        COMMANDS[command](dataset, out),
        inputs=[dataset.judgments, dataset.corpus],
        outputs=outputs,
        place=places,
    )


@pytest.mark.parametrize(
    "kind", ["fifo", "folder", "missing", "dev-null", "dangling link", "unreadable bytes name"]
)
def test_judgments_that_are_not_files(
    kind: str, dataset: Dataset, tmp_path: Path, tally: Tally
) -> None:
    target = tmp_path / "j.jsonl"
    place = "j.jsonl"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "dev-null":
        target = Path(os.devnull)
        place = os.devnull
    elif kind == "dangling link":
        target.symlink_to(tmp_path / "nowhere.jsonl")
    elif kind == "unreadable bytes name":
        target = Path(os.fsdecode(os.fsencode(tmp_path) + b"/j\xff.jsonl"))
        place = "j\\xff.jsonl"
    out = tmp_path / "r.json"
    check_case(
        tally,
        "judgments",
        ["eval", "run", "--corpus", dataset.corpus, "--judgments", target, "--report", out, *FAST],
        inputs=[dataset.corpus],
        outputs=[out],
        place=place,
    )


def test_only_unanswerable_judgments_name_the_file(
    dataset: Dataset, tmp_path: Path, tally: Tally
) -> None:
    dataset.judgments.write_text(jsonl([_with(gold=[], category="unanswerable")]), encoding="utf-8")
    out = tmp_path / "r.json"
    check_case(
        tally,
        "judgments",
        [
            "eval",
            "run",
            "--corpus",
            dataset.corpus,
            "--judgments",
            dataset.judgments,
            "--report",
            out,
            *FAST,
        ],
        inputs=[dataset.judgments, dataset.corpus],
        outputs=[out],
        place=["judgments.jsonl", "no answerable query"],
    )


@pytest.mark.parametrize("variant", ["bom", "crlf", "blank lines", "trailing spaces"])
def test_harmless_variants_are_accepted(
    variant: str, dataset: Dataset, tmp_path: Path, tally: Tally
) -> None:
    text = jsonl(JUDGMENTS)
    if variant == "bom":
        text = "\ufeff" + text
    elif variant == "crlf":
        text = text.replace("\n", "\r\n")
    elif variant == "blank lines":
        text = "\n\n" + text.replace("\n", "\n\n")
    else:
        text = text.replace("\n", "   \n")
    dataset.judgments.write_text(text, encoding="utf-8")
    out = tmp_path / "r.json"
    check_case(
        tally,
        "judgments",
        [
            "eval",
            "run",
            "--corpus",
            dataset.corpus,
            "--judgments",
            dataset.judgments,
            "--report",
            out,
            *FAST,
        ],
        inputs=[dataset.judgments, dataset.corpus],
        exit_code=0,
    )
    assert out.is_file()
