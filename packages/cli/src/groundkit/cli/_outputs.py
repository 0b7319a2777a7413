"""The CLI's output guard and output sets: every command that writes goes through here.

A command lists what it writes (flag, path, kind) and what it reads, calls :func:`guard` before
any work, and writes its outputs inside :func:`output_set`, which commits them together
(core's :class:`~groundkit.judgments.files.OutputSet`: the old set or the new set, never a mix).
Existing files that are not the command's own kind of output are replaced only with
``--force``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from groundkit.cli._errors import InputError
from groundkit.judgments import JudgmentError
from groundkit.judgments.files import (
    InputPath,
    OutputPath,
    OutputSet,
    guard_outputs,
    is_judgments_file,
    is_report_file,
    looks_like_jsonl,
    shown_path,
)

__all__ = ["KINDS", "force_option", "guard", "output_set"]

_HTML_MARK = b'<meta name="generator" content="groundkit'


def _is_html_report(path: Path) -> bool:
    return _has_mark(path, _HTML_MARK)


def _has_mark(path: Path, mark: bytes) -> bool:
    try:
        with path.open("rb") as handle:
            return mark in handle.read(4096)
    except OSError:
        return False


def _json_format(path: Path, name: str) -> bool:
    # The pool's JSON starts with its format (pydantic keeps field order).
    try:
        with path.open("rb") as handle:
            head = handle.read(200)
    except OSError:
        return False
    return f'"format": "{name}"'.encode() in head


def _csv_header_has(path: Path, columns: Sequence[str]) -> bool:
    try:
        with path.open("rb") as handle:
            header = handle.readline().decode("utf-8-sig", errors="replace")
    except OSError:
        return False
    names = {name.strip() for name in header.strip().split(",")}
    return all(column in names for column in columns)


def _jsonl_with(*keys: str) -> Callable[[Path], bool]:
    required = frozenset(keys)
    return lambda path: looks_like_jsonl(path, required)


_HEAD = 1 << 16
# ranx's JSON (and ir_measures' dicts): {"query": {"doc": number, ...}, ...}, or {} for none.
_NESTED_NUMBERS = re.compile(rb'\A\s*\{\s*(?:\}|"[^"]*"\s*:\s*\{\s*(?:\}|"[^"]*"\s*:\s*-?[0-9]))')


def _head(path: Path) -> bytes | None:
    try:
        with path.open("rb") as handle:
            return handle.read(_HEAD)
    except OSError:
        return None


def _trec_table(columns: int, integer: int, number: int | None = None) -> Callable[[Path], bool]:
    """Recognises what ``grk eval export`` writes: a TREC file or ranx's JSON of the same data.

    A TREC file has ``columns`` fields a line, an integer and a number where trec_eval reads
    them; a user's notes, an items file or a report is none of these.
    """

    def recognised(path: Path) -> bool:
        head = _head(path)
        if head is None:
            return False
        if _NESTED_NUMBERS.match(head):
            return True
        lines = head.split(b"\n")
        if len(head) == _HEAD:
            lines.pop()  # the last line may be cut by the read
        rows = [line.split() for line in lines if line.strip()][:20]
        return bool(rows) and all(_trec_row(row, columns, integer, number) for row in rows)

    return recognised


def _trec_row(row: list[bytes], columns: int, integer: int, number: int | None) -> bool:
    if len(row) != columns:
        return False
    try:
        int(row[integer])
        if number is not None:
            float(row[number])
    except ValueError:
        return False
    return True


KINDS: dict[str, Callable[[Path], bool]] = {
    "report": is_report_file,
    "items file": _jsonl_with("stage", "config", "config_hash"),
    "HTML report": _is_html_report,
    "judgments file": is_judgments_file,
    "rejections file": _jsonl_with("filter", "query_id", "reason"),
    "track record": _jsonl_with("record", "format"),
    "adjudication list": _jsonl_with("query_id", "doc", "majority", "grades"),
    "judge cache": _jsonl_with("format", "key", "repeat", "grade"),
    "calibration card": lambda path: _has_mark(path, b'"groundkit-calibration-card"'),
    "pool report": lambda path: _json_format(path, "groundkit-pool"),
    "sample sheet": _jsonl_with("sheet", "stratum", "stratum_size", "mark"),
    "sample sheet (CSV)": lambda path: _csv_header_has(path, ("sheet", "stratum", "mark")),
    "run file": _trec_table(6, integer=3, number=4),  # query Q0 doc rank score tag
    "qrels file": _trec_table(4, integer=3),  # query 0 doc relevance
}
"""Each kind of output and how an existing file is recognised as one (and may be replaced).

A kind not listed (the review journal, which checks its own header when it is read, a torn
first line included) accepts any regular file."""


def force_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--force`` flag of a writing command."""
    return click.option(
        "--force",
        is_flag=True,
        help="Replace (or append to) existing files that are not this command's own kind of "
        "output. Inputs are never overwritten.",
    )(function)


def guard(
    outputs: Sequence[tuple[str, Path | None, str]],
    inputs: Sequence[tuple[str, Path | None]] = (),
    *,
    force: bool = False,
    appends: Sequence[str] = (),
) -> None:
    """Refuse unusable outputs before any work (exit 2, one line naming both paths).

    Args:
        outputs: ``(flag, path, kind)`` of every output; ``None`` paths are skipped. ``kind``
            is a key of :data:`KINDS`.
        inputs: ``(flag, path)`` of every input file or folder; ``None`` paths are skipped.
        force: The command's ``--force``.
        appends: The flags whose output is appended to rather than replaced.

    Raises:
        InputError: The first problem.
    """
    checked = [
        OutputPath(path, flag, kind, KINDS.get(kind), append=flag in appends)
        for flag, path, kind in outputs
        if path is not None
    ]
    sources = [InputPath(path, flag) for flag, path in inputs if path is not None]
    try:
        guard_outputs(checked, sources, force=force, force_hint="pass --force")
    except JudgmentError as error:
        raise InputError(str(error)) from None


def _named_output(error: OSError, outputs: OutputSet, finals: Sequence[Path]) -> str:
    """The output a failed write was for: its final name, never its temporary's."""
    if error.filename:
        for final in finals:
            if Path(os.fsdecode(error.filename)) == outputs.temporary(final):
                return shown_path(final)
        return shown_path(error.filename)
    # A failed write or close names no file: with one output, it is that one.
    return shown_path(finals[0]) if len(finals) == 1 else "an output"


@contextmanager
def output_set(paths: Sequence[Path | None]) -> Iterator[OutputSet]:
    """Write ``paths`` as one set: inside the block, write each to ``outputs.temporary(path)``.

    The set is committed when the block ends without an error; otherwise the temporaries are
    removed and every old output is left as it was.

    Raises:
        InputError: The outputs cannot be written (a full disk names the output).
    """
    finals = [path for path in paths if path is not None]
    try:
        with OutputSet(finals) as outputs:
            try:
                yield outputs
            except OSError as error:
                raise InputError(
                    f"cannot write {_named_output(error, outputs, finals)}: "
                    f"{error.strerror or error}; the earlier outputs are unchanged"
                ) from None
            outputs.commit()
    except JudgmentError as error:
        raise InputError(str(error)) from None
