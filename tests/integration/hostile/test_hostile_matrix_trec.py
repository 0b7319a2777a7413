"""Hostile TREC files: runs read by ``grk eval trec`` and by a predictions stage, qrels by
``grk eval trec``. A malformed row is one line naming the file and the row; a harmless
variant (tabs, CRLF, a final line without a newline) is read as trec_eval reads it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.integration.hostile.conftest import FAST, Dataset, Tally, check_case

GOOD_RUN = "refund-window Q0 refunds.md 1 2.5 r\nrefund-window Q0 leave.md 2 1.0 r\n"
GOOD_QRELS = "refund-window 0 refunds.md 1\nrefund-window 0 leave.md 0\n"
REFUSED = 2
EITHER = (0, 2)


def _row(row: str) -> bytes:
    """The good run with its second row replaced by ``row``."""
    return (GOOD_RUN.splitlines()[0] + "\n" + row + "\n").encode("utf-8")


# name -> (run file bytes, acceptable exit codes, what a refusal names)
RUN_CASES: dict[str, tuple[bytes, int | tuple[int, ...], list[str]]] = {
    "five columns": (_row("refund-window Q0 leave.md 2 1.0"), REFUSED, ["run:2"]),
    # trec_eval's format reserves the fields after the run id and ignores them (its own test
    # file results.trunc has some): read as trec_eval reads it.
    "seven columns": (_row("refund-window Q0 leave.md 2 1.0 r extra"), EITHER, ["run:2"]),
    "one column": (_row("refund-window"), REFUSED, ["run:2"]),
    "rank -1": (_row("refund-window Q0 leave.md -1 1.0 r"), REFUSED, ["run:2"]),
    "rank word": (_row("refund-window Q0 leave.md two 1.0 r"), REFUSED, ["run:2"]),
    "rank fraction": (_row("refund-window Q0 leave.md 2.5 1.0 r"), REFUSED, ["run:2"]),
    "rank huge": (_row("refund-window Q0 leave.md 1" + "0" * 30 + " 1.0 r"), EITHER, ["run:2"]),
    "score nan": (_row("refund-window Q0 leave.md 2 nan r"), REFUSED, ["run:2"]),
    "score inf": (_row("refund-window Q0 leave.md 2 inf r"), REFUSED, ["run:2"]),
    "score -inf": (_row("refund-window Q0 leave.md 2 -inf r"), REFUSED, ["run:2"]),
    "score 1e400": (_row("refund-window Q0 leave.md 2 1e400 r"), REFUSED, ["run:2"]),
    "score word": (_row("refund-window Q0 leave.md 2 high r"), REFUSED, ["run:2"]),
    "score empty": (_row("refund-window Q0 leave.md 2  r"), REFUSED, ["run:2"]),
    "nul byte": (_row("refund-window Q0 lea\x00ve.md 2 1.0 r"), EITHER, ["run"]),
    "invalid utf-8": (
        GOOD_RUN.encode() + b"refund-window Q0 \xff\xfe.md 3 0.5 r\n",
        EITHER,
        ["run"],
    ),
    "utf-16": (GOOD_RUN.encode("utf-16"), REFUSED, ["run"]),
    "binary": (bytes(range(256)), REFUSED, ["run"]),
    # Nothing to score: refused as a whole ("no query has both judgments and a ranking").
    "empty": (b"", EITHER, []),
    "blank lines only": (b"\n\n\n", EITHER, []),
    "tabs": (GOOD_RUN.replace(" ", "\t").encode(), EITHER, ["run"]),
    "crlf": (GOOD_RUN.replace("\n", "\r\n").encode(), EITHER, ["run"]),
    "no final newline": (GOOD_RUN.rstrip("\n").encode(), EITHER, ["run"]),
    "bom": (b"\xef\xbb\xbf" + GOOD_RUN.encode(), EITHER, ["run"]),
    "duplicate document": (
        (GOOD_RUN + "refund-window Q0 leave.md 3 0.5 r\n").encode(),
        EITHER,
        ["run"],
    ),
    "bidi id": (_row("refund-window Q0 \u202eleave.md 2 1.0 r"), EITHER, ["run"]),
    "zero-width id": (_row("refund-window Q0 leave\u200b.md 2 1.0 r"), EITHER, ["run"]),
    "escape in id": (_row("refund-window Q0 \x1b[31mleave.md 2 1.0 r"), EITHER, ["run"]),
    "path traversal id": (_row("refund-window Q0 ../../etc/passwd 2 1.0 r"), EITHER, ["run"]),
    "long id": (_row("refund-window Q0 " + "d" * 100_000 + " 2 1.0 r"), EITHER, ["run"]),
    "many rows one query": (
        "".join(
            f"refund-window Q0 d{i} {i + 1} {1.0 / (i + 1)} r\n" for i in range(20_000)
        ).encode(),
        EITHER,
        ["run"],
    ),
}

QRELS_CASES: dict[str, tuple[bytes, int | tuple[int, ...], list[str]]] = {
    "three columns": (b"refund-window 0 refunds.md\n", REFUSED, ["qrels:1"]),
    "five columns": (b"refund-window 0 refunds.md 1 x\n", REFUSED, ["qrels:1"]),
    "relevance word": (b"refund-window 0 refunds.md yes\n", REFUSED, ["qrels:1"]),
    "relevance fraction": (b"refund-window 0 refunds.md 1.5\n", EITHER, ["qrels:1"]),
    "relevance huge": (
        b"refund-window 0 refunds.md 99999999999999999999999\n",
        REFUSED,
        ["qrels:1"],
    ),
    "relevance nan": (b"refund-window 0 refunds.md nan\n", REFUSED, ["qrels:1"]),
    "relevance negative": (b"refund-window 0 refunds.md -1\n", EITHER, ["qrels:1"]),
    "conflicting duplicate": (
        b"refund-window 0 refunds.md 1\nrefund-window 0 refunds.md 0\n",
        EITHER,
        ["qrels:2"],
    ),
    "binary": (bytes(range(256)), REFUSED, ["qrels"]),
    "utf-16": (GOOD_QRELS.encode("utf-16"), REFUSED, ["qrels"]),
    "empty": (b"", EITHER, []),
    "crlf": (GOOD_QRELS.replace("\n", "\r\n").encode(), EITHER, ["qrels"]),
    "bom": (b"\xef\xbb\xbf" + GOOD_QRELS.encode(), EITHER, ["qrels"]),
    "tabs": (GOOD_QRELS.replace(" ", "\t").encode(), EITHER, ["qrels"]),
    "bidi id": ("refund-window 0 \u202erefunds.md 1\n".encode(), EITHER, ["qrels"]),
    "escape in id": (b"refund-window 0 \x1b[2Jrefunds.md 1\n", EITHER, ["qrels"]),
    "nul byte": (b"refund-window 0 ref\x00unds.md 1\n", EITHER, ["qrels"]),
}

Command = Callable[[Dataset, Path, Path, Path], list[str | Path]]

RUN_COMMANDS: dict[str, Command] = {
    "eval trec": lambda d, qrels, run, out: ["eval", "trec", qrels, run],
    "predictions stage": lambda d, qrels, run, out: [
        "eval", "run", "--corpus", d.corpus, "--judgments", d.judgments,
        "--predictions", f"mine={run}", "--report", out / "r.json", *FAST,
    ],
}  # fmt: skip


def _files(dataset: Dataset, run: bytes, qrels: bytes) -> tuple[Path, Path, Path]:
    folder = dataset.root / "trec"
    folder.mkdir()
    (folder / "run").write_bytes(run)
    (folder / "qrels").write_bytes(qrels)
    out = dataset.root / "out"
    out.mkdir()
    return folder / "qrels", folder / "run", out


@pytest.mark.parametrize("command", sorted(RUN_COMMANDS))
@pytest.mark.parametrize("case", sorted(RUN_CASES))
def test_hostile_trec_runs(case: str, command: str, dataset: Dataset, tally: Tally) -> None:
    content, codes, places = RUN_CASES[case]
    qrels, run, out = _files(dataset, content, GOOD_QRELS.encode())
    if command == "predictions stage" and case in {"empty", "blank lines only"}:
        codes = (0, 1, 2)  # a stage with no hits may fail as a stage (exit 1)
    check_case(
        tally,
        "trec: runs",
        RUN_COMMANDS[command](dataset, qrels, run, out),
        inputs=[qrels, run, dataset.corpus, dataset.judgments],
        outputs=[out / "r.json", out / "r.items.jsonl"],
        exit_code=codes,
        place=places,
    )


@pytest.mark.parametrize("case", sorted(QRELS_CASES))
def test_hostile_trec_qrels(case: str, dataset: Dataset, tally: Tally) -> None:
    content, codes, places = QRELS_CASES[case]
    qrels, run, _ = _files(dataset, GOOD_RUN.encode(), content)
    check_case(
        tally,
        "trec: qrels",
        ["eval", "trec", qrels, run],
        inputs=[qrels, run],
        exit_code=codes,
        place=places,
    )
