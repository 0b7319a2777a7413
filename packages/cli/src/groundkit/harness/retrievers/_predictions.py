"""The predictions format: hits computed outside the harness, one JSON line per query.

Predictions format (JSON Lines, UTF-8, one object per query)::

    {"query_id": "q-1", "hits": [HIT, HIT, ...]}

``hits`` are in rank order, best first (scores are recorded, never used to re-order); only the
first ``depth`` are kept. A HIT is one of:

* ``{"doc": "handbook/leave.md", "start": 120, "end": 860, "score": 12.5}``: a character span
  of a corpus document (end exclusive, ``0 <= start < end <= len(text)``);
* ``{"doc": "handbook/leave.md", "text": "...", "score": 0.83}``: a passage of that document,
  located with :func:`groundkit.judgments.gold.locate_text` (exact, then whitespace- and
  typography-tolerant matching);
* ``{"text": "...", "score": 0.83}``: a passage of any document (the first match in id order).

``score`` is optional (``1 / rank`` is recorded when absent) and must be a finite number. An
optional ``"query"`` key on the line is ignored. A query id that the judgments do not have is an
error; an unanswerable query's line is ignored; a query without a line (or with ``"hits": []``)
scores zero and stays in the mean.

A text hit that cannot be located is left out of the ranking and listed in the report (see
:mod:`groundkit.harness.run._hits`, which also reads the hits Python retrievers return: spans,
tuples, LangChain, LlamaIndex and Haystack documents).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from groundkit.harness._errors import HarnessError
from groundkit.judgments.gold import iter_jsonl_objects

__all__ = ["read_predictions_jsonl"]

_LINE_KEYS = frozenset({"query_id", "hits", "query"})


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
