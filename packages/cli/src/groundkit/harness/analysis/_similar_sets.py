"""Pairs of shingle sets with a Jaccard similarity of at least 0.9, and the hits they relate.

Near-duplicate marking (:mod:`groundkit.harness.analysis._duplicates`) finds, once for a whole
run, the pairs of distinct texts whose sets of word 3-shingles are that similar: prefix
filtering over sets sorted in one global order (rarest shingles first), a bound from small
sketches, then exact counts of the shared elements. Each hit then looks up the earliest
earlier hit of a related text in its own list.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from groundkit.harness._cores import available_cores
from groundkit.harness._unique import sorted_unique

__all__ = [
    "ELEMENT_BITS",
    "JACCARD_THRESHOLD",
    "batches",
    "each_batch",
    "earliest_related",
    "prefix_lengths",
    "relation",
]

JACCARD_THRESHOLD = 0.9
# The sets' elements are below 2**ELEMENT_BITS (a shingle id's width): an element and the
# number of its pair fit in one 64-bit key.
ELEMENT_BITS = 51
# Sets whose keys are sorted together: a set's number fits in the key's other bits.
_SETS_PER_SORT = 1 << (64 - ELEMENT_BITS)
# Candidate pairs and related hits are looked up in batches of about this many (memory bound).
_BATCH_SLOTS = 1 << 20
# Buckets of the sketches that rule out most candidate pairs before they are counted exactly.
_BUCKETS = 512
# Sketches are counted this many sets at a time (memory bound).
_SKETCH_SETS = 256

U64Array = npt.NDArray[np.uint64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def prefix_lengths(sizes: IntArray) -> IntArray:
    """How many of a set's first elements another set must share for Jaccard >= t."""
    lengths: IntArray = sizes - np.ceil(JACCARD_THRESHOLD * sizes - 1e-9).astype(np.int64) + 1
    return np.minimum(lengths, sizes)


def relation(sets: Sequence[U64Array]) -> tuple[IntArray, IntArray]:
    """Classes related to each class, as adjacency lists ``neighbours[indptr[c]:indptr[c + 1]]``.

    A class with words is related to itself and to every class whose shingle set has a
    Jaccard similarity of at least the threshold with its own. Prefix filtering finds the
    candidate pairs: every set is sorted in one global order (rarest shingles first), and two
    sets with Jaccard ``>= t`` share an element among the first ``|A| - ceil(t |A|) + 1``
    elements of each; their sizes also differ by less than the factor ``t``. Candidates are
    then checked exactly.
    """
    n = len(sets)
    sizes = np.fromiter(map(len, sets), np.int64, n)
    lengths = prefix_lengths(sizes).tolist()
    candidates = _sharing_pairs([x[:k] for x, k in zip(sets, lengths, strict=True)])
    later, earlier = sizes[candidates[:, 0]], sizes[candidates[:, 1]]
    candidates = candidates[
        np.minimum(later, earlier) >= JACCARD_THRESHOLD * np.maximum(later, earlier)
    ]
    candidates = candidates[_may_be_similar(sets, sizes, candidates)]
    shared = _shared_counts(sets, sizes, candidates)
    union = sizes[candidates[:, 0]] + sizes[candidates[:, 1]] - shared
    pairs = candidates[shared >= JACCARD_THRESHOLD * union]
    with_words = np.flatnonzero(sizes > 0)
    source = np.concatenate([pairs[:, 0], pairs[:, 1], with_words])
    target = np.concatenate([pairs[:, 1], pairs[:, 0], with_words])
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(source, minlength=n), out=indptr[1:])
    return indptr, target[np.argsort(source, kind="stable")]


def _expand(counts: IntArray, starts: IntArray) -> tuple[IntArray, IntArray]:
    """For items with ``counts[i]`` slots from ``starts[i]``: each slot's item and index."""
    items = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    begin = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=begin[1:])
    slots = np.arange(items.size, dtype=np.int64) - begin[items] + starts[items]
    return items, slots


