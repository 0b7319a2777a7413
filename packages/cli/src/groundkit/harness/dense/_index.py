"""FAISS indexes for dense stages (extra ``faiss``: faiss-cpu), imported only when asked for.

``faiss-flat`` is an exact inner-product index: over the same float32 vectors it finds the
same chunks as the numpy search, its scores equal to float32 precision (FAISS sums in its own
order). ``faiss-ivf`` clusters the chunks (k-means with a fixed seed, so the same vectors give
the same index) and searches only the ``nprobe`` clusters nearest to each query. Either way the
results are ordered like the exact search: by score, ties to the later chunk (trec_eval's rule).
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

__all__ = ["FAISS_INSTALL_HINT", "FaissIndex", "ivf_sizes", "require_faiss"]

FAISS_INSTALL_HINT = "pip install 'groundkit-cli[faiss]'"
_SEED = 1234  # k-means seed of IVF training: the same vectors always give the same index
_MIN_POINTS_PER_CLUSTER = 39  # FAISS warns (and clusters poorly) below this many per cluster

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

    Raises:
        HarnessError: faiss-cpu is missing.
    """

    def __init__(self, vectors: npt.NDArray[np.float32], settings: DenseRetriever, stage: str):
        faiss = require_faiss(stage, settings.index)
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

    def search(self, queries: npt.NDArray[np.float32], depth: int) -> Sequence[Hits]:
        """The ``depth`` best chunks of each query, by score, ties to the later chunk."""
        k = min(depth, self.count)
        if k == 0 or len(queries) == 0:
            empty = (np.zeros(0, np.int64), np.zeros(0, np.float64))
            return [empty for _ in range(len(queries))]
        scores, ids = self._index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        out: list[Hits] = []
        for row_ids, row_scores in zip(ids, scores, strict=True):
            found = row_ids >= 0  # an IVF search may find fewer than k
            kept_ids = row_ids[found].astype(np.int64)
            kept_scores = row_scores[found].astype(np.float64)
            # FAISS's heap leaves ties in no particular order: the harness's one tie rule.
            order = rank_order(kept_ids, kept_scores)
            out.append((kept_ids[order], kept_scores[order]))
        return out
