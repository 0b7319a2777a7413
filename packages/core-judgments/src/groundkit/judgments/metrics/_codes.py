"""Small kernels of the span metrics: document codes shared with the gold, bit counts."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from groundkit.judgments.metrics._tables import ChunkSpans, HitTable

IntArray = npt.NDArray[np.int64]
MaskArray = npt.NDArray[np.uint64]


def _shared_codes(gold_docs: tuple[str, ...], hits: HitTable | ChunkSpans) -> IntArray:
    """Hit (or chunk) document codes in the gold code space.

    Documents unknown to the gold get codes ``len(gold_docs) + j``, distinct from each other.
    """
    if hits.doc_ids is gold_docs or hits.doc_ids == gold_docs:
        return hits.docs
    index = {doc: code for code, doc in enumerate(gold_docs)}
    base = len(gold_docs)
    remap = np.fromiter(
        (index.get(doc, base + position) for position, doc in enumerate(hits.doc_ids)),
        dtype=np.int64,
        count=len(hits.doc_ids),
    )
    return remap[hits.docs] if hits.docs.size else hits.docs


def _popcount(values: MaskArray) -> IntArray:
    if hasattr(np, "bitwise_count"):
        counted: IntArray = np.bitwise_count(values).astype(np.int64)
        return counted
    # SWAR popcount for numpy < 2.0.
    x = values - ((values >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    swar: IntArray = ((x * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)
    return swar
