"""BEIR relevance files: ``qrels/<split>.tsv`` with ``query-id``, ``corpus-id``, ``score``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from groundkit.adapters.beir._errors import BeirError
from groundkit.judgments import JudgmentError, validate_path_component

__all__ = ["QrelsRow", "find_qrels", "read_qrels", "validate_split"]

_SPLIT = re.compile(r"[A-Za-z0-9._-]+")
_HEADER = ["query-id", "corpus-id", "score"]
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class QrelsRow:
    """One relevance row; ``line`` is its 1-based line number in the file."""

    query_id: str
    doc_id: str
    score: int
    line: int


def validate_split(split: str) -> str:
    """Check a split name: letters, digits, ``.``, ``_`` or ``-``; not ``.`` or ``..``.

    Raises:
        BeirError: The name could escape ``qrels/`` or is not a portable file name.
    """
    if not isinstance(split, str) or _SPLIT.fullmatch(split) is None or split in {".", ".."}:
        raise BeirError(
            f"split name {split!r} is not allowed: use letters, digits, '.', '_' or '-' "
            "(e.g. 'test'), and not '.' or '..'"
        )
    try:
        validate_path_component(f"{split}.tsv")
    except JudgmentError as error:
        raise BeirError(f"split name {split!r} is not allowed: {error.message}") from None
    return split


def find_qrels(source_dir: Path, split: str) -> Path:
    """Return ``source_dir/qrels/<split>.tsv``.

    Raises:
        BeirError: The file is missing (the message lists the splits that exist).
    """
    folder = source_dir / "qrels"
    path = folder / f"{split}.tsv"
    if path.is_file():
        return path
    if path.exists() or path.is_symlink():
        raise BeirError("not a readable regular file", path=path)
    available = sorted(p.stem for p in folder.glob("*.tsv")) if folder.is_dir() else []
    listed = ", ".join(available) if available else "none"
    raise BeirError(f"missing qrels file for split {split!r} (splits found: {listed})", path=path)


def _parse_score(cell: str, path: Path, line: int) -> int:
    text = cell.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise BeirError(f"score {cell!r} is not a number", path=path, line=line) from None
    if not math.isfinite(value) or not value.is_integer():
        raise BeirError(f"score {cell!r} is not a whole number", path=path, line=line)
    return int(value)


def read_qrels(path: Path) -> list[QrelsRow]:
    r"""Read a BEIR qrels file: tab-separated ``query-id``, ``corpus-id``, ``score``.

    The header row is optional (recognised by its three column names on the first non-blank
    line). Blank lines are skipped; ``\r\n`` line ends are accepted. Scores are whole
    numbers (``1`` or ``1.0``); rows of any score are returned (the caller keeps positives).

    Raises:
        BeirError: Unreadable or non-UTF-8 file, a row without exactly three columns, an empty
            id, a score that is not a whole number, or a (query, document) pair given twice;
            the message names the file and line.
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise BeirError(f"cannot read file: {error.strerror or error}", path=path) from None
    rows: list[QrelsRow] = []
    first_line: dict[tuple[str, str], int] = {}
    seen_content = False
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8").removesuffix("\r")
        except UnicodeDecodeError as error:
            raise BeirError(
                f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})",
                path=path,
                line=number,
            ) from None
        if number == 1:
            line = line.removeprefix(_BOM)
        if not line.strip():
            continue
        cells = line.split("\t")
        if not seen_content:
            seen_content = True
            if [cell.strip().lower() for cell in cells] == _HEADER:
                continue
        if len(cells) != 3:
            raise BeirError(
                f"expected 3 tab-separated columns (query-id, corpus-id, score), found "
                f"{len(cells)}",
                path=path,
                line=number,
            )
        query_id, doc_id, score_cell = cells
        if not query_id or not doc_id:
            raise BeirError("empty query-id or corpus-id", path=path, line=number)
        score = _parse_score(score_cell, path, number)
        previous = first_line.setdefault((query_id, doc_id), number)
        if previous != number:
            raise BeirError(
                f"query {query_id!r} and document {doc_id!r} already have a row (line {previous})",
                path=path,
                line=number,
            )
        rows.append(QrelsRow(query_id, doc_id, score, number))
    return rows
