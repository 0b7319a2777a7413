"""Streaming reader for BEIR's JSON Lines files, plain or gzip-compressed.

The files are untrusted downloads: every line must be one JSON object with unique keys and
no ``NaN``/``Infinity``, in UTF-8; the first problem is an error naming the file and line.
Lines are read one at a time (``gzip`` decompresses as it goes), so memory does not grow with
the file.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from groundkit.adapters.beir._errors import BeirError
from groundkit.adapters.beir._problems import ProblemLog
from groundkit.judgments import JudgmentError
from groundkit.judgments.gold import parse_jsonl_line

__all__ = ["file_digest", "find_jsonl", "iter_json_objects"]

_BLOCK = 1 << 20


def find_jsonl(source_dir: Path, stem: str) -> Path:
    """Return ``<stem>.jsonl`` or ``<stem>.jsonl.gz`` in ``source_dir``, whichever exists.

    Raises:
        BeirError: Neither exists, both exist (ambiguous), or the name is not a regular file.
    """
    plain = source_dir / f"{stem}.jsonl"
    packed = source_dir / f"{stem}.jsonl.gz"
    present = [candidate for candidate in (plain, packed) if candidate.is_file()]
    if len(present) == 2:
        raise BeirError(
            f"both {plain.name} and {packed.name} exist; keep one so it is clear which to read",
            path=source_dir,
        )
    if present:
        return present[0]
    for candidate in (plain, packed):
        if candidate.exists() or candidate.is_symlink():
            raise BeirError("not a readable regular file", path=candidate)
    raise BeirError(
        f"missing {plain.name} (or {packed.name}); expected BEIR's layout: corpus.jsonl, "
        "queries.jsonl, qrels/<split>.tsv",
        path=source_dir,
    )


def _open(path: Path) -> gzip.GzipFile | BinaryIO:
    try:
        if path.name.endswith(".gz"):
            return gzip.GzipFile(path, "rb")
        return path.open("rb")
    except OSError as error:
        raise BeirError(f"cannot read file: {error.strerror or error}", path=path) from None


def _parse_line(raw: bytes, path: Path, number: int) -> dict[str, Any] | None:
    # Core's strict JSONL syntax, reported as the adapter's own error class.
    try:
        return parse_jsonl_line(raw, path=path, line=number)
    except JudgmentError as error:
        raise BeirError(error.message, path=error.path, line=error.line) from None


def iter_json_objects(
    path: Path,
    on_bytes: Callable[[bytes], None] | None = None,
    problems: ProblemLog | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Stream ``(line_number, object)`` pairs of a JSON Lines file (``.gz`` decompressed).

    Blank lines are skipped; a UTF-8 byte-order mark at the start is ignored.

    Args:
        path: The file.
        on_bytes: Called with every raw (decompressed) line, e.g. to hash the content.
        problems: Record bad lines here and go on (a file that cannot be read further is
            recorded and ends the iteration); without it the first problem is raised.

    Raises:
        BeirError: The file is unreadable, truncated or corrupt (gzip), not UTF-8, or a line
            is not a JSON object; the message names the file and line.
    """
    handle = _open(path)
    number = 0
    with handle:
        while True:
            try:
                raw = handle.readline()
            except (OSError, EOFError, zlib.error) as error:
                failure = BeirError(
                    f"cannot read (corrupt or truncated file?): {error}",
                    path=path,
                    line=number + 1,
                )
                if problems is None:
                    raise failure from None
                problems.add("unreadable file", failure)
                return
            if not raw:
                return
            number += 1
            if on_bytes is not None:
                on_bytes(raw)
            try:
                value = _parse_line(raw, path, number)
            except BeirError as error:
                if problems is None:
                    raise
                problems.add("line that is not one JSON object", error)
                continue
            if value is not None:
                yield number, value


def file_digest(path: Path) -> str:
    """SHA-256 of the file's (decompressed) bytes: the digest of every line ``on_bytes`` sees.

    Raises:
        BeirError: The file cannot be read (to the end) any more.
    """
    digest = hashlib.sha256()
    try:
        with _open(path) as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
    except (OSError, EOFError, zlib.error) as error:
        raise BeirError(f"cannot read (corrupt or truncated file?): {error}", path=path) from None
    return digest.hexdigest()
