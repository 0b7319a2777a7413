"""Hits from outside the harness: the predictions format, and turning any hit into a span.

Predictions format (JSON Lines, UTF-8, one object per query)::

    {"query_id": "q-1", "hits": [HIT, HIT, ...]}

``hits`` are in rank order, best first (scores are recorded, never used to re-order); only the
first ``depth`` are kept. A HIT is one of:

* ``{"doc": "handbook/leave.md", "start": 120, "end": 860, "score": 12.5}``: a character span
  of a corpus document (end exclusive, ``0 <= start < end <= len(text)``);
* ``{"doc": "handbook/leave.md", "text": "...", "score": 0.83}``: a passage of that document,
  located with :func:`groundkit.judgments.locate_text` (exact, then whitespace- and
  typography-tolerant matching);
* ``{"text": "...", "score": 0.83}``: a passage of any document (the first match in id order).

``score`` is optional (``1 / rank`` is recorded when absent) and must be a finite number. An
optional ``"query"`` key on the line is ignored. A query id that the judgments do not have is an
error; an unanswerable query's line is ignored; a query without a line (or with ``"hits": []``)
scores zero and stays in the mean.

Python callables may return, per query, a list of any of: such dicts; ``Hit``/``Chunk``/``Span``
objects (``doc``, ``start``, ``end``, optional ``score``); tuples ``(doc, start, end)`` or
``(doc, start, end, score)``; plain strings (text hits); LangChain-like documents (objects with
``page_content`` and ``metadata``: ``metadata["source"]`` names the document, as its id or a
path ending with it, ``metadata["start_index"]`` gives the start when known, and
``metadata["score"]`` or ``metadata["relevance_score"]`` the score); or ``(document, score)``
pairs as returned by ``similarity_search_with_score``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.harness._errors import HarnessError
from groundkit.judgments import iter_jsonl_objects, locate_text

__all__ = ["HitNormalizer", "PerQueryHits", "read_predictions_jsonl"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
PerQueryHits = tuple[IntArray, IntArray, IntArray, FloatArray, IntArray]

_SPAN_KEYS = frozenset({"doc", "start", "end", "score"})
_TEXT_KEYS = frozenset({"doc", "text", "score"})
_LINE_KEYS = frozenset({"query_id", "hits", "query"})


class HitNormalizer:
    """Validates hits of one stage and turns them into spans of the corpus.

    Args:
        corpus: Document id to text.
        doc_codes: Document id to its code (position in the corpus's id order).
        stage: Stage name, for messages.
        depth: Hits kept per query.
        path: File the hits come from, for messages.
    """

    def __init__(
        self,
        corpus: Mapping[str, str],
        doc_codes: Mapping[str, int],
        stage: str,
        depth: int,
        *,
        path: str | Path | None = None,
    ) -> None:
        self.corpus = corpus
        self.doc_codes = doc_codes
        self.stage = stage
        self.depth = depth
        self.path = path

    def _error(self, message: str, query_id: str, rank: int | None, line: int | None) -> None:
        where = f"stage {self.stage!r}: query {query_id!r}: "
        if rank is not None:
            where += f"hit {rank}: "
        raise HarnessError(where + message, path=self.path, line=line)

    def _document(self, source: Any, query_id: str, rank: int, line: int | None) -> str:
        if not isinstance(source, str) or not source:
            self._error(
                f"document id must be a non-empty string, got {source!r}", query_id, rank, line
            )
        if source in self.doc_codes:
            return str(source)
        # LangChain loaders put a file path in metadata["source"]; match its tail to an id.
        parts = [p for p in source.replace("\\", "/").split("/") if p not in ("", ".")]
        for size in range(len(parts), 0, -1):
            candidate = "/".join(parts[-size:])
            if candidate in self.doc_codes:
                return candidate
        self._error(f"unknown document {source!r}", query_id, rank, line)
        raise AssertionError  # pragma: no cover - _error always raises

    def _score(self, value: Any, rank: int, query_id: str, line: int | None) -> float:
        if value is None:
            return 1.0 / rank
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            self._error(f"score must be a number, got {value!r}", query_id, rank, line)
        score = float(value)
        if not math.isfinite(score):
            self._error(f"score must be finite, got {value!r}", query_id, rank, line)
        return score

    def _span(
        self, doc: str, start: Any, end: Any, query_id: str, rank: int, line: int | None
    ) -> tuple[int, int]:
        for name, value in (("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                self._error(f"{name} must be an integer, got {value!r}", query_id, rank, line)
        length = len(self.corpus[doc])
        begin, stop = int(start), int(end)
        if not 0 <= begin < stop <= length:
            self._error(
                f"span [{begin}, {stop}) is out of bounds for {doc!r} (length {length}; "
                "0 <= start < end <= length)",
                query_id,
                rank,
                line,
            )
        return begin, stop

    def _locate(
        self, doc: str | None, text: Any, query_id: str, rank: int, line: int | None
    ) -> tuple[str, int, int]:
        if not isinstance(text, str) or not text.strip():
            self._error("hit text must be a non-empty string", query_id, rank, line)
        span = locate_text(self.corpus, doc, text)
        if span is None:
            where = f"document {doc!r}" if doc is not None else "the corpus"
            self._error(f"hit text not found in {where}: {text[:60]!r}", query_id, rank, line)
            raise AssertionError  # pragma: no cover
        return span.doc, span.start, span.end

    def _from_langchain(
        self, item: Any, score: Any, query_id: str, rank: int, line: int | None
    ) -> tuple[str, int, int, float]:
        text = item.page_content
        metadata = getattr(item, "metadata", None) or {}
        if not isinstance(metadata, Mapping):
            self._error("document metadata must be a mapping", query_id, rank, line)
        source = metadata.get("source")
        doc = None if source is None else self._document(source, query_id, rank, line)
        if score is None:
            score = metadata.get("score", metadata.get("relevance_score"))
        start = metadata.get("start_index")
        if (
            doc is not None
            and isinstance(text, str)
            and isinstance(start, int)
            and not isinstance(start, bool)
            and self.corpus[doc][start : start + len(text)] == text
            and text
        ):
            return doc, start, start + len(text), self._score(score, rank, query_id, line)
        doc, begin, stop = self._locate(doc, text, query_id, rank, line)
        return doc, begin, stop, self._score(score, rank, query_id, line)

    def _from_dict(
        self, item: Mapping[str, Any], query_id: str, rank: int, line: int | None
    ) -> tuple[str, int, int, float]:
        keys = set(item)
        if "start" in keys or "end" in keys:
            unknown = sorted(keys - _SPAN_KEYS)
            missing = sorted({"doc", "start", "end"} - keys)
        else:
            unknown = sorted(keys - _TEXT_KEYS)
            missing = [] if "text" in keys else ["text"]
        if unknown:
            self._error(
                f"unknown key {unknown[0]!r} (a hit is {{doc, start, end, score}}, "
                "{doc, text, score} or {text, score})",
                query_id,
                rank,
                line,
            )
        if missing:
            self._error(f"missing key {missing[0]!r}", query_id, rank, line)
        score = self._score(item.get("score"), rank, query_id, line)
        if "text" in item:
            raw_doc = item.get("doc")
            doc = None if raw_doc is None else self._document(raw_doc, query_id, rank, line)
            found_doc, begin, stop = self._locate(doc, item["text"], query_id, rank, line)
            return found_doc, begin, stop, score
        doc = self._document(item["doc"], query_id, rank, line)
        begin, stop = self._span(doc, item["start"], item["end"], query_id, rank, line)
        return doc, begin, stop, score

    def _one(
        self, item: Any, query_id: str, rank: int, line: int | None
    ) -> tuple[str, int, int, float]:
        if isinstance(item, Mapping):
            return self._from_dict(item, query_id, rank, line)
        if isinstance(item, str):
            doc, begin, stop = self._locate(None, item, query_id, rank, line)
            return doc, begin, stop, 1.0 / rank
        if hasattr(item, "page_content"):
            return self._from_langchain(item, None, query_id, rank, line)
        if isinstance(item, tuple | list):
            if len(item) == 2 and hasattr(item[0], "page_content"):
                return self._from_langchain(item[0], item[1], query_id, rank, line)
            if len(item) in (3, 4):
                doc = self._document(item[0], query_id, rank, line)
                begin, stop = self._span(doc, item[1], item[2], query_id, rank, line)
                score = self._score(item[3] if len(item) == 4 else None, rank, query_id, line)
                return doc, begin, stop, score
        elif all(hasattr(item, name) for name in ("doc", "start", "end")):
            doc = self._document(item.doc, query_id, rank, line)
            begin, stop = self._span(doc, item.start, item.end, query_id, rank, line)
            return doc, begin, stop, self._score(getattr(item, "score", None), rank, query_id, line)
        self._error(
            f"cannot read a hit from {type(item).__name__} (expected a dict, a span object, "
            "a (doc, start, end[, score]) tuple, a text or a document with page_content)",
            query_id,
            rank,
            line,
        )
        raise AssertionError  # pragma: no cover

    def normalize(self, query_id: str, hits: Any, *, line: int | None = None) -> PerQueryHits:
        """Validate one query's hits (rank order) and return its columns.

        Returns:
            ``(doc codes, starts, ends, scores, chunk ids)``; chunk ids are all ``-1``.

        Raises:
            HarnessError: The first invalid hit, naming stage, query, rank and line.
        """
        if isinstance(hits, str | bytes | Mapping) or not isinstance(hits, Sequence):
            self._error(f"hits must be a list, got {type(hits).__name__}", query_id, None, line)
        kept = list(hits[: self.depth])
        docs = np.empty(len(kept), dtype=np.int64)
        starts = np.empty(len(kept), dtype=np.int64)
        ends = np.empty(len(kept), dtype=np.int64)
        scores = np.empty(len(kept), dtype=np.float64)
        for index, item in enumerate(kept):
            doc, begin, stop, score = self._one(item, query_id, index + 1, line)
            docs[index] = self.doc_codes[doc]
            starts[index] = begin
            ends[index] = stop
            scores[index] = score
        return docs, starts, ends, scores, np.full(len(kept), -1, dtype=np.int64)


def read_predictions_jsonl(
    path: str | Path,
    *,
    stage: str,
    known_queries: Mapping[str, bool],
    label: str | Path | None = None,
) -> dict[str, tuple[int, Any]]:
    """Read a predictions JSON Lines file.

    Args:
        path: The file.
        stage: Stage name, for messages.
        known_queries: Every query id of the judgments, mapped to whether it is answerable.
        label: Name of the file in messages (default: ``path``).

    Returns:
        ``{query_id: (line number, raw hits)}`` for the answerable queries present.

    Raises:
        HarnessError: Bad line, unknown or repeated query id (naming file and line).
    """
    shown = path if label is None else label
    found: dict[str, tuple[int, Any]] = {}
    seen: dict[str, int] = {}
    try:
        for line, data in iter_jsonl_objects(path):
            unknown = sorted(set(data) - _LINE_KEYS)
            if unknown:
                raise HarnessError(
                    f"stage {stage!r}: unknown key {unknown[0]!r} (a line is "
                    '{"query_id": ..., "hits": [...]})',
                    path=shown,
                    line=line,
                )
            query_id = data.get("query_id")
            if not isinstance(query_id, str):
                raise HarnessError(
                    f"stage {stage!r}: 'query_id' must be a string", path=shown, line=line
                )
            if "hits" not in data:
                raise HarnessError(
                    f"stage {stage!r}: query {query_id!r}: missing key 'hits'",
                    path=shown,
                    line=line,
                )
            if query_id not in known_queries:
                raise HarnessError(
                    f"stage {stage!r}: unknown query id {query_id!r} (not in the judgments)",
                    path=shown,
                    line=line,
                )
            if query_id in seen:
                raise HarnessError(
                    f"stage {stage!r}: query {query_id!r} repeated (first on line "
                    f"{seen[query_id]})",
                    path=shown,
                    line=line,
                )
            seen[query_id] = line
            if known_queries[query_id]:
                found[query_id] = (line, data["hits"])
    except HarnessError:
        raise
    except ValueError as error:
        message = getattr(error, "message", str(error))
        line_number = getattr(error, "line", None)
        raise HarnessError(f"stage {stage!r}: {message}", path=shown, line=line_number) from None
    return found
