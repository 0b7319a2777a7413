"""Pass 1 of an adaptation: read and check every record, keep only what the judgments need.

Every problem goes into the :class:`~groundkit.adapters.beir._problems.ProblemLog` and reading
goes on, so one run reports all of them. What is kept: each document id with its line number
(the documents to write), the adapted text of the documents a positive qrels row names (the
gold quotes), the empty documents, and a SHA-256 digest of the corpus bytes. The texts of all
the documents are kept too while they add up to at most ``KEPT_CHARACTERS``, so that the write
needs no second parse, only a second digest (a larger corpus is read again, streamed).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from groundkit.adapters.beir._errors import BeirError
from groundkit.adapters.beir._jsonl import file_digest, iter_json_objects
from groundkit.adapters.beir._problems import ProblemLog
from groundkit.adapters.beir._qrels import QrelsRow
from groundkit.adapters.beir._records import RecordError, parse_document, parse_query

__all__ = [
    "KEPT_CHARACTERS",
    "CorpusScan",
    "QrelsCheck",
    "QueryScan",
    "check_qrels",
    "documents_again",
    "numeric_key",
    "padding_twins",
    "scan_corpus",
    "scan_queries",
]


KEPT_CHARACTERS = 1 << 25
"""Corpora up to this many characters are held in memory between the passes (32 Mi)."""


def numeric_key(identifier: str) -> str | None:
    """``"007"`` -> ``"7"``: the key under which zero-padded numeric ids coincide."""
    if not identifier.isascii() or not identifier.isdigit():
        return None
    return identifier.lstrip("0") or "0"


@dataclass(slots=True)
class CorpusScan:
    """What pass 1 keeps of the corpus."""

    lines: dict[str, int] = field(default_factory=dict)  # id -> line of the documents to write
    gold_texts: dict[str, str] = field(default_factory=dict)  # only documents with positives
    empty: dict[str, int] = field(default_factory=dict)  # empty documents (id -> line)
    # Every document to write, id -> text (in file order); None once the corpus is too large.
    texts: dict[str, str] | None = field(default_factory=dict)
    total_characters: int = 0
    digest: str = ""


@dataclass(slots=True)
class QueryScan:
    """What pass 1 keeps of the queries."""

    lines: dict[str, int] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # only judged queries


def _needed(identifier: str, needed: set[str], keys: set[str]) -> bool:
    if identifier in needed:
        return True
    key = numeric_key(identifier)
    return key is not None and key in keys


def _keys(identifiers: Iterable[str]) -> set[str]:
    return {key for key in map(numeric_key, identifiers) if key is not None}


def scan_queries(path: Path, needed: set[str], problems: ProblemLog) -> QueryScan:
    """Read every query, keeping the texts of the ``needed`` ones."""
    scan = QueryScan()
    keys = _keys(needed)
    for line, data in iter_json_objects(path, problems=problems):
        try:
            record = parse_query(data, path, line)
        except RecordError as error:
            problems.add(error.kind, error)
            continue
        previous = scan.lines.setdefault(record.query_id, line)
        if previous != line:
            problems.add(
                "duplicate query id",
                BeirError(
                    f"duplicate query id (first on line {previous})",
                    path=path,
                    line=line,
                    item_id=record.query_id,
                ),
            )
            continue
        if _needed(record.query_id, needed, keys):
            scan.texts[record.query_id] = record.text
    if not scan.lines and problems.total == 0:
        problems.add("empty file", BeirError("no queries in file", path=path))
    return scan


def scan_corpus(
    path: Path, needed: set[str], problems: ProblemLog, *, skip_empty: bool
) -> CorpusScan:
    """Read every document; empty ones are problems unless ``skip_empty``."""
    scan = CorpusScan()
    digest = hashlib.sha256()
    keys = _keys(needed)
    first_line: dict[str, int] = {}
    for line, data in iter_json_objects(path, digest.update, problems):
        try:
            record = parse_document(data, path, line)
        except RecordError as error:
            problems.add(error.kind, error)
            continue
        previous = first_line.setdefault(record.doc_id, line)
        if previous != line:
            problems.add(
                "duplicate document id",
                BeirError(
                    f"duplicate document id (first on line {previous})",
                    path=path,
                    line=line,
                    item_id=record.doc_id,
                ),
            )
            continue
        if not record.text:
            scan.empty[record.doc_id] = line
            if not skip_empty:
                problems.add(
                    "empty document",
                    BeirError(
                        "document has neither title nor text (pass skip_empty_documents=True, "
                        "CLI: --skip-empty-documents, to leave it and its qrels rows out)",
                        path=path,
                        line=line,
                        item_id=record.doc_id,
                    ),
                )
            continue
        scan.lines[record.doc_id] = line
        scan.total_characters += len(record.text)
        if scan.texts is not None:
            if scan.total_characters > KEPT_CHARACTERS:
                scan.texts = None
            else:
                scan.texts[record.doc_id] = record.text
        if _needed(record.doc_id, needed, keys):
            scan.gold_texts[record.doc_id] = record.text
    if not scan.lines and problems.total == 0:
        problems.add("empty file", BeirError("no documents in file", path=path))
    scan.digest = digest.hexdigest()
    return scan


def padding_twins(identifiers: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of ids that differ only by leading zeros (``"1"``, ``"01"``), first seen first."""
    groups: dict[str, list[str]] = defaultdict(list)
    for identifier in identifiers:
        key = numeric_key(identifier)
        if key is not None:
            groups[key].append(identifier)
    return [(group[0], other) for group in groups.values() for other in group[1:]]


