"""Turning any hit a retriever returns into a span of the corpus.

A hit is one of (see :mod:`groundkit.harness.retrievers._protocol`):

* a span: ``{"doc", "start", "end", "score"}``, ``(doc, start, end[, score])``, or an object
  with ``doc``/``start``/``end`` (and ``score``), e.g. a ``Hit``, ``Chunk`` or ``Span``;
* text, located in its document: ``{"doc", "text", "score"}``, ``{"text", "score"}``, a plain
  string, or a framework object, read by duck typing (no framework is imported):

  - LangChain ``Document``: ``page_content``, ``metadata["source"]``, ``metadata["start_index"]``,
    ``metadata["score"]`` or ``metadata["relevance_score"]``; also ``(document, score)`` pairs;
  - LlamaIndex ``NodeWithScore`` (``node``, ``score``) or a bare ``TextNode``: ``text``,
    ``metadata["file_path"]``/``["file_name"]``, ``start_char_idx``, ``ref_doc_id``;
  - Haystack ``Document``: ``content``, ``meta["file_path"]``, ``meta["split_idx_start"]``,
    ``score``.

A framework object's document comes from its metadata (``source``, ``file_path``,
``file_name``, ``doc_id`` or ``doc``: an id of the corpus or a path ending with one); a name
that is not in the corpus is an error. Without one, a source-node id (LlamaIndex
``ref_doc_id``, Haystack ``meta["source_id"]``) is used when it is a corpus id, and otherwise
the text is looked for in the whole corpus. A recorded start offset is used when the text is
there verbatim; otherwise the text is located (exact, then tolerant). Text that cannot be
located is not an error: the hit is left out of the ranking and recorded as an
:class:`~groundkit.judgments.report.UnlocatedHit`.
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
from groundkit.judgments.gold import locate_text
from groundkit.judgments.report import UnlocatedHit

__all__ = ["HitNormalizer", "PerQueryHits"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
PerQueryHits = tuple[IntArray, IntArray, IntArray, FloatArray, IntArray]

_SPAN_KEYS = frozenset({"doc", "start", "end", "score"})
_TEXT_KEYS = frozenset({"doc", "text", "score"})
_NAMING_KEYS = ("source", "file_path", "file_name", "doc_id", "doc")
_EXCERPT = 200
Located = tuple[str, int, int, float]


class HitNormalizer:
    """Validates hits of one stage and turns them into spans of the corpus.

    Args:
        corpus: Document id to text.
        doc_codes: Document id to its code (position in the corpus's id order).
        stage: Stage name, for messages.
        depth: Hits kept per query.
        path: File the hits come from, for messages.

    Attributes:
        unlocated: Text hits that could not be located, in the order met.
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
        self.unlocated: list[UnlocatedHit] = []

    def _error(
        self, message: str, query_id: str, rank: int | None, line: int | None
    ) -> HarnessError:
        where = f"stage {self.stage!r}: query {query_id!r}: "
        if rank is not None:
            where += f"hit {rank}: "
        return HarnessError(where + message, path=self.path, line=line)

    def _document(self, source: Any, query_id: str, rank: int, line: int | None) -> str:
        found = self._known_document(source)
        if found is not None:
            return found
        if not isinstance(source, str) or not source:
            raise self._error(
                f"document id must be a non-empty string, got {source!r}", query_id, rank, line
            )
        raise self._error(
            f"unknown document {source!r} (not in the corpus){self._path_hint(source)}",
            query_id,
            rank,
            line,
        )

    def _path_hint(self, source: str) -> str:
        """A hint when ``source`` is only the file name of a corpus id in a folder."""
        if "/" in source or "\\" in source:
            return ""
        matches = [doc for doc in self.doc_codes if doc.rpartition("/")[2] == source]
        if not matches:
            return ""
        return (
            f"; it is the file name of {matches[0]!r}: record the file's path (Haystack's "
            "converters do with store_full_path=True)"
        )

    def _known_document(self, source: Any) -> str | None:
        if not isinstance(source, str) or not source:
            return None
        if source in self.doc_codes:
            return source
        # Loaders record a file path; match its tail to a corpus id.
        parts = [p for p in source.replace("\\", "/").split("/") if p not in ("", ".")]
        for size in range(len(parts), 0, -1):
            candidate = "/".join(parts[-size:])
            if candidate in self.doc_codes:
                return candidate
        return None

    def _score(self, value: Any, rank: int, query_id: str, line: int | None) -> float:
        if value is None:
            return 1.0 / rank
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self._error(f"score must be a number, got {value!r}", query_id, rank, line)
        score = float(value)
        if not math.isfinite(score):
            raise self._error(f"score must be finite, got {value!r}", query_id, rank, line)
        return score

    def _span(
        self, doc: str, start: Any, end: Any, query_id: str, rank: int, line: int | None
    ) -> tuple[int, int]:
        for name, value in (("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise self._error(f"{name} must be an integer, got {value!r}", query_id, rank, line)
        length = len(self.corpus[doc])
        begin, stop = int(start), int(end)
        if not 0 <= begin < stop <= length:
            raise self._error(
                f"span [{begin}, {stop}) is out of bounds for {doc!r} (length {length}; "
                "0 <= start < end <= length)",
                query_id,
                rank,
                line,
            )
        return begin, stop

    def _located(
        self,
        doc: str | None,
        text: Any,
        score: float,
        query_id: str,
        rank: int,
        line: int | None,
        *,
        start: Any = None,
    ) -> Located | None:
        """The span of a text hit, or ``None`` (recorded as unlocated) when it is not there."""
        if not isinstance(text, str) or not text.strip():
            raise self._error("hit text must be a non-empty string", query_id, rank, line)
        if (
            doc is not None
            and isinstance(start, int)
            and not isinstance(start, bool)
            and start >= 0
            and self.corpus[doc][start : start + len(text)] == text
        ):
            return doc, start, start + len(text), score
        span = locate_text(self.corpus, doc, text)
        if span is None:
            self.unlocated.append(
                UnlocatedHit(query_id=query_id, rank=rank, doc=doc, text=text[:_EXCERPT])
            )
            return None
        return span.doc, span.start, span.end, score

    def _named_document(
        self, metadata: Any, weak: Sequence[Any], query_id: str, rank: int, line: int | None
    ) -> str | None:
        if metadata is not None and not isinstance(metadata, Mapping):
            raise self._error("document metadata must be a mapping", query_id, rank, line)
        for key in _NAMING_KEYS:
            value = None if metadata is None else metadata.get(key)
            if value is not None:
                return self._document(value, query_id, rank, line)
        # Source-node ids are often generated (uuids, hashes): only a corpus id counts.
        for value in weak:
            found = self._known_document(value)
            if found is not None:
                return found
        return None

    def _from_langchain(
        self, item: Any, score: Any, query_id: str, rank: int, line: int | None
    ) -> Located | None:
        metadata = getattr(item, "metadata", None) or {}
        doc = self._named_document(metadata, (), query_id, rank, line)
        if score is None:
            score = metadata.get("score", metadata.get("relevance_score"))
        value = self._score(score, rank, query_id, line)
        start = metadata.get("start_index")
        return self._located(doc, item.page_content, value, query_id, rank, line, start=start)

    def _from_llamaindex(
        self, node: Any, score: Any, query_id: str, rank: int, line: int | None
    ) -> Located | None:
        text = getattr(node, "text", None)
        if not isinstance(text, str):
            text = node.get_content()
        metadata = getattr(node, "metadata", None) or {}
        doc = self._named_document(
            metadata, (getattr(node, "ref_doc_id", None),), query_id, rank, line
        )
        value = self._score(score, rank, query_id, line)
        start = getattr(node, "start_char_idx", None)
        return self._located(doc, text, value, query_id, rank, line, start=start)

    def _from_haystack(
        self, item: Any, score: Any, query_id: str, rank: int, line: int | None
    ) -> Located | None:
        meta = getattr(item, "meta", None) or {}
        doc = self._named_document(meta, (meta.get("source_id"),), query_id, rank, line)
        value = self._score(
            getattr(item, "score", None) if score is None else score, rank, query_id, line
        )
        start = meta.get("split_idx_start")
        return self._located(doc, item.content, value, query_id, rank, line, start=start)

    def _from_dict(
        self, item: Mapping[str, Any], query_id: str, rank: int, line: int | None
    ) -> Located | None:
        keys = set(item)
        if "start" in keys or "end" in keys:
            unknown = sorted(keys - _SPAN_KEYS)
            missing = sorted({"doc", "start", "end"} - keys)
        else:
            unknown = sorted(keys - _TEXT_KEYS)
            missing = [] if "text" in keys else ["text"]
        if unknown:
            raise self._error(
                f"unknown key {unknown[0]!r} (a hit is {{doc, start, end, score}}, "
                "{doc, text, score} or {text, score})",
                query_id,
                rank,
                line,
            )
        if missing:
            raise self._error(f"missing key {missing[0]!r}", query_id, rank, line)
        score = self._score(item.get("score"), rank, query_id, line)
        if "text" in item:
            raw_doc = item.get("doc")
            doc = None if raw_doc is None else self._document(raw_doc, query_id, rank, line)
            return self._located(doc, item["text"], score, query_id, rank, line)
        doc = self._document(item["doc"], query_id, rank, line)
        begin, stop = self._span(doc, item["start"], item["end"], query_id, rank, line)
        return doc, begin, stop, score

    def _framework(
        self, item: Any, score: Any, query_id: str, rank: int, line: int | None
    ) -> Located | bool | None:
        """A framework object's hit; ``False`` when ``item`` is none of the known shapes."""
        if hasattr(item, "page_content"):
            return self._from_langchain(item, score, query_id, rank, line)
        node = getattr(item, "node", None)
        if node is not None and (hasattr(node, "get_content") or hasattr(node, "text")):
            own = getattr(item, "score", None)
            return self._from_llamaindex(
                node, own if score is None else score, query_id, rank, line
            )
        if hasattr(item, "get_content") and hasattr(item, "metadata"):
            return self._from_llamaindex(item, score, query_id, rank, line)
        if hasattr(item, "content") and hasattr(item, "meta"):
            return self._from_haystack(item, score, query_id, rank, line)
        return False

    def _one(self, item: Any, query_id: str, rank: int, line: int | None) -> Located | None:
        if isinstance(item, Mapping):
            return self._from_dict(item, query_id, rank, line)
        if isinstance(item, str):
            return self._located(None, item, 1.0 / rank, query_id, rank, line)
        if isinstance(item, tuple | list):
            if len(item) == 2:
                paired = self._framework(item[0], item[1], query_id, rank, line)
                if paired is not False:
                    return paired  # type: ignore[return-value]
            if len(item) in (3, 4):
                doc = self._document(item[0], query_id, rank, line)
                begin, stop = self._span(doc, item[1], item[2], query_id, rank, line)
                score = self._score(item[3] if len(item) == 4 else None, rank, query_id, line)
                return doc, begin, stop, score
        else:
            found = self._framework(item, None, query_id, rank, line)
            if found is not False:
                return found  # type: ignore[return-value]
            if all(hasattr(item, name) for name in ("doc", "start", "end")):
                doc = self._document(item.doc, query_id, rank, line)
                begin, stop = self._span(doc, item.start, item.end, query_id, rank, line)
                score = self._score(getattr(item, "score", None), rank, query_id, line)
                return doc, begin, stop, score
        raise self._error(
            f"cannot read a hit from {type(item).__name__} (expected a dict, a span object, "
            "a (doc, start, end[, score]) tuple, a text, or a LangChain, LlamaIndex or Haystack "
            "document)",
            query_id,
            rank,
            line,
        )

    def normalize(self, query_id: str, hits: Any, *, line: int | None = None) -> PerQueryHits:
        """Validate one query's hits (rank order) and return its columns.

        Only the first ``depth`` hits are read. Text hits that cannot be located are left out
        and added to :attr:`unlocated`.

        Returns:
            ``(doc codes, starts, ends, scores, chunk ids)``; chunk ids are all ``-1``.

        Raises:
            HarnessError: The first invalid hit, naming stage, query, rank and line.
        """
        if isinstance(hits, str | bytes | Mapping) or not isinstance(hits, Sequence):
            raise self._error(
                f"hits must be a list, got {type(hits).__name__}", query_id, None, line
            )
        located = [
            self._one(item, query_id, index + 1, line)
            for index, item in enumerate(hits[: self.depth])
        ]
        kept = [hit for hit in located if hit is not None]
        docs = np.fromiter((self.doc_codes[h[0]] for h in kept), np.int64, len(kept))
        starts = np.fromiter((h[1] for h in kept), np.int64, len(kept))
        ends = np.fromiter((h[2] for h in kept), np.int64, len(kept))
        scores = np.fromiter((h[3] for h in kept), np.float64, len(kept))
        return docs, starts, ends, scores, np.full(len(kept), -1, dtype=np.int64)
