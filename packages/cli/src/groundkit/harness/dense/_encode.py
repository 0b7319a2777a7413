"""Encoding text groups: tokenization apart from the forward pass, optionally overlapped.

sentence-transformers' ``encode`` sorts a call's texts by length, cuts them into batches,
tokenizes each batch and runs the model on it. :class:`BatchEncoder` does the same steps
itself, with the same sort call, batches and model call, so that its vectors are
``encode``'s bit for bit while the seconds spent tokenizing and encoding are measured apart.
With ``overlap`` a worker thread tokenizes the next batches while the model encodes the
current one (the fast tokenizers release the GIL): the batches, and the vectors, do not change.
On a CUDA device each tokenized batch is also copied into page-locked (pinned) host memory
where it was tokenized (on the worker thread when overlapped), so that its copy to the device
is asynchronous (``non_blocking``): the host goes on while the bytes travel, and the forward
pass, queued on the same stream, starts when they are there. The same bytes arrive.

A forward pass that runs out of GPU memory is retried in halves, and every later batch of the
encoder is then passed in as many pieces (:attr:`BatchEncoder.pieces`): an ``auto`` batch size
larger than the GPU can hold costs one failed attempt per halving, not the run.

A model whose ``encode`` does more than this (a default prompt, truncated dimensions,
flattened unpadded batches) or that is not a torch module (a test double) goes through its own
``encode``; its seconds are then all encoding (``tokenize_seconds`` stays ``None``).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["BatchEncoder", "splittable"]

FloatMatrix = npt.NDArray[np.float32]
Positions = npt.NDArray[np.int64]
_AHEAD = 2  # batches tokenized ahead of the one being encoded


@dataclass(frozen=True)
class _Batch:
    group: int  # index of the group in the call
    rows: npt.NDArray[np.intp]  # rows of the batch within its group
    texts: list[str]
    last: bool  # the group's last batch


def splittable(model: Any) -> bool:
    """Whether ``model.encode`` is exactly tokenize-then-forward per length-sorted batch."""
    try:
        import torch
    except ImportError:
        return False
    if not isinstance(model, torch.nn.Module):
        return False
    if not callable(getattr(model, "preprocess", None) or getattr(model, "tokenize", None)):
        return False
    if getattr(model, "default_prompt_name", None) or getattr(model, "truncate_dim", None):
        return False
    flatten = getattr(model, "_can_flatten_inputs", None)  # unpadded batches, interleaved
    return not (callable(flatten) and flatten())


def _plan(texts: Sequence[str], groups: Sequence[Positions], batch_size: int) -> Iterator[_Batch]:
    """Each group's batches, as ``encode`` would form them from the group's texts."""
    for number, group in enumerate(groups):
        group_texts = [texts[i] for i in group.tolist()]
        # sentence-transformers' own sort call: the same order, so the same batches.
        order = np.argsort([-len(text) for text in group_texts])
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            yield _Batch(
                number,
                rows,
                [group_texts[i] for i in rows.tolist()],
                start + batch_size >= len(order),
            )


class BatchEncoder:
    """Raw float32 embeddings of text groups, one ``encode``-equivalent call per group.

    Args:
        model: A loaded sentence-transformers model (or any object with ``encode``).
        batch_size: Texts per model batch.
        overlap: Tokenize ahead on a worker thread while the model encodes.

    Attributes:
        tokenize_seconds: Seconds in the tokenizer, pinning the batch included (on the worker
            thread when overlapped, so they may overlap ``encode_seconds``); ``None`` when
            ``encode`` could not be split.
        encode_seconds: Seconds in the forward passes, the copy of the vectors back to the
            host included (the whole ``encode`` calls when it could not be split).
        pieces: Pieces each tokenized batch is passed to the model in (1 until the GPU ran
            out of memory; doubled each time it did).
        pin: Whether batches are pinned and copied to the device asynchronously (a model on
            a CUDA device, encoded batch by batch).
    """

    def __init__(self, model: Any, batch_size: int, *, overlap: bool = False) -> None:
        self.model = model
        self.batch_size = max(1, batch_size)
        self.split = splittable(model)
        self.overlap = overlap and self.split
        self.pin = self.split and _on_cuda(model)
        self.tokenize_seconds: float | None = 0.0 if self.split else None
        self.encode_seconds = 0.0
        self.pieces = 1

    @property
    def batch_size_used(self) -> int:
        """The most texts one forward pass took (the batch size, divided by :attr:`pieces`)."""
        return -(-self.batch_size // self.pieces)

    def encode_groups(
        self, texts: Sequence[str], groups: Sequence[Positions]
    ) -> Iterator[tuple[Positions, FloatMatrix]]:
        """Each group's positions with their raw float32 embeddings, group by group."""
        if not self.split:
            yield from self._whole_calls(texts, groups)
            return
        self.model.eval()
        tokenized = self._ahead if self.overlap else self._inline
        parts: list[tuple[npt.NDArray[np.intp], FloatMatrix]] = []
        for batch, features in tokenized(_plan(texts, groups, self.batch_size)):
            parts.append((batch.rows, self._forward(features)))
            if batch.last:
                group = groups[batch.group]
                width = parts[0][1].shape[1]
                out = np.zeros((len(group), width), dtype=np.float32)
                for rows, vectors in parts:
                    out[rows] = vectors
                parts = []
                yield group, out

    def _whole_calls(
        self, texts: Sequence[str], groups: Sequence[Positions]
    ) -> Iterator[tuple[Positions, FloatMatrix]]:
        for group in groups:
            start = time.perf_counter()
            encoded = self.model.encode(
                [texts[i] for i in group.tolist()],
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
            vectors = np.asarray(encoded, dtype=np.float32).reshape(len(group), -1)
            self.encode_seconds += time.perf_counter() - start
            yield group, vectors

    def _tokenize(self, texts: list[str]) -> Any:
        start = time.perf_counter()
        preprocess: Callable[[list[str]], Any] = (
            getattr(self.model, "preprocess", None) or self.model.tokenize
        )
        features = preprocess(texts)
        if self.pin:
            try:
                features = _pinned(features)
            except RuntimeError:  # page-locked memory refused (a container's limit, say)
                self.pin = False  # the copies then block, as without CUDA: same bytes
        assert self.tokenize_seconds is not None
        self.tokenize_seconds += time.perf_counter() - start
        return features

    def _inline(self, batches: Iterator[_Batch]) -> Iterator[tuple[_Batch, Any]]:
        for batch in batches:
            yield batch, self._tokenize(batch.texts)

    def _ahead(self, batches: Iterator[_Batch]) -> Iterator[tuple[_Batch, Any]]:
        """The batches with their features, tokenized up to ``_AHEAD`` batches ahead."""
        pending: collections.deque[tuple[_Batch, Future[Any]]] = collections.deque()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="groundkit-tokenize") as pool:

            def submit() -> None:
                batch = next(batches, None)
                if batch is not None:
                    pending.append((batch, pool.submit(self._tokenize, batch.texts)))

            for _ in range(_AHEAD):
                submit()
            try:
                while pending:
                    batch, future = pending.popleft()
                    features = future.result()
                    submit()
                    yield batch, features
            finally:
                for _, future in pending:
                    future.cancel()

    def _forward(self, features: Any) -> FloatMatrix:
        import torch

        start = time.perf_counter()
        rows = _rows(features)
        while True:
            try:
                parts = [self._pass(piece) for piece in _pieces(features, rows, self.pieces)]
                break
            except torch.cuda.OutOfMemoryError:
                if self.pieces >= rows:
                    raise
                self.pieces *= 2
                torch.cuda.empty_cache()
        host = parts[0] if len(parts) == 1 else np.concatenate(parts)
        self.encode_seconds += time.perf_counter() - start
        return np.asarray(host, dtype=np.float32).reshape(len(host), -1)

    def _pass(self, features: dict[str, Any]) -> FloatMatrix:
        """One forward pass: the features' embeddings, as float32 on the host."""
        import torch

        device, asynchronous = self.model.device, self.pin
        with torch.inference_mode():
            moved = {
                key: value.to(device, non_blocking=asynchronous)
                if isinstance(value, torch.Tensor)
                else value
                for key, value in features.items()
            }
            embeddings = self.model(moved)["sentence_embedding"]
            host: FloatMatrix = embeddings.detach().to("cpu", torch.float32).numpy()
        return host


