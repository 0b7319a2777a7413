"""Which BEIR ids groundkit can use as they are, and the deterministic ``slug`` mapping.

Document ids become file names (``<id>.txt``) and must satisfy core's document-id contract
and portable path rules; query ids must be lowercase kebab-case. ``strict`` refuses a dataset
with any other id; ``slug`` renames just those ids (see :func:`map_ids` for the exact rule).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal

from groundkit.adapters.beir._errors import BeirError
from groundkit.judgments import JudgmentError
from groundkit.judgments.files import (
    MAX_COMPONENT_BYTES,
    find_case_collisions,
    validate_path_component,
)
from groundkit.judgments.gold import validate_doc_id, validate_query_id

__all__ = [
    "DOCUMENT_SUFFIX",
    "HASH_LENGTHS",
    "SLUG_MAX_LENGTH",
    "IdKind",
    "IdMapping",
    "case_collision_problems",
    "document_id_problem",
    "map_ids",
    "query_id_problem",
    "slugify",
    "strict_id_error",
]

#: How BEIR ids are turned into groundkit ids: refuse unusable ids, or rename them.
IdMapping = Literal["strict", "slug"]
IdKind = Literal["document", "query"]

#: Every document is written as ``corpus/<document id>.txt``.
DOCUMENT_SUFFIX = ".txt"
#: Longest slug before a hash suffix is added (longer slugs are cut, which is lossy).
SLUG_MAX_LENGTH = 64
#: Hex digits of SHA-256 in the suffix: tried in this order until names are unique.
HASH_LENGTHS = (8, 16, 64)

_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
_SHOWN_IDS = 5


def document_id_problem(doc_id: str) -> str | None:
    r"""Why ``doc_id`` cannot be used unchanged as ``corpus/<doc_id>.txt``, or ``None``.

    The id must be one portable path component (core's ``validate_path_component``: no
    ``/``, ``\``, NUL or control characters, no ``<>:"|?*``, not ``.``/``..``, no Windows
    device name, no trailing dot or space, at most 251 UTF-8 bytes so that ``.txt`` fits),
    satisfy core's document-id contract, and not start with ``.`` (hidden files are skipped
    by corpus readers).
    """
    if doc_id.startswith("."):
        return f"document id {doc_id!r} starts with '.', so its file would be hidden"
    try:
        # With room left for ".txt", the full file name passes too: the suffix adds no
        # separator, no trailing dot or space, and device names are judged before the dot.
        validate_path_component(doc_id, max_bytes=MAX_COMPONENT_BYTES - len(DOCUMENT_SUFFIX))
        validate_doc_id(doc_id + DOCUMENT_SUFFIX)
    except JudgmentError as error:
        return error.message
    return None


def query_id_problem(query_id: str) -> str | None:
    """Why ``query_id`` breaks core's query-id contract (lowercase kebab-case), or ``None``."""
    try:
        validate_query_id(query_id)
    except JudgmentError as error:
        return error.message
    return None


def _problem(kind: IdKind) -> Callable[[str], str | None]:
    return document_id_problem if kind == "document" else query_id_problem


def _fold(name: str) -> str:
    # Same equivalence as core's find_case_collisions: NFC + case folding.
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def slugify(original: str) -> tuple[str, bool]:
    """The kebab-case slug of an id and whether it lost nothing but ASCII letter case.

    Steps: Unicode NFKD, drop what is not ASCII (so accents go: ``é`` -> ``e``), lowercase,
    every run of characters other than ``a-z``/``0-9`` becomes one ``-``, trim ``-`` at both
    ends, cut to :data:`SLUG_MAX_LENGTH` characters (and trim ``-`` again).

    Args:
        original: The BEIR id.

    Returns:
        ``(slug, lossless)``; ``slug`` may be empty; ``lossless`` is true only when the id is
        ASCII and the slug equals the id lowercased (``PLAIN-2`` -> ``plain-2``).
    """
    ascii_only = unicodedata.normalize("NFKD", original).encode("ascii", "ignore").decode()
    slug = _NON_ALPHANUMERIC.sub("-", ascii_only.lower()).strip("-")
    slug = slug[:SLUG_MAX_LENGTH].rstrip("-")
    lossless = bool(slug) and original.isascii() and slug == original.lower()
    return slug, lossless


def _hashed(original: str, base: str, digits: int) -> str:
    digest = hashlib.sha256(original.encode("utf-8")).hexdigest()[:digits]
    return f"{base or 'id'}-{digest}"