@dataclass(slots=True)
class QrelsCheck:
    """The qrels rows resolved against the queries and the corpus."""

    positives: list[QrelsRow] = field(default_factory=list)  # ids as in the corpus/queries
    judged_queries: set[str] = field(default_factory=set)  # queries with any row
    dropped_empty_rows: int = 0  # rows naming a skipped empty document
    padded: list[tuple[str, str]] = field(default_factory=list)  # (qrels id, dataset id)


class _Resolver:
    """Finds a qrels id in the dataset, also when only leading zeros differ."""

    def __init__(self, known: Iterable[str]) -> None:
        self.known = set(known)
        self._by_key: dict[str, list[str]] | None = None

    def find(self, identifier: str) -> tuple[str | None, list[str]]:
        if identifier in self.known:
            return identifier, []
        key = numeric_key(identifier)
        if key is None:
            return None, []
        if self._by_key is None:
            self._by_key = defaultdict(list)
            for known in self.known:
                known_key = numeric_key(known)
                if known_key is not None:
                    self._by_key[known_key].append(known)
        candidates = sorted(self._by_key.get(key, []))
        return (candidates[0], []) if len(candidates) == 1 else (None, candidates)


def check_qrels(
    rows: list[QrelsRow],
    path: Path,
    queries: QueryScan,
    corpus: CorpusScan,
    problems: ProblemLog,
) -> QrelsCheck:
    """Resolve every row's ids; unknown or ambiguous ids are problems."""
    check = QrelsCheck()
    query_ids = _Resolver(queries.lines)
    doc_ids = _Resolver([*corpus.lines, *corpus.empty])
    for row in rows:
        query_id, query_options = query_ids.find(row.query_id)
        doc_id, doc_options = doc_ids.find(row.doc_id)
        for given, found, options, what, where in (
            (row.query_id, query_id, query_options, "query", "the queries file"),
            (row.doc_id, doc_id, doc_options, "document", "the corpus"),
        ):
            if found is None and options:
                problems.add(
                    f"qrels {what} id that is ambiguous once leading zeros are ignored",
                    BeirError(
                        f"{what} id {given!r} matches {', '.join(map(repr, options))} once "
                        "leading zeros are ignored",
                        path=path,
                        line=row.line,
                    ),
                )
            elif found is None:
                problems.add(
                    f"qrels row naming a {what} not in {where}",
                    BeirError(f"{what} id {given!r} is not in {where}", path=path, line=row.line),
                )
            elif found != given:
                check.padded.append((given, found))
        if query_id is None or doc_id is None:
            continue
        check.judged_queries.add(query_id)
        if doc_id in corpus.empty:
            check.dropped_empty_rows += 1
            continue
        if row.score > 0:
            check.positives.append(QrelsRow(query_id, doc_id, row.score, row.line))
    return check


def documents_again(
    path: Path, corpus: CorpusScan, doc_map: dict[str, str], suffix: str
) -> Iterator[tuple[str, str]]:
    """Pass 2: stream ``(file name, text)``, checking the file is the one pass 1 read.

    The texts pass 1 kept are given as they are, then the file is hashed again; otherwise it is
    read and parsed again, line by line. Either way a file that changed in between is refused
    once the last document is given (before anything is renamed into place).
    """
    if corpus.texts is not None:
        for doc_id, text in corpus.texts.items():
            yield doc_map.get(doc_id, doc_id) + suffix, text
        if file_digest(path) != corpus.digest:
            raise BeirError("the corpus file changed while it was being adapted", path=path)
        return
    digest = hashlib.sha256()
    count = 0
    for line, data in iter_json_objects(path, digest.update):
        record = parse_document(data, path, line)
        if not record.text and corpus.empty.get(record.doc_id) == line:
            continue  # skipped empty document
        if corpus.lines.get(record.doc_id) != line:
            raise BeirError(
                "the corpus file changed while it was being adapted",
                path=path,
                line=line,
                item_id=record.doc_id,
            )
        count += 1
        yield doc_map.get(record.doc_id, record.doc_id) + suffix, record.text
    if count != len(corpus.lines) or digest.hexdigest() != corpus.digest:
        raise BeirError("the corpus file changed while it was being adapted", path=path)
