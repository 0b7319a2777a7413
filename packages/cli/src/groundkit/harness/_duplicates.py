"""Near-duplicate hits: the same or nearly the same text earlier in one ranked list.

Two hits are duplicates when their normalised texts (case-folded, whitespace-separated words)
are equal, or when the Jaccard similarity of their sets of word 3-shingles is at least 0.9 (a
text of fewer than three words is one shingle of all its words). Each hit points to the
earliest earlier hit it duplicates.

Shingles are compared through 64-bit ids (word ids in order of first appearance, mixed); two
different shingles sharing an id is possible in principle and vanishingly rare in practice.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["JACCARD_THRESHOLD", "DuplicateFinder"]

JACCARD_THRESHOLD = 0.9
_WIDTH = 3
_MIX_1 = np.uint64(0x9E3779B97F4A7C15)
_MIX_2 = np.uint64(0xC2B2AE3D27D4EB4F)
_HASH_BITS = np.uint64(43)
_HASH_MASK = np.uint64((1 << 43) - 1)
_RARITY_MAX = np.uint64((1 << 20) - 1)
# Above this many candidate pairs, counting all shared elements at once beats pair by pair.
_PAIRWISE_LIMIT = 24

U64Array = npt.NDArray[np.uint64]


class DuplicateFinder:
    """Finds duplicate hits; shingle sets are computed once per distinct span and cached.

    Args:
        texts: Document texts, indexed by document code.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts
        # Word -> id in order of first appearance (looked up in C through map()); a larger id
        # is a word seen later, on average a rarer one.
        self._vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self._cache: dict[tuple[int, int, int], tuple[bytes, U64Array]] = {}

    def _build(self, keys: Sequence[tuple[int, int, int]]) -> None:
        """Shingle sets of many spans at once (one vectorised pass)."""
        word_lists = [self._texts[d][s:e].casefold().split() for d, s, e in keys]
        counts = np.fromiter((len(w) for w in word_lists), np.int64, len(word_lists))
        # np.array on a list of Python ints infers int64 fastest; reinterpret as unsigned.
        looked_up = list(
            map(self._vocabulary.__getitem__, itertools.chain.from_iterable(word_lists))
        )
        ids = (
            np.array(looked_up, dtype=np.int64).view(np.uint64)
            if looked_up
            else np.zeros(0, np.uint64)
        )
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        # 3-shingles that start at least three words before their span's end.
        span_of = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
        position = np.arange(ids.size, dtype=np.int64) - offsets[span_of]
        starts = np.flatnonzero(position <= counts[span_of] - _WIDTH)
        a, b, c = ids[starts], ids[starts + 1], ids[starts + 2]
        # A shingle's id: 20 bits of rarity (its rarest word's id, inverted so that rarer sorts
        # first, the order prefix filtering works in) above 43 bits of a 64-bit mix of the
        # three word ids (array arithmetic wraps around silently). Bit 63 marks short texts.
        mixed = ((a * _MIX_1 + b) * _MIX_2) ^ (c * _MIX_1)
        rarity = np.minimum(np.maximum(np.maximum(a, b), c), _RARITY_MAX)
        hashes = ((_RARITY_MAX - rarity) << _HASH_BITS) | (mixed & _HASH_MASK)
        owners = span_of[starts]
        short = np.flatnonzero((counts > 0) & (counts < _WIDTH))
        if short.size:
            extra = [_short_text_id(ids[offsets[i] : offsets[i + 1]]) for i in short.tolist()]
            hashes = np.concatenate([hashes, np.asarray(extra, dtype=np.uint64)])
            owners = np.concatenate([owners, short])
        # Per span, ascending id (rarest first), duplicates removed: sort by id, then stably by
        # span (a radix sort on small integers; far faster than a two-key lexsort).
        order = np.argsort(hashes)
        small = np.uint16 if len(keys) < (1 << 16) else np.uint32
        order = order[np.argsort(owners[order].astype(small), kind="stable")]
        hashes, owners = hashes[order], owners[order]
        keep = np.r_[True, (hashes[1:] != hashes[:-1]) | (owners[1:] != owners[:-1])][: hashes.size]
        hashes, owners = hashes[keep], owners[keep]
        bounds = np.searchsorted(owners, np.arange(1, len(keys)), side="left")
        for index, (key, shingles) in enumerate(zip(keys, np.split(hashes, bounds), strict=True)):
            text_key = ids[offsets[index] : offsets[index + 1]].tobytes()
            self._cache[key] = (text_key, shingles)

    def prefetch(
        self,
        docs: npt.NDArray[np.int64],
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
    ) -> None:
        """Build the shingle sets of every distinct span of a whole run in one pass.

        One vectorised pass over all the hits of a stage is much cheaper than one per query.
        """
        keys = dict.fromkeys(zip(docs.tolist(), starts.tolist(), ends.tolist(), strict=True))
        missing = [k for k in keys if k not in self._cache]
        if missing:
            self._build(missing)

    def duplicate_of(
        self,
        docs: npt.NDArray[np.int64],
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
    ) -> list[int | None]:
        """Rank of the earliest earlier hit with the same or nearly the same text, per hit.

        Returns:
            For each hit of one ranked list, that 1-based rank, or ``None``.
        """
        n = int(docs.size)
        result: list[int | None] = [None] * n
        if n < 2:
            return result
        keys = list(zip(docs.tolist(), starts.tolist(), ends.tolist(), strict=True))
        missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            self._build(missing)
        entries = [self._cache[k] for k in keys]
        first_by_text: dict[bytes, int] = {}
        for index, (text, _) in enumerate(entries):
            earlier = first_by_text.setdefault(text, index)
            if earlier != index and text:
                result[index] = earlier + 1
        similar = _similar_pairs([e[1] for e in entries])
        for second in np.flatnonzero(similar.any(axis=1)).tolist():
            first = int(np.argmax(similar[second])) + 1
            current = result[second]
            result[second] = first if current is None else min(current, first)
        return result


