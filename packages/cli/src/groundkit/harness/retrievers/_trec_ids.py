"""The ids of a TREC run read by a predictions stage: groundkit's own, or an original dataset's.

A run written by Pyserini, ranx or BEIR's scripts on the original dataset names documents by
their original ids (``4983``), while an adapted corpus names them ``4983.txt`` (and may have
renamed some ids, see :class:`~groundkit.judgments.trec.IdMap`). The rule, decided once per file:

1. When every query id of the run is in the judgments and every document id in the corpus,
   the ids are read as they are.
2. Otherwise they are read through the id map — the stage's ``id_map``, else the
   ``id_map.json`` beside the corpus folder (where ``grk beir adapt`` writes it) — and then
   every id must be known.

Only the documents within the run's depth are looked at. Rankings are derived before ids are
translated (score descending, ties by the *original* id descending, as trec_eval ranks the file).
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from pathlib import Path

from groundkit.harness._errors import HarnessError
from groundkit.judgments.trec import IdMap, id_map_beside, read_id_map

__all__ = ["Ranking", "resolve_run_ids"]

#: ``[(doc_id, score), ...]`` best first.
Ranking = list[tuple[str, float]]


def _reading(
    rankings: Mapping[str, Ranking],
    known_queries: Mapping[str, bool],
    corpus: Container[str],
    id_map: IdMap | None,
) -> tuple[tuple[str, str | None] | None, int]:
    """The first ``(query, document or None)`` unknown under a reading, and the known documents.

    Documents of unanswerable queries are not looked at: those queries are not ranked.
    """
    first: tuple[str, str | None] | None = None
    known = 0
    for query, ranking in rankings.items():
        answerable = known_queries.get(query if id_map is None else id_map.query_id(query))
        if answerable is None and first is None:
            first = (query, None)
        if answerable is False:
            continue
        for doc, _ in ranking:
            if (doc if id_map is None else id_map.document_id(doc)) in corpus:
                known += 1
            elif first is None:
                first = (query, doc)
    return first, known


def _unknown_error(
    stage: str, unknown: tuple[str, str | None], path: Path, mapped: tuple[IdMap, Path] | None
) -> HarnessError:
    query, doc = unknown
    if mapped is None:
        hint = "; no id map given or found beside the corpus folder"
        if doc is None:
            return HarnessError(
                f"stage {stage!r}: unknown query id {query!r} (not in the judgments{hint})",
                path=path,
            )
        return HarnessError(
            f"stage {stage!r}: query {query!r}: unknown document {doc!r} (not in the corpus{hint})",
            path=path,
        )
    id_map, id_map_path = mapped
    if doc is None:
        return HarnessError(
            f"stage {stage!r}: unknown query id {query!r} (not in the judgments, nor "
            f"{id_map.query_id(query)!r} through the id map {id_map_path})",
            path=path,
        )
    return HarnessError(
        f"stage {stage!r}: query {query!r}: unknown document {doc!r} (not in the corpus, nor "
        f"{id_map.document_id(doc)!r} through the id map {id_map_path})",
        path=path,
    )


def _translate(
    rankings: Mapping[str, Ranking], id_map: IdMap, stage: str, path: Path
) -> dict[str, Ranking]:
    out: dict[str, Ranking] = {}
    originals: dict[str, str] = {}
    for query, ranking in rankings.items():
        new_query = id_map.query_id(query)
        earlier = originals.setdefault(new_query, query)
        if earlier != query:
            raise HarnessError(
                f"stage {stage!r}: query ids {earlier!r} and {query!r} are both "
                f"{new_query!r} through the id map",
                path=path,
            )
        translated = [(id_map.document_id(doc), score) for doc, score in ranking]
        docs = [doc for doc, _ in translated]
        if len(set(docs)) != len(docs):
            raise HarnessError(
                f"stage {stage!r}: query {query!r}: two documents are the same document "
                "through the id map",
                path=path,
            )
        out[new_query] = translated
    return out


def resolve_run_ids(
    rankings: Mapping[str, Ranking],
    *,
    stage: str,
    path: Path,
    known_queries: Mapping[str, bool],
    corpus: Container[str],
    id_map: Path | None = None,
    corpus_source: str | Path | None = None,
) -> dict[str, Ranking]:
    """The rankings of a run file with groundkit's ids (see the module documentation).

    Args:
        rankings: ``{query_id: ranking}`` as read from the file (cut to the run's depth).
        stage: The stage name, for messages.
        path: The run file, for messages.
        known_queries: Every query id of the judgments, to whether it is answerable.
        corpus: Every document id of the corpus.
        id_map: The stage's id map file, if it names one.
        corpus_source: The corpus folder, beside which an ``id_map.json`` is looked for.

    Returns:
        The rankings keyed and listed by groundkit ids.

    Raises:
        HarnessError: An id unknown under both readings (one line naming the stage, query and
            document), or two ids that become one.
        JudgmentError: An unreadable id map (naming the file).
    """
    unknown, known = _reading(rankings, known_queries, corpus, None)
    if unknown is None:
        return dict(rankings)
    map_path = id_map if id_map is not None else id_map_beside(corpus_source)
    if map_path is None:
        raise _unknown_error(stage, unknown, path, None)
    loaded = read_id_map(map_path)
    mapped_unknown, mapped_known = _reading(rankings, known_queries, corpus, loaded)
    if mapped_unknown is None:
        return _translate(rankings, loaded, stage, path)
    # Both readings fail: name the first problem of the one that knows more documents.
    worst = mapped_unknown if mapped_known > known else unknown
    raise _unknown_error(stage, worst, path, (loaded, map_path))
