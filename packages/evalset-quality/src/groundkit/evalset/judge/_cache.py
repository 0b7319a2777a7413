"""The judge's on-disk cache: one JSON line per finished call, appended, never rewritten.

A call is keyed by (model, prompt version, query, passage hash) and its repeat number. Each
line is written whole by core's :func:`~groundkit.judgments.files.append_line` as soon as the call
ends, so a killed run keeps every call that finished and a rerun makes only the missing ones.
A torn line (a kill mid-write) and a line repeated by two concurrent runs are both read
harmlessly: the first complete line of a key wins. Failed calls are not cached — a
rerun tries them again.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from groundkit.evalset._errors import EvalSetError
from groundkit.judgments import canonical_json
from groundkit.judgments.files import append_line

__all__ = ["CachedCall", "JudgeCache", "call_key", "passage_hash"]

_FORMAT = "groundkit-judge-cache"


def passage_hash(passage: str) -> str:
    """SHA-256 of the passage text (UTF-8), hex."""
    return hashlib.sha256(passage.encode("utf-8")).hexdigest()


def call_key(model: str, prompt_version: str, query: str, passage_digest: str) -> str:
    """The cache key of one (model, prompt version, query, passage) judgment."""
    parts = {"model": model, "prompt": prompt_version, "query": query, "passage": passage_digest}
    return hashlib.sha256(canonical_json(parts).encode("utf-8")).hexdigest()


CachedCall = tuple[int, str, int]
"""A finished call: ``(grade, reason, tokens)``."""


class JudgeCache:
    """Finished judge calls by ``(key, repeat)``, backed by an append-only JSONL file.

    Args:
        path: The cache file (created on the first write); ``None`` keeps calls in memory.

    Raises:
        EvalSetError: The file exists and is not a judge cache.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._calls: dict[tuple[str, int], CachedCall] = {}
        self._lock = threading.Lock()
        if path is not None and path.exists():
            self._read(path)

    def _read(self, path: Path) -> None:
        with path.open("rb") as handle:
            lines = handle.read().split(b"\n")
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                # A line cut by a kill mid-write (the next append starts a fresh line after
                # it): that call never finished, so it is simply made again.
                continue
            try:
                if row.get("format") != _FORMAT:
                    raise ValueError(row)
                key = (str(row["key"]), int(row["repeat"]))
                call = (int(row["grade"]), str(row.get("reason", "")), int(row.get("tokens", 0)))
            except (AttributeError, ValueError, KeyError, TypeError):
                raise EvalSetError(
                    f"{path}: line {number} is not a judge-cache line; give another cache file"
                ) from None
            self._calls.setdefault(key, call)

    def __len__(self) -> int:
        return len(self._calls)

    def get(self, key: str, repeat: int) -> CachedCall | None:
        """The finished call, or ``None``."""
        with self._lock:
            return self._calls.get((key, repeat))

    def put(self, key: str, repeat: int, call: CachedCall) -> None:
        """Record a finished call (on disk first, then in memory; the first one of a key wins).

        Raises:
            OSError: The line cannot be appended (the file is left as it was).
        """
        grade, reason, tokens = call
        line = json.dumps(
            {
                "format": _FORMAT,
                "key": key,
                "repeat": repeat,
                "grade": grade,
                "reason": reason,
                "tokens": tokens,
            },
            ensure_ascii=False,
            sort_keys=True,
        )
        with self._lock:
            if (key, repeat) in self._calls:
                return
            if self.path is not None:
                append_line(self.path, line)
            self._calls[(key, repeat)] = call
