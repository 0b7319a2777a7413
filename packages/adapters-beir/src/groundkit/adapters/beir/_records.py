"""Validation of BEIR corpus and query records, and the adapted document text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundkit.adapters.beir._errors import BeirError

__all__ = [
    "TITLE_SEPARATOR",
    "DocumentRecord",
    "QueryRecord",
    "RecordError",
    "adapted_document_text",
    "parse_document",
    "parse_query",
]

#: Placed between a document's title and its body in the adapted text (a blank line).
TITLE_SEPARATOR = "\n\n"

_BOM = "\ufeff"
_SURROGATE = re.compile("[\ud800-\udfff]")


class RecordError(BeirError):
    """A corpus or query line that is not a valid record; ``kind`` groups it in reports."""

    kind = "invalid record"


def _refuse(
    kind: str, message: str, path: Path, line: int, item_id: str | None = None
) -> RecordError:
    error = RecordError(message, path=path, line=line, item_id=item_id)
    error.kind = kind
    return error


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """A validated corpus line: its id and its adapted text (title, separator, body)."""

    doc_id: str
    text: str


@dataclass(frozen=True, slots=True)
class QueryRecord:
    """A validated query line."""

    query_id: str
    text: str


def adapted_document_text(title: str, text: str) -> str:
    """The text a BEIR document becomes: ``title + TITLE_SEPARATOR + text``.

    A part that is empty or only whitespace is left out together with the separator (a
    document without a title is just its body). A leading byte-order mark (U+FEFF) of either
    part is dropped first, because corpus readers drop it from the start of a file.

    Args:
        title: The BEIR ``title`` (``""`` when absent).
        text: The BEIR ``text``.

    Returns:
        The adapted text; empty when both parts are empty.
    """
    parts = [part.removeprefix(_BOM) for part in (title, text)]
    return TITLE_SEPARATOR.join(part for part in parts if part.strip())


def _record_id(data: dict[str, Any], path: Path, line: int) -> str:
    kind = "missing or invalid '_id'"
    if "_id" not in data:
        raise _refuse(kind, "missing field '_id'", path, line)
    value = data["_id"]
    if not isinstance(value, str):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise _refuse(
            kind, f"'_id' must be a string, not {type(value).__name__} ({shown})", path, line
        )
    if value == "":
        raise _refuse(kind, "'_id' is empty", path, line)
    if _SURROGATE.search(value):
        raise _refuse(kind, "'_id' contains an unpaired surrogate", path, line)
    return value


def _string_field(
    data: dict[str, Any], field: str, path: Path, line: int, item_id: str, *, optional: bool
) -> str:
    if field not in data or (optional and data[field] is None):
        if optional:
            return ""
        raise _refuse(f"missing field {field!r}", f"missing field {field!r}", path, line, item_id)
    value = data[field]
    if not isinstance(value, str):
        raise _refuse(
            f"{field!r} that is not a string",
            f"{field!r} must be a string, not {type(value).__name__}",
            path,
            line,
            item_id,
        )
    if _SURROGATE.search(value):
        raise _refuse(
            "unpaired surrogate",
            f"{field!r} contains an unpaired surrogate (not valid Unicode text)",
            path,
            line,
            item_id,
        )
    return value


def parse_document(data: dict[str, Any], path: Path, line: int) -> DocumentRecord:
    """Validate one ``corpus.jsonl`` object (``_id``, optional ``title``, ``text``).

    Fields other than these three (``metadata``...) are ignored.

    An empty document (neither title nor text) is returned with an empty text: the caller
    refuses or skips it.

    Raises:
        RecordError: A missing, non-string or empty ``_id``; a missing or non-string ``text``;
            a non-string ``title``; a NUL character (a corpus file with a NUL byte is treated
            as binary by corpus readers); an unpaired surrogate.
    """
    doc_id = _record_id(data, path, line)
    title = _string_field(data, "title", path, line, doc_id, optional=True)
    body = _string_field(data, "text", path, line, doc_id, optional=False)
    text = adapted_document_text(title, body)
    if "\x00" in text:
        raise _refuse(
            "NUL character in a document",
            "document contains a NUL character, which a text corpus cannot hold",
            path,
            line,
            doc_id,
        )
    return DocumentRecord(doc_id, text)


def parse_query(data: dict[str, Any], path: Path, line: int) -> QueryRecord:
    """Validate one ``queries.jsonl`` object (``_id``, ``text``; other fields are ignored).

    Raises:
        RecordError: A missing, non-string or empty ``_id``; a missing, non-string, empty or
            whitespace-only ``text``; an unpaired surrogate.
    """
    query_id = _record_id(data, path, line)
    text = _string_field(data, "text", path, line, query_id, optional=False)
    if not text.strip():
        raise _refuse("empty query", "query text is empty", path, line, query_id)
    return QueryRecord(query_id, text)