def map_ids(ids: Iterable[str], kind: IdKind) -> dict[str, str]:
    """The ``slug`` mapping: new names for the ids that cannot be used as they are.

    Rule (deterministic; it depends only on the set of ids, not on their order):

    1. An id that is valid (see :func:`document_id_problem` / :func:`query_id_problem`) and
       does not collide with another valid id is kept unchanged and is not in the result.
       Valid document ids that collide on a case-insensitive file system (``Doc1``/``doc1``)
       are all renamed.
    2. Every other id gets its :func:`slugify` slug. When the slug lost more than ASCII letter
       case (a character replaced, dropped or transliterated, or the slug was cut), or is
       empty, or is still not a valid id (``con`` is a Windows device name), the name is
       ``<slug>-<first 8 hex digits of SHA-256 of the UTF-8 id>`` (``id-<hash>`` for an
       empty slug).
    3. Names that would still collide — with a kept id or with each other, case-insensitively
       for documents — get the hash suffix; if hashed names collide, the suffix grows to
       16, then 64 hex digits.

    Args:
        ids: The ids (duplicates are ignored).
        kind: ``"document"`` (names become ``<name>.txt``) or ``"query"``.

    Returns:
        ``{original: mapped}`` for the ids that change only.

    Raises:
        BeirError: Names still collide with the full 64-digit hash (practically impossible).
    """
    problem = _problem(kind)
    key: Callable[[str], str] = _fold if kind == "document" else (lambda name: name)
    unique = sorted(set(ids))
    kept = _kept(unique, problem, key)
    renamer = _Renamer(kind, problem, [original for original in unique if original not in kept])
    return renamer.settle(key, taken={key(original) for original in kept})


def _kept(
    unique: Sequence[str], problem: Callable[[str], str | None], key: Callable[[str], str]
) -> set[str]:
    """The valid ids that collide with no other valid id (rule 1)."""
    valid = [original for original in unique if problem(original) is None]
    valid_groups: dict[str, list[str]] = defaultdict(list)
    for original in valid:
        valid_groups[key(original)].append(original)
    return {original for original in valid if len(valid_groups[key(original)]) == 1}


class _Renamer:
    """The renamed ids and how far each has been hashed (rules 2 and 3)."""

    def __init__(
        self, kind: IdKind, problem: Callable[[str], str | None], originals: Sequence[str]
    ) -> None:
        self._kind = kind
        self._problem = problem
        self._slugs: dict[str, str] = {}
        self._level: dict[str, int] = {}  # 0: bare slug, n: hash of HASH_LENGTHS[n - 1] digits
        for original in originals:
            slug, lossless = slugify(original)
            self._slugs[original] = slug
            self._level[original] = 0 if lossless else 1

    def name_of(self, original: str) -> str:
        step = self._level[original]
        base = self._slugs[original]
        return base if step == 0 else _hashed(original, base, HASH_LENGTHS[step - 1])

    def _bump(self, original: str) -> None:
        self._level[original] += 1
        if self._level[original] > len(HASH_LENGTHS):
            raise BeirError(
                f"cannot map {self._kind} id {original!r} to a unique safe name",
                item_id=original,
            )

    def _clashing(self, key: Callable[[str], str], taken: set[str]) -> list[str]:
        by_key: dict[str, list[str]] = defaultdict(list)
        for original in self._level:
            by_key[key(self.name_of(original))].append(original)
        return [
            original
            for group_key, group in by_key.items()
            if group_key in taken or len(group) > 1
            for original in group
        ]

    def settle(self, key: Callable[[str], str], *, taken: set[str]) -> dict[str, str]:
        """Hash further until every name is valid and unique; ``{original: name}``."""
        while True:
            for original in self._level:
                while self._problem(self.name_of(original)) is not None:
                    self._bump(original)
            clashing = self._clashing(key, taken)
            if not clashing:
                return {original: self.name_of(original) for original in self._level}
            for original in clashing:
                self._bump(original)


def _listing(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(original) for original in ids[:_SHOWN_IDS])
    more = len(ids) - _SHOWN_IDS
    return f"{shown} and {more} more" if more > 0 else shown


def strict_id_error(
    documents: Sequence[tuple[str, int, str]],
    queries: Sequence[tuple[str, int, str]],
    corpus_path: Path,
    queries_path: Path,
) -> BeirError:
    """The one-line error for ``id_mapping="strict"`` listing the ids groundkit cannot use.

    Args:
        documents: ``(id, line, reason)`` of the unusable document ids, in file order.
        queries: ``(id, line, reason)`` of the unusable query ids, in file order.
        corpus_path: The corpus file (named in the error when a document id is the first).
        queries_path: The queries file.

    Returns:
        The error (to raise); it points at the first offending id's file and line.
    """
    parts: list[str] = []
    if documents:
        parts.append(f"{len(documents)} document id(s) ({_listing([d[0] for d in documents])})")
    if queries:
        parts.append(f"{len(queries)} query id(s) ({_listing([q[0] for q in queries])})")
    first, path = (documents[0], corpus_path) if documents else (queries[0], queries_path)
    return BeirError(
        f"{' and '.join(parts)} cannot be used as groundkit ids; first: {first[2]}; "
        'pass id_mapping="slug" (CLI: --id-mapping slug) to map them to safe kebab-case '
        "names recorded in id_map.json",
        path=path,
        line=first[1],
        item_id=first[0],
    )


def case_collision_problems(doc_ids: Iterable[str]) -> dict[str, str]:
    """Document ids whose files would coincide on a case-insensitive file system.

    Returns:
        ``{later id: reason}`` for the second (and later) spelling of each colliding name.
    """
    by_name = {doc_id + DOCUMENT_SUFFIX: doc_id for doc_id in doc_ids}
    return {
        by_name[later]: (
            f"document ids {by_name[first]!r} and {by_name[later]!r} would be the same file "
            "on a case-insensitive file system"
        )
        for first, later in find_case_collisions(by_name)
        # Only whole names matter; ids are single path components, checked beforehand.
        if first in by_name and later in by_name
    }
