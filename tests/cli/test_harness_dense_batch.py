"""The dense batch size: ``auto`` chosen for the device, and halved when the GPU runs out.

The halving is tested on the CPU with a small torch module that raises torch's own
``OutOfMemoryError`` for batches above a limit, as a CUDA allocation does: the vectors must
equal those of a module with room for the whole batch, and every later batch must go in the
pieces found, without failing again.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from groundkit.harness import DenseRetriever
from groundkit.harness.dense import _encode as encode_module
from groundkit.harness.dense._encode import BatchEncoder, _pieces
from groundkit.harness.dense._loading import resolve_batch_size

torch = pytest.importorskip("torch")


class _Tiny(torch.nn.Module):  # type: ignore[name-defined,misc]
    """Two numbers a text, doubled; batches above ``limit`` texts run out of memory."""

    device = torch.device("cpu")

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.passes: list[int] = []

    def tokenize(self, texts: list[str]) -> dict[str, Any]:
        ids = torch.tensor([[len(t), sum(map(ord, t)) % 97] for t in texts], dtype=torch.float32)
        return {"input_ids": ids, "attention_mask": torch.ones(len(texts), 2), "texts": texts}

    def forward(self, features: dict[str, Any]) -> dict[str, Any]:
        rows = len(features["input_ids"])
        self.passes.append(rows)
        assert len(features["texts"]) == rows  # a per-row list is cut with the tensors
        if rows > self.limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return {"sentence_embedding": features["input_ids"] * 2}


def _encode(model: _Tiny, batch_size: int) -> np.ndarray:
    texts = [f"text number {i} " * (1 + i % 5) for i in range(70)]
    groups = [np.arange(0, 40), np.arange(40, 70)]
    encoded = BatchEncoder(model, batch_size).encode_groups(texts, groups)
    return np.concatenate([vectors for _, vectors in encoded])


def test_auto_is_256_on_cuda_and_32_elsewhere() -> None:
    assert resolve_batch_size("auto", "cuda") == resolve_batch_size("auto", "cuda:1") == 256
    assert resolve_batch_size("auto", "cpu") == resolve_batch_size("auto", "mps") == 32
    assert resolve_batch_size(7, "cuda") == 7


def test_a_batch_too_large_for_the_gpu_is_passed_in_halves() -> None:
    roomy, tight = _Tiny(limit=1000), _Tiny(limit=5)
    encoder = BatchEncoder(tight, 16)
    assert encoder.split  # the tokenize-then-forward path, where the halving lives
    expected = _encode(roomy, 16)
    got = _encode(tight, 16)
    np.testing.assert_array_equal(got, expected)
    # 16 failed, then 8 failed, then pieces of 4: and every later batch went in fours at once.
    assert tight.passes[:3] == [16, 8, 4]
    failed = [rows for rows in tight.passes if rows > 5]
    assert failed == [16, 8]
    assert max(rows for rows in tight.passes if rows <= 5) == 4


def test_the_encoder_records_the_batch_it_used() -> None:
    encoder = BatchEncoder(_Tiny(limit=3), 16)
    list(encoder.encode_groups(["a", "bb", "ccc"] * 10, [np.arange(30)]))
    assert (encoder.pieces, encoder.batch_size_used) == (8, 2)
    assert BatchEncoder(_Tiny(limit=99), 16).batch_size_used == 16


def test_a_single_text_that_does_not_fit_raises() -> None:
    with pytest.raises(torch.cuda.OutOfMemoryError):
        _encode(_Tiny(limit=0), 4)


def test_pieces_cut_per_row_values_and_share_the_rest() -> None:
    features = {"input_ids": torch.arange(10).reshape(5, 2), "texts": list("abcde"), "n": 3}
    pieces = _pieces(features, 5, 2)
    assert [p["texts"] for p in pieces] == [list("abc"), list("de")]
    assert [p["input_ids"].shape[0] for p in pieces] == [3, 2]
    assert all(p["n"] == 3 for p in pieces)
    assert _pieces(features, 5, 1) == [features]


@pytest.mark.parametrize("value", [0, -3, True, 2.5, "big", None])
def test_a_bad_batch_size_is_refused(value: object) -> None:
    with pytest.raises(ValidationError, match="batch_size"):
        DenseRetriever(batch_size=value)


def test_batch_size_is_auto_unless_given() -> None:
    assert DenseRetriever().batch_size == "auto"
    assert DenseRetriever(batch_size=64).batch_size == 64
    assert DenseRetriever.model_validate({"batch_size": "auto"}).batch_size == "auto"


class _Copies:
    """Records every ``pin_memory`` (with its thread) and every ``to`` copy's ``non_blocking``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pinned: list[str] = []
        self.non_blocking: list[bool] = []
        to = torch.Tensor.to

        def pin_memory(tensor: Any) -> Any:
            self.pinned.append(threading.current_thread().name)
            return tensor.clone()  # what a CUDA build returns: a copy in page-locked memory

        def copy(tensor: Any, *args: Any, **kwargs: Any) -> Any:
            self.non_blocking.append(bool(kwargs.get("non_blocking", False)))
            return to(tensor, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, "pin_memory", pin_memory)
        monkeypatch.setattr(torch.Tensor, "to", copy)