def batches(weights: IntArray, limit: int) -> list[tuple[int, int]]:
    """Consecutive ranges of items whose weights sum to about ``limit`` (at least one item)."""
    total = np.cumsum(weights)
    cuts = np.searchsorted(total, np.arange(limit, int(total[-1]) if total.size else 0, limit))
    edges = [0, *np.unique(cuts[cuts > 0]).tolist(), weights.size]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def each_batch(
    work: Callable[[tuple[int, int]], None], batches: list[tuple[int, int]], threaded: bool = True
) -> None:
    """``work(batch)`` for each batch (disjoint results), on a thread per core if ``threaded``."""
    threads = min(len(batches), available_cores()) if threaded else 1
    if threads <= 1:
        for edge in batches:
            work(edge)
        return
    with ThreadPoolExecutor(threads, thread_name_prefix="groundkit-duplicates") as pool:
        for _ in pool.map(work, batches):
            pass  # an error is raised here


def _may_be_similar(sets: Sequence[U64Array], sizes: IntArray, pairs: IntArray) -> BoolArray:
    """Pairs whose sketches allow a Jaccard similarity of at least the threshold.

    A sketch counts a set's elements in each of ``2**_BUCKET_BITS`` buckets of their low bits;
    the sum over buckets of the smaller count bounds the shared elements from above, so a pair
    failing the threshold at that bound cannot pass it (the test is monotone in the count).
    """
    keep = np.ones(len(pairs), dtype=np.bool_)
    if not pairs.size:
        return keep
    involved, local = np.unique(pairs, return_inverse=True)
    local = local.reshape(pairs.shape)
    # The narrowest counts that hold a set's size: the pair test below reads two sketch rows
    # a pair and is bound by memory (1.5 M pairs of 1,000-character chunks: 0.75 s in
    # uint16, 0.55 s in uint8).
    largest = int(sizes.max())
    dtype = np.uint8 if largest < 1 << 8 else np.uint16 if largest < 1 << 16 else np.int64
    sketch = np.empty((involved.size, _BUCKETS), dtype=dtype)
    # A few hundred sets at a time: the counts of all of them at once took 30 MiB on SciFact.
    for first in range(0, involved.size, _SKETCH_SETS):
        group = involved[first : first + _SKETCH_SETS]
        flat = np.concatenate([sets[i] for i in group.tolist()])
        owner = np.repeat(np.arange(group.size, dtype=np.int64), sizes[group])
        buckets = (flat & np.uint64(_BUCKETS - 1)).astype(np.int64)
        counts = np.bincount(owner * _BUCKETS + buckets, minlength=group.size * _BUCKETS)
        sketch[first : first + group.size] = counts.reshape(group.size, _BUCKETS)

    def test(edge: tuple[int, int]) -> None:
        a, b = edge
        bound = np.minimum(sketch[local[a:b, 0]], sketch[local[a:b, 1]]).sum(axis=1, dtype=np.int64)
        union = sizes[pairs[a:b, 0]] + sizes[pairs[a:b, 1]] - bound
        keep[a:b] = bound >= JACCARD_THRESHOLD * union

    # Each batch fills its own slice of ``keep``, with array operations that release the
    # interpreter lock: on threads, the same answer (0.55 -> 0.33 s on 2 cores above).
    each_batch(test, batches(np.full(len(pairs), _BUCKETS, dtype=np.int64), _BATCH_SLOTS))
    return keep


