"""Scorers of a rerank stage: a cross-encoder, a bi-encoder, or the user's function.

A scorer takes, for each query, the query text and its candidate passages, and returns one
score per passage (higher is better). Models load offline only: a local folder, the packaged
default model, or a name already in the Hugging Face cache (``HF_HUB_OFFLINE=1``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness.dense._cache import EmbeddingCache
from groundkit.harness.dense._loading import (
    _DEFAULT_ALIASES,
    DENSE_INSTALL_HINT,
    LOAD_MODEL_PHASE,
    _offline,
    _packaged_model_path,
    _quiet_transformers,
    apply_precision,
    cache_model_id,
    load_sentence_transformer,
)
from groundkit.harness.dense._model import default_cache_dir
from groundkit.harness.retrievers._builtin import RerankRetriever
from groundkit.harness.run._stage_run import user_failure

__all__ = ["Scorer", "make_scorer"]

Batch = Sequence[tuple[str, Sequence[str]]]


class Scorer(Protocol):
    """Scores of each query's passages, in the order given."""

    def __call__(self, batch: Batch) -> list[list[float]]: ...


def _load_cross_encoder(model: str, *, stage: str, device: str = "cpu") -> Any:
    try:
        from sentence_transformers import CrossEncoder
    except ImportError:
        raise HarnessError(
            f"stage {stage!r}: a cross-encoder needs sentence-transformers: {DENSE_INSTALL_HINT}"
        ) from None
    _quiet_transformers()
    local = Path(model).expanduser()
    packaged = _packaged_model_path() if model in _DEFAULT_ALIASES else None
    where = str(packaged or (local if local.is_dir() else model))
    try:
        with _offline():
            return CrossEncoder(where, device=device)
    except Exception as error:
        raise HarnessError(
            f"stage {stage!r}: cannot load the cross-encoder {model!r} (a local model folder, or "
            "a name already in the Hugging Face cache; nothing is downloaded): "
            f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"
        ) from error


def _checked(stage: str, values: Any, count: int) -> list[float]:
    if isinstance(values, np.ndarray):
        values = values.reshape(-1).tolist()
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise StageFailed(
            stage, f"the scorer must return a list of scores, got {type(values).__name__}"
        )
    if len(values) != count:
        raise StageFailed(stage, f"the scorer returned {len(values)} scores for {count} passages")
    out: list[float] = []
    for value in values:
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(value)
        ):
            raise StageFailed(stage, f"the scorer returned {value!r}, not a finite number")
        out.append(float(value))
    return out


def _cross_encoder(model: Any, batch_size: int, stage: str) -> Scorer:
    def score(batch: Batch) -> list[list[float]]:
        pairs = [(query, text) for query, texts in batch for text in texts]
        if not pairs:
            return [[] for _ in batch]
        flat = model.predict(pairs, batch_size=batch_size, show_progress_bar=False)
        values = _checked(stage, np.asarray(flat, dtype=np.float64).reshape(-1), len(pairs))
        out, at = [], 0
        for _, texts in batch:
            out.append(values[at : at + len(texts)])
            at += len(texts)
        return out

    return score


def _bi_encoder(model: Any, settings: RerankRetriever, cache: EmbeddingCache) -> Scorer:
    """Cosine of query and passage embeddings; passages go through the embedding cache."""

    def encode(texts: list[str]) -> np.ndarray:
        raw = model.encode(
            texts,
            batch_size=settings.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return np.asarray(raw, dtype=np.float32).reshape(len(texts), -1)

    def unit(matrix: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float64)

    def passages(texts: list[str]) -> np.ndarray:
        # The same cache as dense stages: a passage a dense stage embedded is not encoded again.
        rows, digests = cache.lookup(texts)
        missing = [i for i, row in enumerate(rows) if row is None]
        fresh = encode([texts[i] for i in missing]) if missing else None
        known = [i for i, row in enumerate(rows) if row is not None]
        cached = cache.vectors([r for r in rows if r is not None]) if known else None
        width = (fresh if fresh is not None else cached).shape[1]  # type: ignore[union-attr]
        matrix = np.zeros((len(texts), width), dtype=np.float32)
        if fresh is not None:
            matrix[missing] = fresh
            cache.add([digests[i] for i in missing], fresh)
        if cached is not None:
            matrix[known] = cached
        return unit(matrix)

    def score(batch: Batch) -> list[list[float]]:
        texts = sorted({text for _, candidates in batch for text in candidates})
        if not texts:
            return [[] for _ in batch]
        rows = {text: row for row, text in enumerate(texts)}
        matrix = passages(texts)
        queries = unit(encode([query for query, _ in batch]))
        return [
            [float(queries[index] @ matrix[rows[text]]) for text in candidates]
            for index, (_, candidates) in enumerate(batch)
        ]

    return score


def _function(function: Callable[..., Any], stage: str, timeout: float) -> Scorer:
    """The scorer of a ``target``: each call on the stage's worker thread, with a deadline."""
    from groundkit.evalset.judge import CallTimeoutError, UserCodeThread

    worker = UserCodeThread(f"groundkit-stage-{stage}")

    def score(batch: Batch) -> list[list[float]]:
        out = []
        for query, texts in batch:
            try:
                values = worker.call(
                    function, query, list(texts), timeout=timeout, what="the scoring function"
                )
            except CallTimeoutError:
                raise StageFailed(
                    stage,
                    f"the scoring function did not return within timeout = {timeout:g} s "
                    f"(query {query[:60]!r})",
                ) from None
            except (Exception, SystemExit) as error:  # user code
                raise user_failure(stage, "the scoring function", error) from error
            out.append(_checked(stage, values, len(texts)))
        return out

    return score


def make_scorer(
    settings: RerankRetriever,
    *,
    stage: str,
    cache_dir: Path | None = None,
    device: str = "cpu",
    precision: str = "fp32",
    progress: Callable[[str, int, int], None] | None = None,
) -> Scorer:
    """The scorer a rerank stage's settings name (``cache_dir``: the run's embedding cache).

    A model is loaded onto ``device`` in ``precision`` (both already resolved: not
    ``auto``), shown as the ``load model`` phase of ``progress``.

    Raises:
        HarnessError: The model cannot be loaded, or the target does not import or is not a
            function.
    """
    if settings.model is not None:
        if progress is not None:
            progress(LOAD_MODEL_PHASE, 0, 1)
        if settings.scorer == "bi-encoder":
            model = load_sentence_transformer(
                settings.model, stage=stage, device=device, precision=precision
            )
            cache = EmbeddingCache(
                cache_dir or default_cache_dir(), cache_model_id(settings.model, precision)
            )
            scorer = _bi_encoder(model, settings, cache)
        else:
            loaded = apply_precision(
                _load_cross_encoder(settings.model, stage=stage, device=device), precision
            )
            scorer = _cross_encoder(loaded, settings.batch_size, stage)
        if progress is not None:
            progress(LOAD_MODEL_PHASE, 1, 1)
        return scorer
    from groundkit.harness.retrievers._external_kinds import resolve_retriever_object

    function = resolve_retriever_object(settings.target, stage=stage, what="scoring function")
    return _function(function, stage, settings.timeout)
