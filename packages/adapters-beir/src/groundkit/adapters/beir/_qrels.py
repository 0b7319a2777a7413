"""BEIR relevance files: ``qrels/<split>.tsv`` with ``query-id``, ``corpus-id``, ``score``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from groundkit.adapters.beir._errors import BeirError
from groundkit.adapters.beir._problems import ProblemLog
from groundkit.judgments import JudgmentError
from groundkit.judgments.files import validate_path_component

__all__ = ["QrelsFile", "QrelsRow", "find_qrels", "read_qrels", "validate_split"]

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


_INT64 = 2**63


def _parse_score(cell: str) -> int | str:
    """The score as an int, or why it is not one (a message)."""
    text = cell.strip()
    try:
        value = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            return f"score {cell!r} is not a number"
        if not math.isfinite(number) or not number.is_integer():
            return f"score {cell!r} is not a whole number"
        value = int(number)
    if not -_INT64 <= value < _INT64:
        return f"score {cell!r} does not fit in 64 bits (the grades are 64-bit integers)"
    return value


@dataclass(slots=True)
class QrelsFile:
    """The rows of a qrels file and how it was laid out.

    Attributes:
        rows: Every valid row, in file order.
        columns: 3 (BEIR: query-id, corpus-id, score) or 4 (TREC: query, iteration,
            document, relevance; the iteration is ignored).
    """

    rows: list[QrelsRow] = field(default_factory=list)
    columns: int = 3


def _cells(line: str) -> list[str]:
    # BEIR separates with tabs; TREC qrels usually with spaces.
    return line.split("\t") if "\t" in line else line.split()


def _lines(path: Path, problems: ProblemLog) -> list[tuple[int, str]]:
    try:
        data = path.read_bytes()
    except OSError as error:
        problems.add(
            "unreadable file",
            BeirError(f"cannot read file: {error.strerror or error}", path=path),
        )
        return []
    lines: list[tuple[int, str]] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8").removesuffix("\r")
        except UnicodeDecodeError as error:
            problems.add(
                "line that is not UTF-8",
                BeirError(
                    f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})",
                    path=path,
                    line=number,
                ),
            )
            continue
        if number == 1:
            line = line.removeprefix(_BOM)
        if line.strip():
            lines.append((number, line))
    return lines


def read_qrels(path: Path, problems: ProblemLog | None = None) -> QrelsFile:
    r"""Read a BEIR qrels file: tab-separated ``query-id``, ``corpus-id``, ``score``.

    The header row is optional (recognised by its three column names on the first non-blank
    line). Blank lines are skipped; ``\r\n`` line ends are accepted. Scores are whole
    numbers (``1`` or ``1.0``) that fit in 64 bits; rows of any score are returned (the caller
    keeps positives). A file whose first row has four columns is read as TREC qrels (query,
    iteration, document, relevance; space- or tab-separated; the iteration is ignored).

    Args:
        path: The file.
        problems: Record problems here and go on; without it the first one is raised.

    Raises:
        BeirError: Unreadable or non-UTF-8 file, a row with another number of columns than the
            file's layout, an empty id, a score that is not a whole 64-bit number, or a
            (query, document) pair given twice; the message names the file and line.
    """
    log = problems if problems is not None else ProblemLog(path.parent)
    result = QrelsFile()
    first_line: dict[tuple[str, str], int] = {}
    lines = _lines(path, log)
    if lines and [cell.strip().lower() for cell in _cells(lines[0][1])] == _HEADER:
        lines = lines[1:]
    if lines and len(_cells(lines[0][1])) == 4:
        result.columns = 4
    for number, line in lines:
        cells = _cells(line)
        if len(cells) != result.columns:
            expected = (
                "3 tab-separated columns (query-id, corpus-id, score)"
                if result.columns == 3
                else "4 columns (query, iteration, document, relevance) like the file's first row"
            )
            log.add(
                "qrels row with a wrong number of columns",
                BeirError(f"expected {expected}, found {len(cells)}", path=path, line=number),
            )
            continue
        query_id, doc_id, score_cell = (
            cells if result.columns == 3 else (cells[0], cells[2], cells[3])
        )
        if not query_id or not doc_id:
            log.add(
                "qrels row with an empty id",
                BeirError("empty query-id or corpus-id", path=path, line=number),
            )
            continue
        score = _parse_score(score_cell)
        if isinstance(score, str):
            log.add(
                "qrels score that is not a 64-bit whole number",
                BeirError(score, path=path, line=number),
            )
            continue
        previous = first_line.setdefault((query_id, doc_id), number)
        if previous != number:
            log.add(
                "qrels pair given twice",
                BeirError(
                    f"query {query_id!r} and document {doc_id!r} already have a row "
                    f"(line {previous})",
                    path=path,
                    line=number,
                ),
            )
            continue
        result.rows.append(QrelsRow(query_id, doc_id, score, number))
    if problems is None:
        log.raise_if_any()
    return result