def _shared_counts(sets: Sequence[U64Array], sizes: IntArray, pairs: IntArray) -> IntArray:
    """How many elements the two sets of each pair share (the smaller looked up in the larger)."""
    shared = np.zeros(len(pairs), dtype=np.int64)
    if not pairs.size:
        return shared
    flat = np.concatenate(list(sets))
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    swap = sizes[pairs[:, 0]] > sizes[pairs[:, 1]]
    small = np.where(swap, pairs[:, 1], pairs[:, 0])
    large = np.where(swap, pairs[:, 0], pairs[:, 1])
    order = np.argsort(large, kind="stable")
    small, large = small[order], large[order]
    owners, owner_start = np.unique(large, return_index=True)
    owner_start = np.r_[owner_start, large.size]
    # (local owner << 51 | id) keys of up to 2**13 larger sets at a time: sorted as they come.
    for group in range(0, owners.size, _SETS_PER_SORT):
        mine = owners[group : group + _SETS_PER_SORT]
        local, slots = _expand(sizes[mine], offsets[mine])
        keys = (local.astype(np.uint64) << np.uint64(ELEMENT_BITS)) | flat[slots]
        first, last = int(owner_start[group]), int(owner_start[group + mine.size])
        local_of_pair = np.searchsorted(mine, large[first:last]).astype(np.uint64)
        for a, b in batches(sizes[small[first:last]], _BATCH_SLOTS):
            rows, slots = _expand(
                sizes[small[first + a : first + b]], offsets[small[first + a : first + b]]
            )
            probe = (local_of_pair[a:b][rows] << np.uint64(ELEMENT_BITS)) | flat[slots]
            at = np.minimum(np.searchsorted(keys, probe), keys.size - 1)
            found = (keys[at] == probe).astype(np.int64)
            shared[order[first + a : first + b]] = np.bincount(rows, weights=found, minlength=b - a)
    return shared


def earliest_related(
    classes: IntArray, bounds: IntArray, indptr: IntArray, neighbours: IntArray
) -> IntArray:
    """Per hit, the 1-based rank of the earliest earlier hit of a related class, else 0."""
    n_hits, n_classes = classes.size, indptr.size - 1
    result = np.zeros(n_hits, dtype=np.int64)
    if not n_hits:
        return result
    list_of = np.repeat(np.arange(bounds.size - 1, dtype=np.int64), np.diff(bounds))
    # The first hit of each class in each list: the only one an earlier hit can be.
    occurrences, first_hit = np.unique(list_of * n_classes + classes, return_index=True)
    degrees = indptr[classes + 1] - indptr[classes]
    for first, last in batches(degrees, _BATCH_SLOTS):
        rows, slots = _expand(degrees[first:last], indptr[classes[first:last]])
        rows += first
        probe = list_of[rows] * n_classes + neighbours[slots]
        at = np.minimum(np.searchsorted(occurrences, probe), occurrences.size - 1)
        earlier = first_hit[at]
        ok = (occurrences[at] == probe) & (earlier < rows)
        best = np.full(last - first, n_hits, dtype=np.int64)
        np.minimum.at(best, rows[ok] - first, earlier[ok])
        found = best < n_hits
        hits = np.flatnonzero(found) + first
        result[hits] = best[found] - bounds[list_of[hits]] + 1
    return result


def _runs(
    sets: Sequence[U64Array],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Owners of all elements sorted by value, with the start and length of each equal run."""
    sizes = np.fromiter((x.size for x in sets), np.int64, len(sets))
    flat = np.concatenate(list(sets)) if sizes.sum() else np.zeros(0, dtype=np.uint64)
    owner = np.repeat(np.arange(len(sets), dtype=np.int64), sizes)
    order = np.argsort(flat, kind="stable")
    flat, owner = flat[order], owner[order]
    starts = (
        np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]]) if flat.size else flat.astype(np.int64)
    )
    lengths = np.diff(np.r_[starts, flat.size]).astype(np.int64)
    return owner, starts.astype(np.int64), lengths


def _pairs_in_runs(
    owner: npt.NDArray[np.int64], starts: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """``(later, earlier)`` owner pairs of every run of equal values (with repetitions)."""
    pieces = [np.zeros((0, 2), dtype=np.int64)]
    for length in np.unique(lengths[lengths >= 2]).tolist():
        members = owner[starts[lengths == length][:, None] + np.arange(length)[None, :]]
        left, right = np.triu_indices(length, k=1)
        a, b = members[:, left].ravel(), members[:, right].ravel()
        pieces.append(np.stack([np.maximum(a, b), np.minimum(a, b)], axis=1))
    return np.concatenate(pieces)


def _sharing_pairs(sets: Sequence[U64Array]) -> npt.NDArray[np.int64]:
    """Distinct ``(later, earlier)`` pairs of sets sharing at least one element."""
    n = len(sets)
    pairs = _pairs_in_runs(*_runs(sets))
    codes = sorted_unique(pairs[:, 0] * n + pairs[:, 1])
    return np.stack([codes // n, codes % n], axis=1)
