"""Fixtures of the CLI and harness tests: a throwaway retriever plugin found by entry point."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

PLUGIN_MODULE = textwrap.dedent(
    '''
    """A throwaway groundkit retriever plugin: word overlap over the harness's chunks."""

    from typing import Literal

    import numpy as np
    from pydantic import Field

    from groundkit.harness import ChunkHits, RetrieverKind, RetrieverSettings


    class OverlapSettings(RetrieverSettings):
        kind: Literal["throwaway-overlap"] = "throwaway-overlap"
        min_length: int = Field(default=3, gt=0)


    def _words(text, min_length):
        return {w.strip(".,?!;:").lower() for w in text.split() if len(w) >= min_length}


    class OverlapRetriever:
        def __init__(self, settings, context):
            self.settings = settings
            self.chunks = None
            self.queries = []

        def index(self, chunks):
            self.chunks = [_words(t, self.settings.min_length) for t in chunks.texts]

        def search(self, queries, depth):
            self.queries = [_words(q.text, self.settings.min_length) for q in queries]
            out = []
            for words in self.queries:
                scores = np.array([len(words & c) for c in self.chunks], dtype=np.float64)
                order = np.lexsort((np.arange(scores.size), -scores))
                keep = order[scores[order] > 0][:depth]
                out.append(ChunkHits(keep, scores[keep]))
            return out

        def shares_query_term(self, requests):
            return [bool(self.queries[q] & self.chunks[row]) for q, row in requests]


    KIND = RetrieverKind(
        name="throwaway-overlap",
        settings=OverlapSettings,
        build=OverlapRetriever,
        chunked=True,
        summary="word overlap (a test plugin)",
    )
    '''
)

ENTRY_POINTS = "[groundkit.retrievers]\nthrowaway-overlap = throwaway_overlap:KIND\n"
METADATA = "Metadata-Version: 2.1\nName: throwaway-overlap\nVersion: 0.1.0\n"


def write_plugin(site: Path) -> Path:
    """A package and its ``.dist-info`` (with ``entry_points.txt``) in ``site``."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "throwaway_overlap.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    info = site / "throwaway_overlap-0.1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(METADATA, encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    return site


def forget_kind(name: str) -> None:
    """Remove a kind registered by a test (the registry is process-wide)."""
    from groundkit.harness import _registry

    with _registry._LOCK:
        _registry._KINDS.pop(name, None)


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The throwaway plugin installed on ``sys.path`` (found by importlib.metadata)."""
    site = write_plugin(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield site
    forget_kind("throwaway-overlap")
    sys.modules.pop("throwaway_overlap", None)