@pytest.mark.parametrize("overlap", [False, True])
def test_batches_for_a_cuda_model_are_pinned_where_they_are_tokenized(
    monkeypatch: pytest.MonkeyPatch, overlap: bool
) -> None:
    texts = [f"text number {i} " * (1 + i % 5) for i in range(70)]
    groups = [np.arange(0, 40), np.arange(40, 70)]
    expected = np.concatenate(
        [v for _, v in BatchEncoder(_Tiny(99), 16).encode_groups(texts, groups)]
    )
    monkeypatch.setattr(encode_module, "_on_cuda", lambda model: True)  # a CUDA model, on the CPU
    copies = _Copies(monkeypatch)
    encoder = BatchEncoder(_Tiny(99), 16, overlap=overlap)
    assert encoder.pin
    got = np.concatenate([v for _, v in encoder.encode_groups(texts, groups)])
    np.testing.assert_array_equal(got, expected)
    batches = 3 + 2  # 40 texts in batches of 16, then 30
    assert len(copies.pinned) == 2 * batches  # input_ids and attention_mask of each batch
    tokenizer_thread = overlap  # pinned off the forward pass's thread when overlapped
    assert all(name.startswith("groundkit-tokenize") == tokenizer_thread for name in copies.pinned)
    assert (
        copies.non_blocking.count(True) == 2 * batches
    )  # the copies to the device are asynchronous


def test_pinned_memory_refused_leaves_the_batches_unpinned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(tensor: Any) -> Any:
        raise RuntimeError("CUDA error: out of memory (cudaHostAlloc)")

    texts = ["a", "bb", "ccc"] * 6
    expected = next(BatchEncoder(_Tiny(99), 8).encode_groups(texts, [np.arange(18)]))[1]
    monkeypatch.setattr(encode_module, "_on_cuda", lambda model: True)
    copies = _Copies(monkeypatch)
    monkeypatch.setattr(torch.Tensor, "pin_memory", refuse)
    encoder = BatchEncoder(_Tiny(99), 8, overlap=True)
    got = next(encoder.encode_groups(texts, [np.arange(18)]))[1]
    np.testing.assert_array_equal(got, expected)
    assert not encoder.pin  # given up at the first refusal: copied as off CUDA
    assert copies.non_blocking
    assert not any(copies.non_blocking)


def test_a_model_off_cuda_is_neither_pinned_nor_copied_asynchronously(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    copies = _Copies(monkeypatch)
    encoder = BatchEncoder(_Tiny(99), 8, overlap=True)
    assert not encoder.pin
    list(encoder.encode_groups(["a", "bb", "ccc"] * 6, [np.arange(18)]))
    assert copies.pinned == []
    assert copies.non_blocking
    assert not any(copies.non_blocking)


def test_a_model_is_on_cuda_by_its_device() -> None:
    class _On:
        def __init__(self, device: str) -> None:
            self.device = torch.device(device)

    on_cuda = encode_module._on_cuda
    assert [on_cuda(_On(d)) for d in ("cuda", "cuda:1", "cpu", "meta")] == [1, 1, 0, 0]
    assert not on_cuda(object())
