"""Adapting a BEIR dataset: validate everything, then write (two streaming passes).

Pass 1 reads ``qrels/<split>.tsv`` (small), streams ``queries.jsonl`` and ``corpus.jsonl``
(plain or ``.gz``) validating every record, and keeps only what the judgments need: each
document id with its line number, and the adapted text of the documents that some positive
qrels row names (the gold quotes). A SHA-256 digest of the corpus bytes is taken on the way.
Then the qrels are checked against the ids, the ids against groundkit's contracts (or mapped),
the judgments are built, and the output folder and every target path are checked. Only then
pass 2 streams the corpus again and writes one file per document; it checks that each record
has the id seen on the same line in pass 1 and, at the end, that the digest is unchanged.
Any failure while writing removes what was written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from groundkit.adapters.beir._errors import BeirError
from groundkit.adapters.beir._ids import (
    DOCUMENT_SUFFIX,
    IdMapping,
    case_collision_problems,
    document_id_problem,
    map_ids,
    query_id_problem,
    strict_id_error,
)
from groundkit.adapters.beir._jsonl import find_jsonl, iter_json_objects
from groundkit.adapters.beir._output import (
    OutputLayout,
    OutputWriter,
    check_output,
    check_targets,
)
from groundkit.adapters.beir._qrels import QrelsRow, find_qrels, read_qrels, validate_split
from groundkit.adapters.beir._records import parse_document, parse_query
from groundkit.adapters.beir._report import COMPARABILITY_NOTE, BeirAdaptationReport
from groundkit.judgments import (
    GoldQuote,
    IdMap,
    Judgment,
    JudgmentError,
    dump_judgments,
    format_validation_error,
    load_judgments,
)

__all__ = ["adapt_beir_dataset"]


@dataclass(slots=True)
class _CorpusScan:
    """What pass 1 keeps of the corpus."""

    lines: dict[str, int] = field(default_factory=dict)  # id -> line, in file order
    gold_texts: dict[str, str] = field(default_factory=dict)  # only documents with positives
    total_characters: int = 0
    digest: str = ""


@dataclass(slots=True)
class _QueryScan:
    lines: dict[str, int] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # only judged queries


def _scan_queries(path: Path, needed: set[str]) -> _QueryScan:
    scan = _QueryScan()
    for line, data in iter_json_objects(path):
        record = parse_query(data, path, line)
        previous = scan.lines.setdefault(record.query_id, line)
        if previous != line:
            raise BeirError(
                f"duplicate query id (first on line {previous})",
                path=path,
                line=line,
                item_id=record.query_id,
            )
        if record.query_id in needed:
            scan.texts[record.query_id] = record.text
    if not scan.lines:
        raise BeirError("no queries in file", path=path)
    return scan


def _scan_corpus(path: Path, needed: set[str]) -> _CorpusScan:
    scan = _CorpusScan()
    digest = hashlib.sha256()
    for line, data in iter_json_objects(path, digest.update):
        record = parse_document(data, path, line)
        previous = scan.lines.setdefault(record.doc_id, line)
        if previous != line:
            raise BeirError(
                f"duplicate document id (first on line {previous})",
                path=path,
                line=line,
                item_id=record.doc_id,
            )
        scan.total_characters += len(record.text)
        if record.doc_id in needed:
            scan.gold_texts[record.doc_id] = record.text
    if not scan.lines:
        raise BeirError("no documents in file", path=path)
    scan.digest = digest.hexdigest()
    return scan


def _check_qrels_ids(
    rows: list[QrelsRow], path: Path, queries: _QueryScan, corpus: _CorpusScan
) -> list[QrelsRow]:
    for row in rows:
        if row.query_id not in queries.lines:
            raise BeirError(
                f"query id {row.query_id!r} is not in the queries file", path=path, line=row.line
            )
        if row.doc_id not in corpus.lines:
            raise BeirError(
                f"document id {row.doc_id!r} is not in the corpus", path=path, line=row.line
            )
    positives = [row for row in rows if row.score > 0]
    if not positives:
        raise BeirError(
            "the split has no positive rows (score > 0), so there is nothing to judge", path=path
        )
    return positives


def _resolve_ids(
    mode: IdMapping,
    corpus: _CorpusScan,
    judged_queries: list[str],
    queries: _QueryScan,
    corpus_path: Path,
    queries_path: Path,
) -> tuple[dict[str, str], dict[str, str]]:
    """Return the (document, query) id mappings; in strict mode refuse unusable ids."""
    if mode == "slug":
        return map_ids(corpus.lines, "document"), map_ids(judged_queries, "query")
    doc_problems: dict[str, str] = {}
    for doc_id in corpus.lines:
        problem = document_id_problem(doc_id)
        if problem is not None:
            doc_problems[doc_id] = problem
    valid_docs = (doc_id for doc_id in corpus.lines if doc_id not in doc_problems)
    doc_problems.update(case_collision_problems(valid_docs))
    bad_docs = [
        (doc_id, line, doc_problems[doc_id])
        for doc_id, line in corpus.lines.items()
        if doc_id in doc_problems
    ]
    bad_queries: list[tuple[str, int, str]] = []
    for query_id in sorted(judged_queries, key=queries.lines.__getitem__):
        problem = query_id_problem(query_id)
        if problem is not None:
            bad_queries.append((query_id, queries.lines[query_id], problem))
    if bad_docs or bad_queries:
        raise strict_id_error(bad_docs, bad_queries, corpus_path, queries_path)
    return {}, {}


def _build_judgments(
    positives: list[QrelsRow],
    queries: _QueryScan,
    corpus: _CorpusScan,
    doc_map: dict[str, str],
    query_map: dict[str, str],
    qrels_path: Path,
) -> list[Judgment]:
    gold: dict[str, list[QrelsRow]] = {}
    for row in positives:
        gold.setdefault(row.query_id, []).append(row)
    judgments: list[Judgment] = []
    for query_id, rows in gold.items():
        quotes = sorted(
            (
                GoldQuote(
                    doc=doc_map.get(row.doc_id, row.doc_id) + DOCUMENT_SUFFIX,
                    quote=corpus.gold_texts[row.doc_id],
                    grade=row.score,
                )
                for row in rows
            ),
            key=lambda quote: quote.doc,
        )
        try:
            judgments.append(
                Judgment(
                    query_id=query_map.get(query_id, query_id),
                    query=queries.texts[query_id],
                    gold=tuple(quotes),
                )
            )
        except ValidationError as error:
            raise BeirError(
                format_validation_error(error),
                path=qrels_path,
                line=rows[0].line,
                item_id=query_id,
            ) from None
    judgments.sort(key=lambda judgment: judgment.query_id)
    return judgments


def _documents_again(
    path: Path, corpus: _CorpusScan, doc_map: dict[str, str]
) -> Iterator[tuple[str, str]]:
    """Pass 2: stream ``(file name, text)``, checking the file is the one pass 1 read."""
    digest = hashlib.sha256()
    count = 0
    for line, data in iter_json_objects(path, digest.update):
        record = parse_document(data, path, line)
        if corpus.lines.get(record.doc_id) != line:
            raise BeirError(
                "the corpus file changed while it was being adapted",
                path=path,
                line=line,
                item_id=record.doc_id,
            )
        count += 1
        yield doc_map.get(record.doc_id, record.doc_id) + DOCUMENT_SUFFIX, record.text
    if count != len(corpus.lines) or digest.hexdigest() != corpus.digest:
        raise BeirError("the corpus file changed while it was being adapted", path=path)


def adapt_beir_dataset(
    source_dir: Path,
    output_dir: Path,
    *,
    split: str = "test",
    id_mapping: IdMapping = "strict",
    progress: Callable[[int, int], None] | None = None,
) -> BeirAdaptationReport:
    r"""Turn a BEIR dataset into a groundkit corpus folder and quote-anchored judgments.

    Reads BEIR's layout in ``source_dir`` — ``corpus.jsonl`` (``_id``, optional ``title``,
    ``text``), ``queries.jsonl`` (``_id``, ``text``), ``qrels/<split>.tsv`` (``query-id``,
    ``corpus-id``, ``score``; header optional); the JSONL files may be ``.jsonl.gz`` — and
    writes ``output_dir/corpus/<doc id>.txt`` (title, ``"\n\n"``, body), ``judgments.jsonl``
    (one judgment per query with a positive row; each gold quote a whole document with the
    qrels score as grade) and ``id_map.json`` (core's :class:`~groundkit.judgments.IdMap`:
    the ``.txt`` suffix and the renamed ids), which lets the harness read TREC runs written
    on BEIR's own ids.

    Everything is validated before anything is written; a refused dataset leaves the output
    folder exactly as it was. The written judgments are read back with ``load_judgments``.

    Args:
        source_dir: The BEIR dataset folder (an untrusted download).
        output_dir: Where to write; created if missing; its ``corpus/`` must be absent or empty.
        split: The qrels split: letters, digits, ``.``, ``_``, ``-``.
        id_mapping: ``"strict"`` refuses ids groundkit cannot use as they are; ``"slug"``
            maps them to safe kebab-case names (recorded in ``id_map.json``).
        progress: Called with ``(documents written, total)`` while the corpus is written.

    Returns:
        What was written, with counts, mapped ids and the comparability note.

    Raises:
        BeirError: Any problem with the arguments, the dataset or the output folder; one line
            naming the file, line and id concerned.
    """
    source = Path(source_dir)
    layout = OutputLayout.of(Path(output_dir))
    split = validate_split(split)
    if id_mapping not in ("strict", "slug"):
        raise BeirError(f"id_mapping must be 'strict' or 'slug', not {id_mapping!r}")
    if not source.is_dir():
        raise BeirError("BEIR dataset folder not found", path=source)
    check_output(layout)  # fail fast; checked again below, just before writing

    corpus_path = find_jsonl(source, "corpus")
    queries_path = find_jsonl(source, "queries")
    qrels_path = find_qrels(source, split)
    rows = read_qrels(qrels_path)
    needed_docs = {row.doc_id for row in rows if row.score > 0}
    needed_queries = {row.query_id for row in rows if row.score > 0}
    queries = _scan_queries(queries_path, needed_queries)
    corpus = _scan_corpus(corpus_path, needed_docs)
    positives = _check_qrels_ids(rows, qrels_path, queries, corpus)
    judged = sorted(needed_queries)
    doc_map, query_map = _resolve_ids(
        id_mapping, corpus, judged, queries, corpus_path, queries_path
    )
    judgments = _build_judgments(positives, queries, corpus, doc_map, query_map, qrels_path)
    id_map = IdMap(document_suffix=DOCUMENT_SUFFIX, documents=doc_map, queries=query_map)
    check_output(layout)
    check_targets(
        layout, (doc_map.get(doc_id, doc_id) + DOCUMENT_SUFFIX for doc_id in corpus.lines)
    )

    writer = OutputWriter(layout)
    try:
        writer.prepare()
        writer.write_corpus(
            _documents_again(corpus_path, corpus, doc_map), len(corpus.lines), progress
        )
        writer.write_file(layout.id_map_path, id_map.to_json().encode())
        judgments_existed = layout.judgments_path.exists()
        try:
            dump_judgments(judgments, layout.judgments_path)
        except OSError as error:
            raise BeirError(
                f"cannot write file: {error.strerror or error}", path=layout.judgments_path
            ) from None
        if not judgments_existed:
            writer.remember(layout.judgments_path)
        try:
            reread = load_judgments(layout.judgments_path)
        except JudgmentError as error:
            raise BeirError(f"written judgments do not load back: {error}") from None
        if reread != judgments:
            raise BeirError("written judgments differ when read back", path=layout.judgments_path)
    except BaseException:
        writer.rollback()
        raise

    return BeirAdaptationReport(
        source_dir=source.absolute(),
        output_dir=layout.root.absolute(),
        split=split,
        document_count=len(corpus.lines),
        query_count=len(judgments),
        relevance_pair_count=len(positives),
        total_characters=corpus.total_characters,
        corpus_dir=layout.corpus_dir.absolute(),
        judgments_path=layout.judgments_path.absolute(),
        id_mapping=id_mapping,
        mapped_document_ids=doc_map,
        mapped_query_ids=query_map,
        id_map_path=layout.id_map_path.absolute(),
        notes=(COMPARABILITY_NOTE,),
    )
