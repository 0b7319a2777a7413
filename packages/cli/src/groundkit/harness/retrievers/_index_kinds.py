"""The chunked built-in kinds: BM25 and dense retrieval over the stage's chunks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from groundkit.harness.retrievers._builtin import Bm25Retriever, DenseRetriever
from groundkit.harness.retrievers._protocol import ChunkHits, ChunkSet, Query, StageContext

if TYPE_CHECKING:
    from groundkit.harness.retrievers._bm25 import Bm25Index

__all__ = ["Bm25Stage", "DenseStage"]


def _bm25_index() -> type[Bm25Index]:
    # Imported when a stage is built: validating a config never loads bm25s.
    from groundkit.harness.retrievers._bm25 import Bm25Index

    return Bm25Index


class Bm25Stage:
    """BM25 (bm25s) over the chunks; its analysis answers ``shares_query_term``.

    Args:
        settings: The BM25 settings.
        context: The stage's context.
    """

    def __init__(self, settings: Bm25Retriever, context: StageContext) -> None:
        self._index_type = _bm25_index()
        self.settings = settings
        self.context = context
        self._index: Bm25Index | None = None
        self._queries: list[str] = []

    def index(self, chunks: ChunkSet) -> None:
        """Analyse and index the chunk texts (once per chunk set and settings of the work)."""
        shared = self.context.run.shared

        def build() -> Bm25Index:
            return self._index_type(
                chunks.texts,
                self.settings,
                progress=lambda _p, d, t: self.context.progress("index", d, t),
            )

        key = f"bm25:{id(chunks)}:{self.settings.model_dump_json()}"
        self._index, built = shared.index(key, chunks, build)
        if built:
            shared.count("bm25_indexes")

    def search(self, queries: Sequence[Query], depth: int) -> list[ChunkHits]:
        """The ``depth`` best chunks of each query (only chunks sharing a term)."""
        assert self._index is not None, "index() first"
        self._queries = [q.text for q in queries]
        found = self._index.search(
            self._queries, depth, progress=lambda _p, d, t: self.context.progress("retrieve", d, t)
        )
        return [ChunkHits(ids, scores) for ids, scores in found]

    def usage(self) -> dict[str, int]:
        """The most processes or threads the index and the search ran on (``workers``)."""
        return {} if self._index is None else {"workers": self._index.workers}

    def shares_query_term(self, requests: Sequence[tuple[int, int]]) -> list[bool]:
        """Whether each ``(query number, chunk row)`` pair shares an analysed term."""
        assert self._index is not None
        return [self._index.shares_term(self._queries[q], row) for q, row in requests]


def _check_hardware(settings: DenseRetriever, stage: str) -> None:
    """Refuse, before any text is embedded, a precision or search device the machine lacks."""
    if settings.precision != "fp16" and not settings.search_device.startswith("cuda"):
        return  # nothing to check: no torch import for a config that needs none
    from groundkit.harness.dense._loading import resolve_device, resolve_precision
    from groundkit.harness.dense._search import resolve_search_device

    device = resolve_device(settings.device)
    resolve_precision(settings.precision, device, stage=stage)
    if settings.index == "exact":
        resolve_search_device(settings.search_device, device, stage=stage)
    else:
        from groundkit.harness.dense._index import faiss_device_for

        faiss_device_for(settings, device, stage)


class DenseStage:
    """Cosine search over sentence-transformers embeddings of the chunks (exact or FAISS).

    Args:
        settings: The dense settings.
        context: The stage's context.
    """

    def __init__(self, settings: DenseRetriever, context: StageContext) -> None:
        # Imports numpy only; the model loads when the chunks are indexed.
        from groundkit.harness.dense._model import DenseIndex

        if settings.index != "exact":
            # A missing extra is a configuration error before any text is embedded.
            from groundkit.harness.dense._index import require_faiss

            require_faiss(context.stage, settings.index)
        if context.run.settings.executor == "ray":
            from groundkit.harness.dense._ray import require_ray

            require_ray(context.stage)
        _check_hardware(settings, context.stage)
        self._index_type = DenseIndex
        self.settings = settings
        self.context = context
        self._index: DenseIndex | None = None
        self._texts: Sequence[str] = ()
        self._queries_encoded = 0

    @property
    def encoder_max_tokens(self) -> int | None:
        """The model's maximum input length in tokens (known once indexed)."""
        return None if self._index is None else self._index.encoder_max_tokens

    def index(self, chunks: ChunkSet) -> None:
        """Embed the chunks (through the embedding cache)."""
        self._texts = chunks.texts
        self._index = self._index_type(
            chunks.texts,
            self.settings,
            stage=self.context.stage,
            cache_dir=self.settings.cache_dir or self.context.cache_dir,
            progress=self.context.progress,
            executor=self.context.run.settings.executor,
            ray_address=self.context.run.settings.ray_address,
        )
        self.context.run.shared.count("embeddings", self._index.embedded)

    def run_info(self) -> dict[str, str]:
        """What the run chose for the stage: device, precision, search device, batch, executor."""
        if self._index is None:
            return {}
        return {
            "device_used": self._index.device,
            "precision_used": self._index.precision,
            "search_device_used": self._index.search_device,
            "batch_size_used": str(self._index.encoder.batch_size_used),
            "executor": self.context.run.settings.executor,
        }

    def phase_seconds(self) -> dict[str, float | None]:
        """Seconds tokenizing, encoding and searching the vectors (see ``DenseIndex``)."""
        return {} if self._index is None else self._index.phase_seconds()

    def search(self, queries: Sequence[Query], depth: int) -> list[ChunkHits]:
        """The ``depth`` nearest chunks of each query."""
        assert self._index is not None, "index() first"
        self._queries_encoded += len(queries)
        found = self._index.search(
            [q.text for q in queries],
            depth,
            progress=lambda _p, d, t: self.context.progress("retrieve", d, t),
        )
        return [ChunkHits(ids, scores) for ids, scores in found]

    def usage(self) -> dict[str, int]:
        """Texts sent to the model, and the chunks whose embeddings the cache held.

        The texts sent are the chunks not found in the embedding cache, and the queries.
        """
        embedded = 0 if self._index is None else self._index.embedded
        cached = max(0, len(self._texts) - embedded) if self._index is not None else 0
        return {"embedding_calls": embedded + self._queries_encoded, "cached_passages": cached}

    def tokens_before(self, requests: Sequence[tuple[int, int]]) -> list[int]:
        """Encoder tokens (document prefix included) before each ``(chunk row, offset)``."""
        assert self._index is not None
        prefix = self.settings.document_prefix
        return self._index.count_tokens(
            [prefix + self._texts[row][:offset] for row, offset in requests]
        )
