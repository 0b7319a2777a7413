"""The journal of an output set, read as data: what a dead writer's journal may act on.

:mod:`groundkit.judgments.files._outputs` writes one journal per folder of a set before its
renames and finishes them from it after a kill. A folder may come from elsewhere, so a journal
is trusted only as far as it proves itself: every member's temporary, backup and link must be
names this package gives beside the member's final path, and a member (or an obsolete file) is
acted on only when its folder holds the same journal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = ["JOURNAL_KIND", "read_journal", "restricted", "shares_journal"]

JOURNAL_KIND = "groundkit-output-set"
_STEM_CHARS = 40  # keeps every temporary name far below the 255-byte limit
_TEMP_TAIL = re.compile(r"\.grk-(\d+)-[0-9a-f]{8}\.(?:tmp|old|prev)$")


def read_journal(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") != JOURNAL_KIND:
        return None
    members = data.get("members")
    if not isinstance(members, list) or not all(_own_member(m) for m in members):
        return None
    lists = (data.get("obsolete", []), data.get("journals", []))
    if not all(isinstance(x, list) and all(isinstance(i, str) for i in x) for x in lists):
        return None
    return data


def _sibling_of(final: Path, other: object, tails: tuple[str, ...]) -> bool:
    """Whether ``other`` is a name this module gives beside ``final`` (``tails``: endings)."""
    if not isinstance(other, str):
        return False
    path = Path(other)
    match = _TEMP_TAIL.search(path.name)
    return (
        path.parent == final.parent
        and match is not None
        and path.name[: match.start()] == f".{final.name[:_STEM_CHARS]}"
        and path.name.endswith(tails)
    )


def _own_member(member: object) -> bool:
    """A journal member as :meth:`OutputSet.commit` writes them (anything else: not ours)."""
    if not isinstance(member, dict) or not isinstance(member.get("final"), str):
        return False
    final = Path(member["final"])
    if not final.is_absolute() or final.name in ("", ".", ".."):
        return False
    optional = [(member.get(k), t) for k, t in (("backup", (".old",)), ("previous", (".prev",)))]
    return _sibling_of(final, member.get("temporary"), (".tmp",)) and all(
        value is None or _sibling_of(final, value, tails) for value, tails in optional
    )


def shares_journal(folder: Path, name: str, data: dict[str, Any]) -> bool:
    """Whether ``folder`` holds the same journal (its members there may be acted on)."""
    copy = read_journal(folder / name)
    return copy is not None and copy == data


def restricted(journal: Path, data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The members and obsolete files of the folders that hold this very journal."""
    here = journal.parent.resolve()
    allowed: dict[Path, bool] = {}

    def holds(folder: Path) -> bool:
        resolved = folder.resolve()
        if resolved not in allowed:
            allowed[resolved] = resolved == here or shares_journal(folder, journal.name, data)
        return allowed[resolved]

    members = [m for m in data["members"] if holds(Path(m["final"]).parent)]
    obsolete = [o for o in data.get("obsolete", []) if holds(Path(o).parent)]
    return members, obsolete
