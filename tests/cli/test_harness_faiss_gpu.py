"""FAISS indexes searched on a GPU (faiss-gpu), tested on the CPU with a stand-in GPU layer.

CI has no GPU and installs faiss-cpu, which has no GPU functions. The stand-in adds them to the
real ``faiss`` module: ``index_cpu_to_gpu`` wraps the real CPU index (checking that no search
asks for more than :data:`GPU_MAX_K` hits, as FAISS's GPU selection refuses), and
``index_gpu_to_cpu`` hands it back. What is tested is groundkit's part: which device is chosen
and refused, that the index built and trained on the CPU is what goes to the GPU, and that a
search deeper than the GPU allows runs on a CPU copy with the same results.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from groundkit.harness import DenseRetriever, HarnessError
from groundkit.harness.dense import _index
from groundkit.harness.dense._index import (
    GPU_MAX_K,
    FaissIndex,
    faiss_device_for,
    faiss_search_device,
)

faiss = pytest.importorskip("faiss")


class _GpuIndex:
    """A CPU index posing as a GPU copy: FAISS's GPU limit on ``k`` enforced."""

    def __init__(self, index: Any, device: int) -> None:
        self.inner, self.device, self.depths = index, device, []

    def search(self, queries: Any, k: int) -> Any:
        assert k <= _index.GPU_MAX_K, "FAISS's GPU indexes select at most GPU_MAX_K hits"
        self.depths.append(k)
        return self.inner.search(queries, k)


@pytest.fixture
def two_gpus(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """FAISS seeing two GPUs; returns the record of copies to and from them."""
    calls: dict[str, Any] = {"to_gpu": [], "to_cpu": 0, "gpu": None}

    class Resources:
        pass

    def to_gpu(resources: object, device: int, index: Any) -> _GpuIndex:
        assert isinstance(resources, Resources)
        calls["to_gpu"].append((device, type(index).__name__, index.ntotal))
        calls["gpu"] = _GpuIndex(index, device)
        return calls["gpu"]

    def to_cpu(index: _GpuIndex) -> Any:
        calls["to_cpu"] += 1
        return index.inner

    monkeypatch.setattr(faiss, "StandardGpuResources", Resources, raising=False)
    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 2, raising=False)
    monkeypatch.setattr(faiss, "index_cpu_to_gpu", to_gpu, raising=False)
    monkeypatch.setattr(faiss, "index_gpu_to_cpu", to_cpu, raising=False)
    return calls


def _vectors(count: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, 24)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def _same(first: Any, second: Any) -> bool:
    return all(
        np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        for a, b in zip(first, second, strict=True)
    )


def test_faiss_cpu_has_no_gpu_so_auto_stays_on_the_cpu_and_cuda_is_refused() -> None:
    if _index.faiss_gpus(faiss):
        pytest.skip("this FAISS sees a GPU")
    assert faiss_search_device(faiss, "auto", "cuda:0", stage="d", index="faiss-flat") == "cpu"
    assert faiss_search_device(faiss, "cpu", "cuda", stage="d", index="faiss-flat") == "cpu"
    with pytest.raises(HarnessError) as raised:
        faiss_search_device(faiss, "cuda", "cpu", stage="dense", index="faiss-ivf")
    message = str(raised.value)
    assert "search_device 'cuda' with index = 'faiss-ivf' needs FAISS built with CUDA" in message
    assert "stage 'dense'" in message
    assert "\n" not in message


def test_the_device_chosen_with_two_gpus(two_gpus: dict[str, Any]) -> None:
    def device(requested: str, model: str) -> str:
        return faiss_search_device(faiss, requested, model, stage="d", index="faiss-flat")

    assert device("auto", "cuda") == "cuda:0"
    assert device("auto", "cuda:1") == "cuda:1"
    assert device("auto", "cuda:3") == "cpu"  # a GPU FAISS does not see: the CPU
    assert device("auto", "cpu") == device("auto", "mps") == "cpu"
    assert device("cpu", "cuda:1") == "cpu"
    assert device("cuda:1", "cpu") == "cuda:1"
    with pytest.raises(HarnessError, match="seeing GPU 2, and it sees 2"):
        device("cuda:2", "cuda:0")