def _on_cuda(model: Any) -> bool:
    """Whether the model's parameters are on a CUDA device (its batches are then pinned)."""
    return getattr(getattr(model, "device", None), "type", None) == "cuda"


def _pinned(features: Any) -> Any:
    """The batch with its tensors copied into page-locked host memory (the rest shared)."""
    import torch

    return {
        key: value.pin_memory() if isinstance(value, torch.Tensor) else value
        for key, value in features.items()
    }


def _rows(features: dict[str, Any]) -> int:
    """Texts in a tokenized batch (the first dimension of its token ids)."""
    return len(features["input_ids"] if "input_ids" in features else next(iter(features.values())))


def _pieces(features: dict[str, Any], rows: int, pieces: int) -> list[dict[str, Any]]:
    """The batch cut into ``pieces`` consecutive slices of rows (itself when 1).

    Every value with one entry per row (tensors, lists) is sliced; others are shared. The
    padding stays the whole batch's, so each text's vector is computed as in the whole batch.
    """
    if pieces <= 1:
        return [features]
    size = -(-rows // pieces)
    return [
        {
            key: value[first : first + size] if _per_row(value, rows) else value
            for key, value in features.items()
        }
        for first in range(0, rows, size)
    ]


def _per_row(value: Any, rows: int) -> bool:
    shape = getattr(value, "shape", None)
    if shape is not None:
        return len(shape) > 0 and int(shape[0]) == rows
    return isinstance(value, list) and len(value) == rows
