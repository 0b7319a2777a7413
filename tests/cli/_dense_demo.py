"""The demo handbook as dense tests use it: 1000-character chunks and the demo's queries."""

from __future__ import annotations

import importlib.resources
import json
from importlib.resources.abc import Traversable

from groundkit.judgments import CharsChunker
from groundkit.judgments.corpus import chunk_text

__all__ = ["demo_texts"]


def demo_texts() -> tuple[list[str], list[str]]:
    """The demo handbook cut into 1000-character chunks, and the demo's queries."""
    root = importlib.resources.files("groundkit.harness") / "demo_data"
    pending: list[Traversable] = [root / "corpus"]
    files: list[Traversable] = []
    while pending:
        for entry in pending.pop().iterdir():
            (pending if entry.is_dir() else files).append(entry)
    texts: list[str] = []
    for path in sorted(files, key=str):
        text = path.read_text(encoding="utf-8")
        chunks = chunk_text(text, CharsChunker(size=1000, overlap=200))
        texts += [text[start:end] for start, end in chunks]
    lines = (root / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    return texts, [json.loads(line)["query"] for line in lines if line.strip()]
