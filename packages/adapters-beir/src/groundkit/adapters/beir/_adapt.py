"""Adapting a BEIR dataset: check everything, report every problem at once, then write once.

Pass 1 reads ``qrels/<split>.tsv`` (small), streams ``queries.jsonl`` and ``corpus.jsonl``
(plain or ``.gz``) checking every record, and keeps only what the judgments need (see
``_scan``). Every problem of the dataset is collected and reported together, grouped by kind.
Then the ids are checked against groundkit's contracts (or mapped), the judgments are built,
and the output folder and every target path are checked. Only then pass 2 streams the corpus
again into a temporary folder; it checks that each record has the id seen on the same line in
pass 1 and, at the end, that the digest is unchanged. The temporary folder is flushed to disk
once and renamed into place once (``_output``): a failure or a signal leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable
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
from groundkit.adapters.beir._jsonl import find_jsonl
from groundkit.adapters.beir._notes import adaptation_notes
from groundkit.adapters.beir._output import (
    MANIFEST_KIND,
    OutputLayout,
    check_output,
    check_targets,
    write_adaptation,
)
from groundkit.adapters.beir._problems import ProblemLog
from groundkit.adapters.beir._qrels import (
    QrelsFile,
    QrelsRow,
    find_qrels,
    read_qrels,
    validate_split,
)
from groundkit.adapters.beir._report import BeirAdaptationReport
from groundkit.adapters.beir._scan import (
    CorpusScan,
    QrelsCheck,
    QueryScan,
    check_qrels,
    documents_again,
    scan_corpus,
    scan_queries,
)
from groundkit.judgments import GoldQuote, Judgment, JudgmentError, load_judgments
from groundkit.judgments.gold import format_validation_error, judgments_text
from groundkit.judgments.trec import IdMap

__all__ = ["adapt_beir_dataset"]


def _resolve_ids(
    mode: IdMapping,
    corpus: CorpusScan,
    judged_queries: list[str],
    queries: QueryScan,
    corpus_path: Path,
    queries_path: Path,
    problems: ProblemLog,
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
        problems.add(
            "id groundkit cannot use as it is",
            strict_id_error(bad_docs, bad_queries, corpus_path, queries_path),
        )
    return {}, {}


def _build_judgments(
    positives: list[QrelsRow],
    queries: QueryScan,
    corpus: CorpusScan,
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


def _find_inputs(
    source: Path, split: str, problems: ProblemLog
) -> tuple[Path | None, Path | None, Path | None]:
    found: list[Path | None] = []
    finders: tuple[Callable[[], Path], ...] = (
        lambda: find_jsonl(source, "corpus"),
        lambda: find_jsonl(source, "queries"),
        lambda: find_qrels(source, split),
    )
    for find in finders:
        try:
            found.append(find())
        except BeirError as error:
            problems.add("missing or unreadable file", error)
            found.append(None)
    return found[0], found[1], found[2]


def _scan(
    source: Path, split: str, skip_empty: bool
) -> tuple[ProblemLog, Path, Path, Path, QrelsFile, QueryScan, CorpusScan, QrelsCheck]:
    """Pass 1 over the three files; every problem is in the returned log."""
    problems = ProblemLog(source)
    corpus_path, queries_path, qrels_path = _find_inputs(source, split, problems)
    qrels = QrelsFile() if qrels_path is None else read_qrels(qrels_path, problems)
    needed_docs = {row.doc_id for row in qrels.rows if row.score > 0}
    needed_queries = {row.query_id for row in qrels.rows if row.score > 0}
    queries = (
        QueryScan()
        if queries_path is None
        else scan_queries(queries_path, needed_queries, problems)
    )
    corpus = (
        CorpusScan()
        if corpus_path is None
        else scan_corpus(corpus_path, needed_docs, problems, skip_empty=skip_empty)
    )
    if corpus_path is None or queries_path is None or qrels_path is None:
        problems.raise_if_any()  # cross-checks against a missing file would only add noise
    assert corpus_path is not None
    assert queries_path is not None
    assert qrels_path is not None
    check = check_qrels(qrels.rows, qrels_path, queries, corpus, problems)
    if not check.positives and problems.total == 0:
        problems.add(
            "split without positive rows",
            BeirError(
                "the split has no positive rows (score > 0), so there is nothing to judge",
                path=qrels_path,
            ),
        )
    return problems, corpus_path, queries_path, qrels_path, qrels, queries, corpus, check


def adapt_beir_dataset(
    source_dir: Path,
    output_dir: Path,
    *,
    split: str = "test",
    id_mapping: IdMapping = "strict",
    progress: Callable[[int, int], None] | None = None,
    skip_empty_documents: bool = False,
    force: bool = False,
) -> BeirAdaptationReport:
    r"""Turn a BEIR dataset into a groundkit corpus folder and quote-anchored judgments.

    Reads BEIR's layout in ``source_dir`` — ``corpus.jsonl`` (``_id``, optional ``title``,
    ``text``), ``queries.jsonl`` (``_id``, ``text``), ``qrels/<split>.tsv`` (``query-id``,
    ``corpus-id``, ``score``; header optional; TREC's 4-column layout accepted); the JSONL
    files may be ``.jsonl.gz`` — and writes ``output_dir/corpus/<doc id>.txt`` (title,
    ``"\n\n"``, body), ``judgments.jsonl`` (one judgment per query with a positive row; each
    gold quote a whole document with the qrels score as grade), ``id_map.json`` (core's
    :class:`~groundkit.judgments.trec.IdMap`: the ``.txt`` suffix and the renamed ids, which lets
    the harness read TREC runs written on BEIR's own ids) and the manifest
    ``.groundkit-beir.json``.

    Everything is checked before anything is written, and every problem of the dataset is
    reported in one error (grouped by kind, with counts and the first places). The output is
    written all at once: a refused dataset, a failure or a signal leaves the output folder
    exactly as it was. The written judgments are read back with ``load_judgments``.

    Args:
        source_dir: The BEIR dataset folder (an untrusted download).
        output_dir: Where to write; created if missing. An existing ``corpus/``,
            ``judgments.jsonl`` or ``id_map.json`` is replaced only when it comes from an
            earlier adaptation (the folder's manifest says so) or with ``force``.
        split: The qrels split: letters, digits, ``.``, ``_``, ``-``.
        id_mapping: ``"strict"`` refuses ids groundkit cannot use as they are; ``"slug"``
            maps them to safe kebab-case names (recorded in ``id_map.json``).
        progress: Called with ``(documents written, total)`` while the corpus is written.
        skip_empty_documents: Leave out documents with neither title nor text, and the qrels
            rows that name them (counted in the notes), instead of refusing the dataset.
        force: Replace an existing ``corpus/``, ``judgments.jsonl`` or ``id_map.json`` that
            is not from an earlier adaptation.

    Returns:
        What was written, with counts, mapped ids, what was left out and the comparability
        note.

    Raises:
        BeirError: Any problem with the arguments, the dataset or the output folder; one line
            naming the file, line and id concerned (several problems: grouped by kind).
    """
    source = Path(source_dir)
    layout = OutputLayout.of(Path(output_dir))
    split = validate_split(split)
    if id_mapping not in ("strict", "slug"):
        raise BeirError(f"id_mapping must be 'strict' or 'slug', not {id_mapping!r}")
    if not source.is_dir():
        raise BeirError("BEIR dataset folder not found", path=source)
    check_output(layout, force=force, source=source)  # fail fast; again below, before writing

    problems, corpus_path, queries_path, qrels_path, qrels, queries, corpus, check = _scan(
        source, split, skip_empty_documents
    )
    judged = sorted({row.query_id for row in check.positives})
    doc_map, query_map = _resolve_ids(
        id_mapping, corpus, judged, queries, corpus_path, queries_path, problems
    )
    problems.raise_if_any()
    judgments = _build_judgments(check.positives, queries, corpus, doc_map, query_map, qrels_path)
    check_output(layout, force=force, source=source)
    check_targets(
        layout, (doc_map.get(doc_id, doc_id) + DOCUMENT_SUFFIX for doc_id in corpus.lines)
    )
    notes = adaptation_notes(split, qrels, queries, corpus, check, len(judgments))

    def verify(path: Path) -> None:
        try:
            reread = load_judgments(path)
        except JudgmentError as error:
            raise BeirError(f"written judgments do not load back: {error}") from None
        if reread != judgments:
            raise BeirError("written judgments differ when read back", path=layout.judgments_path)

    write_adaptation(
        layout,
        documents=documents_again(corpus_path, corpus, doc_map, DOCUMENT_SUFFIX),
        total=len(corpus.lines),
        judgments_text=judgments_text(judgments),
        id_map=IdMap(document_suffix=DOCUMENT_SUFFIX, documents=doc_map, queries=query_map)
        .to_json()
        .encode(),
        manifest={
            "kind": MANIFEST_KIND,
            "version": 1,
            "split": split,
            "documents": len(corpus.lines),
            "queries": len(judgments),
            "id_mapping": id_mapping,
        },
        progress=progress,
        verify=verify,
    )
    return BeirAdaptationReport(
        source_dir=source.absolute(),
        output_dir=layout.root.absolute(),
        split=split,
        document_count=len(corpus.lines),
        query_count=len(judgments),
        relevance_pair_count=len(check.positives),
        total_characters=corpus.total_characters,
        corpus_dir=layout.corpus_dir.absolute(),
        judgments_path=layout.judgments_path.absolute(),
        id_mapping=id_mapping,
        mapped_document_ids=doc_map,
        mapped_query_ids=query_map,
        id_map_path=layout.id_map_path.absolute(),
        unjudged_query_count=len(queries.lines) - len(check.judged_queries),
        no_positive_query_count=len(check.judged_queries) - len(judgments),
        skipped_documents=tuple(sorted(corpus.empty)) if skip_empty_documents else (),
        skipped_qrels_rows=check.dropped_empty_rows,
        qrels_columns=qrels.columns,
        zero_padded_ids=tuple(dict.fromkeys(check.padded)),
        notes=notes,
    )
