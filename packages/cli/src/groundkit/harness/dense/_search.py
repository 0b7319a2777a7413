"""Exact inner-product search in torch, on the device the vectors are on.

The chunk matrix is copied to the device once. Queries are scored in blocks (one matrix
product per block) whose size keeps the scores, the tie mask and the candidates of a block
within a memory budget: a share of the free device memory on CUDA
(``torch.cuda.mem_get_info``), a fixed budget elsewhere. The top ``k`` follow the harness's
one tie rule exactly, as :func:`~groundkit.harness.run._ranking.top_k` does: ``torch.topk``
gives only the ``k``-th best score of each query (a value, the same whichever tied items it
picked); every chunk scoring at least that is a candidate, and the candidates are ordered by
score descending, ties to the higher chunk row (:func:`~groundkit.harness.run._ranking.rank_order`'s
order). The scores are the float32 products, as numpy's search returns them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.harness._errors import HarnessError

__all__ = ["TorchSearch", "block_rows", "resolve_search_device"]

FloatMatrix = npt.NDArray[np.float32]
Hits = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]
CPU_BUDGET_BYTES = 512 * 2**20  # scores and candidates of one block on the CPU (or MPS)
CUDA_FREE_SHARE = 4  # a block takes at most a quarter of the free device memory
BYTES_PER_SCORE = 32  # float32 score, tie mask, and worst-case candidate (row, column, score)
MAX_BLOCK_ROWS = 8192


def resolve_search_device(requested: str, model_device: str, *, stage: str) -> str:
    """``numpy`` or the torch device an exact search runs on.

    ``auto`` is the model's device, except the CPU, where numpy's search is kept: torch's
    CPU product (MKL) rounds a few scores differently from numpy's (OpenBLAS), which may swap
    chunks tied at float32 precision, and earlier versions' results stay bit for bit (on a
    2-core CPU torch was up to 2x faster over 20,000 chunks, not consistently over 200,000).
    A CUDA device torch does not see is refused.

    Raises:
        HarnessError: ``cuda`` asked for without a CUDA device.
    """
    if requested == "numpy":
        return "numpy"
    device = model_device if requested == "auto" else requested
    kind = device.split(":", 1)[0]
    if kind == "cpu":
        return "numpy" if requested == "auto" else "cpu"
    if kind == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise HarnessError(
                f"search_device {requested!r} needs a CUDA device, and torch sees none; "
                f"stage {stage!r} (use search_device = 'numpy' or 'cpu')"
            )
    return device


def block_rows(count: int, device: Any) -> int:
    """Queries per block over ``count`` chunks on a torch ``device``, within its budget."""
    import torch

    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        budget = int(free) // CUDA_FREE_SHARE
    else:
        budget = CPU_BUDGET_BYTES
    return int(max(1, min(MAX_BLOCK_ROWS, budget // max(1, count * BYTES_PER_SCORE))))


@contextlib.contextmanager
def _full_float32(torch: Any, device: Any) -> Iterator[None]:
    """CUDA products in full float32 (no TF32, whatever the process set): numpy's scores."""
    if device.type != "cuda":
        yield
        return
    matmul = torch.backends.cuda.matmul
    saved = matmul.allow_tf32
    matmul.allow_tf32 = False
    try:
        yield
    finally:
        matmul.allow_tf32 = saved


class TorchSearch:
    """Exact inner-product search over chunk vectors kept on a torch device.

    Args:
        vectors: The chunk vectors (normalised when the stage normalises), float32.
        device: The torch device (``cpu``, ``cuda``, ``cuda:N``, ``mps``...).

    Attributes:
        rows: Queries scored per matrix product.
    """

    def __init__(self, vectors: FloatMatrix, device: str) -> None:
        import torch

        self._torch = torch
        self.device = torch.device(device)
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        self.count = int(data.shape[0])
        self._matrix = torch.from_numpy(data).to(self.device)
        self.rows = block_rows(self.count, self.device)

    def search(self, queries: FloatMatrix, k: int) -> list[Hits]:
        """The ``k`` best chunks of each query, by score, ties to the later chunk."""
        k = min(k, self.count)
        if k == 0 or len(queries) == 0:
            return [(np.zeros(0, np.int64), np.zeros(0, np.float64)) for _ in range(len(queries))]
        out: list[Hits] = []
        data = np.ascontiguousarray(queries, dtype=np.float32)
        for start in range(0, len(data), self.rows):
            out.extend(self._block(data[start : start + self.rows], k))
        return out

    def _block(self, block: FloatMatrix, k: int) -> list[Hits]:
        torch = self._torch
        with torch.inference_mode(), _full_float32(torch, self.device):
            scores = torch.from_numpy(block).to(self.device) @ self._matrix.T
            kth = torch.topk(scores, k, dim=1, sorted=False).values.amin(dim=1, keepdim=True)
            rows, cols = torch.nonzero(scores >= kth, as_tuple=True)
            values = scores[rows, cols]
            rows_np = rows.cpu().numpy().astype(np.int64)
            cols_np = cols.cpu().numpy().astype(np.int64)
            values_np = values.cpu().numpy().astype(np.float64)
        # Per query: score descending, ties to the higher chunk row (rank_order's order).
        order = np.lexsort((-cols_np, -values_np, rows_np))
        cols_np, values_np = cols_np[order], values_np[order]
        offsets = np.zeros(len(block) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows_np, minlength=len(block)), out=offsets[1:])
        return [
            (cols_np[begin : begin + k], values_np[begin : begin + k])
            for begin in offsets[:-1].tolist()
        ]
