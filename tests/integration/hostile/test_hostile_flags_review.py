# ruff: noqa: E501 - the case tables read best one case per line
"""Hostile flags, and the interactive review's journal and outputs."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from tests.integration.hostile.conftest import FAST, Dataset, Tally, check_case, grk

from groundkit.judgments.files import _paths

# flag values that must be refused naming the flag: (extra arguments, what the error names)
RUN_FLAGS: dict[str, tuple[list[str], list[str]]] = {
    "min-overlap nan": (["--min-overlap", "nan"], ["--min-overlap", "finite"]),
    "min-overlap inf": (["--min-overlap", "inf"], ["--min-overlap", "finite"]),
    "min-overlap 2": (["--min-overlap", "2"], ["--min-overlap"]),
    "min-overlap -0.5": (["--min-overlap", "-0.5"], ["--min-overlap"]),
    "min-overlap word": (["--min-overlap", "half"], ["--min-overlap"]),
    "command-timeout nan": (["--command-timeout", "nan"], ["--command-timeout", "finite"]),
    "command-timeout 0": (["--command-timeout", "0"], ["--command-timeout"]),
    "k 0": (["--k", "0"], ["--k"]),
    "k huge": (["--k", "10000000"], ["--k"]),
    "k word": (["--k", "ten"], ["--k"]),
    "resamples 0": (["--resamples", "0"], ["--resamples"]),
    "resamples huge": (["--resamples", "1000000000000"], ["--resamples"]),
    "seed negative": (["--seed", "-1"], ["--seed"]),
    "level other": (["--level", "paragraph"], ["--level"]),
    "unknown chunker": (["--chunker", "pages:3"], ["pages"]),
    "items and no-items": (["--items", "x.jsonl", "--no-items"], ["--items", "--no-items"]),
    "unknown flag": (["--colour"], ["--colour"]),
}


@pytest.mark.parametrize("case", sorted(RUN_FLAGS))
def test_bad_run_flags(case: str, dataset: Dataset, tmp_path: Path, tally: Tally) -> None:
    extra, places = RUN_FLAGS[case]
    out = tmp_path / "r.json"
    check_case(
        tally, "flags",
        ["eval", "run", "--corpus", dataset.corpus, "--judgments", dataset.judgments,
         "--report", out, *FAST, *extra],
        inputs=[dataset.corpus, dataset.judgments], outputs=[out], place=places,
    )  # fmt: skip


OTHER_FLAGS: dict[str, tuple[list[str], list[str]]] = {
    "compare fail-under nan": (["eval", "compare", "A", "B", "--fail-under", "nan"], ["--fail-under"]),
    "compare fail-under 3": (["eval", "compare", "A", "B", "--fail-under", "3"], ["--fail-under"]),
    "compare three files": (["eval", "compare", "A", "B", "A"], ["give one report"]),
    "trec relevance word": (["eval", "trec", "A", "B", "-l", "x"], ["-l"]),
    "beir split escape": (["beir", "adapt", "SRC", "OUT", "--split", "../x"], ["split name"]),
    "beir id-mapping other": (["beir", "adapt", "SRC", "OUT", "--id-mapping", "loose"], ["--id-mapping"]),
    "filter timeout nan": (["evalset", "filter", "A", "-o", "OUT", "--timeout", "nan"], ["--timeout", "finite"]),
    "generate per-doc 0": (
        ["evalset", "generate", "--corpus", "SRC", "--model", "m", "--base-url", "http://127.0.0.1:9", "--per-doc", "0"],
        ["--per-doc"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(OTHER_FLAGS))
def test_bad_flags_elsewhere(case: str, tmp_path: Path, tally: Tally) -> None:
    args, places = OTHER_FLAGS[case]
    a = tmp_path / "a.jsonl"
    a.write_text('{"query_id": "a", "query": "q?", "gold": [], "category": "unanswerable"}\n')
    source = tmp_path / "src"
    source.mkdir()
    names = {"A": a, "B": a, "SRC": source, "OUT": tmp_path / "out"}
    resolved = [os.fspath(names.get(arg, arg)) for arg in args]
    check_case(
        tally, "flags", resolved, inputs=[a, source], outputs=[tmp_path / "out"], place=places
    )


# --- the review --------------------------------------------------------------------------


def _journal(out: Path) -> Path:
    return out.with_name(out.stem + ".decisions.jsonl")


def test_review_into_a_missing_folder(dataset: Dataset, tmp_path: Path, tally: Tally) -> None:
    out = tmp_path / "no" / "such" / "dir" / "out.jsonl"
    check_case(
        tally, "review", ["evalset", "review", dataset.judgments, "-o", out],
        inputs=[dataset.judgments], place=["--out", "does not exist"],
    )  # fmt: skip


def test_review_journal_of_other_judgments(dataset: Dataset, tmp_path: Path, tally: Tally) -> None:
    out = tmp_path / "out.jsonl"
    journal = _journal(out)
    journal.write_text(
        json.dumps({"kind": "groundkit-review-journal", "version": 1,
                    "judgments_fingerprint": "0" * 64, "reviewed_key": "reviewed"}) + "\n"
    )  # fmt: skip
    check_case(
        tally, "review", ["evalset", "review", dataset.judgments, "-o", out],
        inputs=[dataset.judgments], outputs=[journal, out], place=["decisions.jsonl:1", "other judgments"],
        run=lambda *a: grk(*a, input="a"),
    )  # fmt: skip


def test_review_journal_that_is_not_one(dataset: Dataset, tmp_path: Path, tally: Tally) -> None:
    out = tmp_path / "out.jsonl"
    journal = _journal(out)
    journal.write_text('{"something": "else"}\n{"more": 1}\n')
    check_case(
        tally, "review", ["evalset", "review", dataset.judgments, "-o", out],
        inputs=[dataset.judgments], outputs=[journal, out], place=["decisions.jsonl:1"],
        run=lambda *a: grk(*a, input="a"),
    )  # fmt: skip


def test_review_journal_that_is_a_pipe(dataset: Dataset, tmp_path: Path, tally: Tally) -> None:
    out = tmp_path / "out.jsonl"
    os.mkfifo(_journal(out))
    check_case(
        tally, "review", ["evalset", "review", dataset.judgments, "-o", out],
        inputs=[dataset.judgments], outputs=[out], place=["journal", "not a regular file"],
        run=lambda *a: grk(*a, input="a"),
    )  # fmt: skip


@pytest.mark.parametrize("failure", ["short write", "no space", "fsync fails"])
def test_review_journal_write_failure_keeps_whole_lines(
    failure: str, dataset: Dataset, tmp_path: Path, tally: Tally, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.jsonl"
    journal = _journal(out)
    assert grk("evalset", "review", dataset.judgments, "-o", out, input="aq").exit_code == 0
    before = journal.read_bytes()
    real_write, real_fsync = os.write, os.fsync

    def short(fd: int, data: bytes) -> int:
        return real_write(fd, data[: len(data) // 2])

    def full(fd: int, data: bytes) -> int:
        real_write(fd, data[:7])  # some bytes reach the file, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def broken_fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    if failure == "short write":
        monkeypatch.setattr(_paths.os, "write", short)
    elif failure == "no space":
        monkeypatch.setattr(_paths.os, "write", full)
    else:
        monkeypatch.setattr(_paths.os, "fsync", broken_fsync)
    result = grk("evalset", "review", dataset.judgments, "-o", out, input="a")
    monkeypatch.setattr(_paths.os, "write", real_write)
    monkeypatch.setattr(_paths.os, "fsync", real_fsync)
    clean = result.exit_code == 2 and "Traceback" not in result.output
    whole = journal.read_bytes() == before
    tally.record("review", "traceback" if not clean else "loss" if not whole else "refused cleanly")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "cannot save" in result.output.splitlines()[-1]
    assert whole  # the failed line was rolled back: the journal ends as before
    # and the review resumes from it
    assert grk("evalset", "review", dataset.judgments, "-o", out, input="aaaa").exit_code == 0
