"""FAISS indexes for dense stages (extra ``faiss``: faiss-cpu), imported only when asked for.

``faiss-flat`` is an exact inner-product index: over the same float32 vectors it finds the
same chunks as the numpy search, its scores equal to float32 precision (FAISS sums in its own
order). ``faiss-ivf`` clusters the chunks (k-means with a fixed seed, so the same vectors give
the same index) and searches only the ``nprobe`` clusters nearest to each query. Either way the
results are ordered like the exact search: by score, ties to the later chunk (trec_eval's rule).

With FAISS built with CUDA (faiss-gpu), the index is built on the CPU (the same IVF training)
and copied to a GPU (``search_device``: ``auto`` when the model runs on CUDA, or ``cuda[:N]``).
FAISS's GPU indexes select at most :data:`GPU_MAX_K` hits and probe at most as many clusters:
a deeper search, or more probes, runs on a CPU copy of the index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.harness._errors import HarnessError
from groundkit.harness.retrievers._builtin import DenseRetriever
from groundkit.harness.run._ranking import rank_order

__all__ = [
    "FAISS_INSTALL_HINT",
    "GPU_MAX_K",
    "FaissIndex",
    "faiss_device_for",
    "faiss_search_device",
    "ivf_sizes",
    "require_faiss",
]

FAISS_INSTALL_HINT = "pip install 'groundkit-cli[faiss]'"
_SEED = 1234  # k-means seed of IVF training: the same vectors always give the same index
_MIN_POINTS_PER_CLUSTER = 39  # FAISS warns (and clusters poorly) below this many per cluster
GPU_MAX_K = 2048
"""The most hits (and IVF probes) FAISS's GPU indexes select per query (FAISS 1.7.3 and later)."""

Hits = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]


def require_faiss(stage: str, index: str) -> Any:
    """The ``faiss`` module.

    Raises:
        HarnessError: faiss-cpu is not installed (naming the extra).
    """
    try:
        import faiss
    except ImportError:
        raise HarnessError(
            f"stage {stage!r}: index = {index!r} needs faiss-cpu: {FAISS_INSTALL_HINT}"
        ) from None
    return faiss


def faiss_gpus(faiss: Any) -> int:
    """GPUs FAISS can use (0 for faiss-cpu, which has no GPU functions)."""
    if not hasattr(faiss, "StandardGpuResources") or not hasattr(faiss, "get_num_gpus"):
        return 0
    return int(faiss.get_num_gpus())


def faiss_search_device(
    faiss: Any, requested: str, model_device: str, *, stage: str, index: str
) -> str:
    """``cpu`` or the ``cuda:N`` device a FAISS index is searched on.

    ``auto`` is the model's CUDA device when FAISS sees it, else the CPU; ``cuda[:N]``
    needs FAISS built with CUDA and GPU ``N``.

    Raises:
        HarnessError: a CUDA device asked for that FAISS cannot use.
    """
    wanted = model_device if requested == "auto" else requested
    if not wanted.startswith("cuda"):
        return "cpu"
    number = int(wanted.partition(":")[2] or 0)
    if number < faiss_gpus(faiss):
        return f"cuda:{number}"
    if requested == "auto":
        return "cpu"
    raise HarnessError(
        f"search_device {requested!r} with index = {index!r} needs FAISS built with CUDA "
        f"(faiss-gpu) seeing GPU {number}, and it sees {faiss_gpus(faiss)}; stage {stage!r} "
        "(use search_device = 'cpu' or 'auto')"
    )


def faiss_device_for(settings: DenseRetriever, model_device: str, stage: str) -> str:
    """``cpu`` or ``cuda:N``: where a stage's FAISS index is searched.

    Raises:
        HarnessError: faiss-cpu is missing, or the CUDA device asked for is not usable.
    """
    faiss = require_faiss(stage, settings.index)
    return faiss_search_device(
        faiss, settings.search_device, model_device, stage=stage, index=settings.index
    )


