"""trec_eval's other judgment formats (``-R``): preferences, qrels as preferences, qrels_jg.

* ``prefs``: ``query judgment_group sub_group document level`` per line. Within a
  sub-group, a document with a higher level is preferred to one with a lower level; a
  judgment group is one user's consistent set of preferences (its sub-groups join by
  transitivity); level 0 means non-relevant, above 0 relevant.
* ``qrels_prefs``: a qrels file read as preferences, ``query judgment_group document level``
  (the iteration field is the judgment group, one sub-group per group).
* ``qrels_jg``: a qrels file whose iteration field names a judgment group; each group is
  scored as its own qrels and the values averaged (``map_avgjg``, ``P_avgjg``...).

Lines starting with ``#`` are comments, blank lines are skipped, fields are separated by
whitespace. Levels are decimal numbers (prefs) or integers as C's ``atol`` reads them
(qrels_jg). A document listed twice in one sub-group (prefs) or group (qrels_jg) is an error,
as is any malformed line: one line naming the file and line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.trec._io import _RELEVANCE, _atol, _read_lines, _text

__all__ = ["Preference", "read_prefs", "read_qrels_jg"]

_PREFS_FIELDS = "query judgment_group sub_group document level"
_QRELS_FIELDS = "query judgment_group document level"


@dataclass(frozen=True)
class Preference:
    """One line of a preference file."""

    group: str  # judgment group
    sub_group: str
    doc: str
    level: float
    line: int


def _lines(path: str | Path, fields: str) -> list[tuple[int, list[str]]]:
    """The content lines of a file: ``(line number, fields)``, checked for their count."""
    expected = len(fields.split())
    out: list[tuple[int, list[str]]] = []
    for number, raw in enumerate(_read_lines(path), start=1):
        if raw.startswith(b"#"):
            continue
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != expected:
            raise JudgmentError(
                f"expected {expected} fields ({fields}), got {len(parts)}", path=path, line=number
            )
        if _RELEVANCE.fullmatch(parts[-1]) is None:
            level = _text(parts[-1], path, number)
            raise JudgmentError(f"level {level!r} is not a number", path=path, line=number)
        out.append((number, [_text(part, path, number) for part in parts]))
    return out


def read_prefs(path: str | Path, *, qrels: bool = False) -> dict[str, list[Preference]]:
    """Read preference judgments (``-R prefs``), or a qrels file as preferences.

    Args:
        path: The file.
        qrels: Read ``query judgment_group document level`` (``-R qrels_prefs``): the
            iteration field is the judgment group and every group has one sub-group ``0``.

    Returns:
        ``{query: [preference, ...]}`` in file order.

    Raises:
        JudgmentError: An unreadable file, a malformed line, or a document listed twice in
            one sub-group (one line naming the file and line).
    """
    out: dict[str, list[Preference]] = {}
    seen: dict[tuple[str, str, str, str], int] = {}
    for number, fields in _lines(path, _QRELS_FIELDS if qrels else _PREFS_FIELDS):
        if qrels:
            query, group, doc, level = fields
            sub_group = "0"
        else:
            query, group, sub_group, doc, level = fields
        first = seen.setdefault((query, group, sub_group, doc), number)
        if first != number:
            raise JudgmentError(
                f"document {doc!r} listed twice in judgment group {group!r} "
                f"(first on line {first})",
                path=path,
                line=number,
                item_id=query,
            )
        value = float(level)
        if not math.isfinite(value):
            raise JudgmentError(f"level {level!r} is out of range", path=path, line=number)
        out.setdefault(query, []).append(Preference(group, sub_group, doc, value, number))
    return out


def read_qrels_jg(path: str | Path) -> dict[str, dict[str, dict[str, int]]]:
    """Read qrels with judgment groups (``-R qrels_jg``).

    Args:
        path: The file (``query judgment_group document relevance`` per line).

    Returns:
        ``{query: {judgment_group: {document: relevance}}}``.

    Raises:
        JudgmentError: An unreadable file, a malformed line, or a document judged twice in
            one group (one line naming the file and line).
    """
    out: dict[str, dict[str, dict[str, int]]] = {}
    first_line: dict[tuple[str, str, str], int] = {}
    for number, (query, group, doc, level) in _lines(path, _QRELS_FIELDS):
        first = first_line.setdefault((query, group, doc), number)
        if first != number:
            raise JudgmentError(
                f"document {doc!r} judged twice in judgment group {group!r} "
                f"(first on line {first})",
                path=path,
                line=number,
                item_id=query,
            )
        relevance = _atol(level.encode("ascii"))
        if not -(2**63) <= relevance < 2**63:
            raise JudgmentError(f"relevance {level!r} is out of range", path=path, line=number)
        out.setdefault(query, {}).setdefault(group, {})[doc] = relevance
    return out