def _similar_pairs(sets: Sequence[U64Array]) -> npt.NDArray[np.bool_]:
    """``similar[j, i]`` (``i < j``): Jaccard of sets ``i`` and ``j`` >= the threshold.

    Prefix filtering finds the candidate pairs: every set is sorted in one global order (rarest
    words first), and two sets with Jaccard ``>= t`` share an element among the first
    ``|A| - ceil(t |A|) + 1`` elements of each; their sizes also differ by less than the factor
    ``t``. Candidates are then checked exactly.
    """
    n = len(sets)
    similar = np.zeros((n, n), dtype=np.bool_)
    sizes = np.fromiter((x.size for x in sets), np.int64, n)
    lengths = sizes - np.ceil(JACCARD_THRESHOLD * sizes - 1e-9).astype(np.int64) + 1
    lengths = np.minimum(lengths, sizes)
    candidates = _sharing_pairs([x[:k] for x, k in zip(sets, lengths.tolist(), strict=True)])
    if candidates.size == 0:
        return similar
    small = np.minimum(sizes[candidates[:, 0]], sizes[candidates[:, 1]])
    large = np.maximum(sizes[candidates[:, 0]], sizes[candidates[:, 1]])
    candidates = candidates[small >= JACCARD_THRESHOLD * large]
    if candidates.size == 0:
        return similar
    if len(candidates) > _PAIRWISE_LIMIT:
        counts = _sharing_counts(sets)
        shared = counts[candidates[:, 0], candidates[:, 1]]
    else:
        shared = np.fromiter(
            (
                np.intersect1d(sets[j], sets[i], assume_unique=True).size
                for j, i in candidates.tolist()
            ),
            np.int64,
            len(candidates),
        )
    union = sizes[candidates[:, 0]] + sizes[candidates[:, 1]] - shared
    ok = shared >= JACCARD_THRESHOLD * union
    similar[candidates[ok, 0], candidates[ok, 1]] = True
    return similar


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
    pairs = _pairs_in_runs(*_runs(sets))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.unique(pairs, axis=0) if pairs.size else pairs


def _sharing_counts(sets: Sequence[U64Array]) -> npt.NDArray[np.int64]:
    """``counts[j, i]``: elements shared by sets ``j`` and ``i``."""
    n = len(sets)
    counts = np.zeros((n, n), dtype=np.int64)
    pairs = _pairs_in_runs(*_runs(sets))
    np.add.at(counts, (pairs[:, 0], pairs[:, 1]), 1)
    return counts


def _short_text_id(ids: U64Array) -> int:
    """One shingle id for a text shorter than the shingle width (bit 63 set)."""
    value = len(ids)
    for word in ids.tolist():
        value = (value * 0x100000001B3 + int(word)) & ((1 << 43) - 1)
    return value | (1 << 63)