def ivf_sizes(count: int, settings: DenseRetriever) -> tuple[int, int]:
    """``(nlist, nprobe)`` of an IVF index over ``count`` vectors (the settings' or defaults).

    The default ``nlist`` is ``4 * sqrt(count)``, capped so that every cluster can be trained
    on 39 vectors; the default ``nprobe`` is ``sqrt(nlist)`` rounded up. Neither exceeds
    ``count`` (nor ``nprobe`` ``nlist``).
    """
    nlist = settings.nlist
    if nlist is None:
        nlist = min(round(4 * math.sqrt(count)), count // _MIN_POINTS_PER_CLUSTER)
    nlist = max(1, min(nlist, count))
    nprobe = settings.nprobe if settings.nprobe is not None else math.ceil(math.sqrt(nlist))
    return nlist, max(1, min(nprobe, nlist))


class FaissIndex:
    """A FAISS flat or IVF inner-product index over a stage's chunk vectors.

    Args:
        vectors: The chunk embeddings (normalised when the stage normalises), float32.
        settings: The dense settings (``index``, ``nlist``, ``nprobe``).
        stage: Stage name, for messages.
        device: ``cpu`` or the ``cuda:N`` device to search on (see :func:`faiss_search_device`).

    Raises:
        HarnessError: faiss-cpu is missing.
    """

    def __init__(
        self,
        vectors: npt.NDArray[np.float32],
        settings: DenseRetriever,
        stage: str,
        device: str = "cpu",
    ):
        faiss = require_faiss(stage, settings.index)
        self._faiss = faiss
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        count, dimension = data.shape
        self.count = count
        self.nlist: int | None = None
        self.nprobe: int | None = None
        if settings.index == "faiss-ivf" and count > 0:
            self.nlist, self.nprobe = ivf_sizes(count, settings)
            quantizer = faiss.IndexFlatIP(dimension)
            index = faiss.IndexIVFFlat(quantizer, dimension, self.nlist, faiss.METRIC_INNER_PRODUCT)
            index.cp.seed = _SEED
            index.train(data)
            index.nprobe = self.nprobe
            self._quantizer = quantizer  # the IVF index does not own it: keep it alive
        else:
            index = faiss.IndexFlatIP(max(dimension, 1))
        if count:
            index.add(data)
        self._index = index
        self._cpu_index: Any = index
        self.device = device
        if device.startswith("cuda") and (self.nprobe or 0) <= GPU_MAX_K:
            self._resources = faiss.StandardGpuResources()  # kept alive with the index
            self._index = faiss.index_cpu_to_gpu(self._resources, int(device[5:]), index)
            self._cpu_index = None  # copied back only for a search deeper than GPU_MAX_K
        else:
            self.device = "cpu"

    @property
    def search_device(self) -> str:
        """Where it is searched, as reports record it: ``faiss`` (the CPU) or ``faiss:cuda:N``."""
        return "faiss" if self.device == "cpu" else f"faiss:{self.device}"

    def search(self, queries: npt.NDArray[np.float32], depth: int) -> Sequence[Hits]:
        """The ``depth`` best chunks of each query, by score, ties to the later chunk."""
        k = min(depth, self.count)
        if k == 0 or len(queries) == 0:
            empty = (np.zeros(0, np.int64), np.zeros(0, np.float64))
            return [empty for _ in range(len(queries))]
        index = self._index
        if k > GPU_MAX_K and self.device != "cpu":
            if self._cpu_index is None:
                self._cpu_index = self._faiss.index_gpu_to_cpu(self._index)
            index = self._cpu_index
        scores, ids = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        out: list[Hits] = []
        for row_ids, row_scores in zip(ids, scores, strict=True):
            found = row_ids >= 0  # an IVF search may find fewer than k
            kept_ids = row_ids[found].astype(np.int64)
            kept_scores = row_scores[found].astype(np.float64)
            # FAISS's heap leaves ties in no particular order: the harness's one tie rule.
            order = rank_order(kept_ids, kept_scores)
            out.append((kept_ids[order], kept_scores[order]))
        return out