@pytest.mark.parametrize(
    "settings",
    [{"index": "faiss-flat"}, {"index": "faiss-ivf", "nlist": 16, "nprobe": 4}],
    ids=["flat", "ivf"],
)
def test_a_gpu_index_searches_like_the_cpu_index(
    two_gpus: dict[str, Any], settings: dict[str, Any]
) -> None:
    vectors, queries = _vectors(2600, 1), _vectors(40, 2)
    config = DenseRetriever(**settings)
    on_cpu = FaissIndex(vectors, config, "d")
    on_gpu = FaissIndex(vectors, config, "d", "cuda:1")
    assert (on_cpu.device, on_gpu.device) == ("cpu", "cuda:1")
    kind = "IndexFlatIP" if settings["index"] == "faiss-flat" else "IndexIVFFlat"
    assert two_gpus["to_gpu"] == [(1, kind, 2600)]  # built (and trained) first, then copied
    assert _same(on_gpu.search(queries, 100), on_cpu.search(queries, 100))
    assert two_gpus["gpu"].depths == [100]
    # Deeper than the GPU selects: a CPU copy, made once, gives the CPU index's hits.
    deep = on_cpu.search(queries, GPU_MAX_K + 1)
    assert _same(on_gpu.search(queries, GPU_MAX_K + 1), deep)
    assert _same(on_gpu.search(queries, GPU_MAX_K + 5), on_cpu.search(queries, GPU_MAX_K + 5))
    assert two_gpus["to_cpu"] == 1
    assert two_gpus["gpu"].depths == [100]
    assert _same(on_gpu.search(queries, 10), on_cpu.search(queries, 10))
    assert two_gpus["gpu"].depths == [100, 10]


def test_more_probes_than_the_gpu_allows_keep_the_index_on_the_cpu(
    two_gpus: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_index, "GPU_MAX_K", 3)
    config = DenseRetriever(index="faiss-ivf", nlist=8, nprobe=4)
    index = FaissIndex(_vectors(400, 3), config, "d", "cuda:0")
    assert index.device == "cpu"
    assert two_gpus["to_gpu"] == []


def test_the_stage_records_where_its_faiss_index_is_searched(two_gpus: dict[str, Any]) -> None:
    flat = DenseRetriever(index="faiss-flat")
    assert faiss_device_for(flat, "cuda", "d") == "cuda:0"
    assert faiss_device_for(flat, "cpu", "d") == "cpu"
    pinned = DenseRetriever(index="faiss-flat", search_device="cuda:1")
    assert faiss_device_for(pinned, "cpu", "d") == "cuda:1"
    # As the report records it (search_device_used).
    vectors = _vectors(50, 4)
    assert FaissIndex(vectors, flat, "d", "cuda:1").search_device == "faiss:cuda:1"
    assert FaissIndex(vectors, flat, "d").search_device == "faiss"


def test_search_device_of_a_faiss_index() -> None:
    for value in ("auto", "cpu", "cuda", "cuda:1"):
        assert DenseRetriever(index="faiss-ivf", search_device=value).search_device == value
    for value in ("numpy", "mps", "xpu:0"):
        with pytest.raises(ValidationError, match="search_device of a FAISS index is 'auto'"):
            DenseRetriever(index="faiss-flat", search_device=value)


def test_cuda_without_faiss_gpu_is_one_line_and_exit_2(adapter_bench: Any) -> None:
    pytest.importorskip("torch")
    if _index.faiss_gpus(faiss):
        pytest.skip("this FAISS sees a GPU")
    line = adapter_bench.refusal(
        '[[stages]]\nname = "flat"\n'
        'retriever = { kind = "dense", index = "faiss-flat", search_device = "cuda" }\n'
    )
    assert "needs FAISS built with CUDA (faiss-gpu)" in line
    assert "'flat'" in line
