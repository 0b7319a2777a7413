"""Near-duplicate hits: the same or nearly the same text earlier in one ranked list.

Two hits are duplicates when their normalised texts (case-folded, whitespace-separated words)
are equal, or when the Jaccard similarity of their sets of word 3-shingles is at least 0.9 (a
text of fewer than three words is one shingle of all its words). Each hit points to the
earliest earlier hit it duplicates.

Words are found and hashed with array operations over the code points of the case-folded
texts (``str.casefold``, then the whitespace of ``str.split``), so the words are exactly those
of ``text.casefold().split()``, whatever the script. A word's id is a 64-bit polynomial hash
of its code points (with its length); a shingle's id mixes the ids of its three words into
43 bits. Equal texts are confirmed by comparing their words, so "same normalised text" is
exact; two different shingles sharing an id is possible in principle and vanishingly rare in
practice (it can only add one shared shingle to a Jaccard similarity).

Whole runs are handled at once (:meth:`DuplicateFinder.duplicates_in_lists`): one sort over
all the lists finds those where two hits share a text hash or an element of their prefix
filters, and only those lists are then examined pair by pair.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["JACCARD_THRESHOLD", "DuplicateFinder"]

JACCARD_THRESHOLD = 0.9
_WIDTH = 3
# Odd multipliers: multiplication by them is a bijection on 64-bit integers.
_BASE = np.uint64(0x100000001B3)
_MIX_1 = np.uint64(0x9E3779B97F4A7C15)
_MIX_2 = np.uint64(0xC2B2AE3D27D4EB4F)
_MIX_3 = np.uint64(0xBF58476D1CE4E5B9)
# A shingle id has 51 bits: bit 50 marks a short text, bits 43..49 hold the order key (rarer
# first, see _build), bits 0..42 the hash. Sorting (span << 51 | id) sorts every span's ids in
# one pass, for up to 2**13 spans at a time.
_ID_BITS = 51
_HASH_BITS = 43
_ID_MASK = np.uint64((1 << _ID_BITS) - 1)
_SHORT_BIT = np.uint64(1 << (_ID_BITS - 1))
_KEY_MAX = np.uint64((1 << (_ID_BITS - 1 - _HASH_BITS)) - 1)
_SPANS_PER_SORT = 1 << (64 - _ID_BITS)
_SKETCH_BITS = 20
_SKETCH_MASK = np.uint64((1 << _SKETCH_BITS) - 1)
# Spans are hashed in batches of about this many code points (bounds the temporary arrays).
_BATCH_CHARS = 1 << 22
# Above this many candidate pairs, counting all shared elements at once beats pair by pair.
_PAIRWISE_LIMIT = 24

# The whitespace of str.split() (str.isspace) besides the ASCII characters 9-13 and 28-32; a
# test checks this list against every code point.
_OTHER_WHITESPACE = np.array(
    [0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000],
    dtype=np.uint32,
)

U64Array = npt.NDArray[np.uint64]
IntArray = npt.NDArray[np.int64]


class DuplicateFinder:
    """Finds duplicate hits; shingle sets are computed once per distinct span and cached.

    Args:
        texts: Document texts, indexed by document code.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts
        # Span -> (hash of its words, 0 when it has none; its shingle ids; their prefix).
        self._cache: dict[tuple[int, int, int], tuple[int, U64Array, U64Array]] = {}
        # Shingle counts of the first build, by hash bucket: the order key of every later one.
        self._frequency: npt.NDArray[np.uint8] | None = None

    def _build(self, keys: Sequence[tuple[int, int, int]]) -> None:
        """Shingle sets of many spans at once (array operations over all their text)."""
        texts = self._texts
        pieces = [texts[d][s:e].casefold() for d, s, e in keys]
        ids, counts = _word_ids(pieces)
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        # 3-shingles that start at least three words before their span's end.
        span_of = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
        position = np.arange(ids.size, dtype=np.int64) - offsets[span_of]
        starts = np.flatnonzero(position <= counts[span_of] - _WIDTH)
        a, b, c = ids[starts], ids[starts + 1], ids[starts + 2]
        hashes = _finalize(((a * _MIX_1 + b) * _MIX_2) ^ (c * _MIX_3)) >> np.uint64(64 - _HASH_BITS)
        # Prefix filtering is correct with any fixed order of the ids and fast when rare
        # shingles come first: the order key is how often the shingle's hash bucket occurs in
        # the first build (capped), fixed from then on so that every cached set agrees.
        buckets = (hashes & _SKETCH_MASK).astype(np.intp)
        if self._frequency is None:
            counted = np.bincount(buckets, minlength=1 << _SKETCH_BITS)
            self._frequency = np.minimum(counted, int(_KEY_MAX)).astype(np.uint8)
        order_key = self._frequency[buckets].astype(np.uint64)
        shingles = (order_key << np.uint64(_HASH_BITS)) | hashes
        owners = span_of[starts]
        short = np.flatnonzero((counts > 0) & (counts < _WIDTH))
        if short.size:
            extra = [_short_text_id(ids[offsets[i] : offsets[i + 1]]) for i in short.tolist()]
            shingles = np.concatenate([shingles, np.asarray(extra, dtype=np.uint64)])
            owners = np.concatenate([owners, short])
        sets = _sorted_sets(shingles, owners, len(keys))
        # A hash of each span's word sequence (position-dependent word ids, summed), odd so
        # that 0 means "no words".
        positioned = np.zeros(ids.size + 1, dtype=np.uint64)
        positioned[1:] = _finalize(ids + position.astype(np.uint64) * _MIX_3)
        np.cumsum(positioned, out=positioned)
        text_hashes = positioned[offsets[1:]] - positioned[offsets[:-1]]
        text_hashes = _finalize(text_hashes + counts.astype(np.uint64) * _MIX_1) | np.uint64(1)
        text_hashes[counts == 0] = 0
        sizes = np.fromiter(map(len, sets), np.int64, len(sets))
        cache = self._cache
        for key, text_hash, shingle_set, length in zip(
            keys, text_hashes.tolist(), sets, _prefix_lengths(sizes).tolist(), strict=True
        ):
            cache[key] = (text_hash, shingle_set, shingle_set[:length])

    def _words(self, key: tuple[int, int, int]) -> list[str]:
        doc, start, end = key
        return self._texts[doc][start:end].casefold().split()

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
        bounds = np.asarray([0, docs.size], dtype=np.int64)
        return self.duplicates_in_lists(docs, starts, ends, bounds)[0]

    def duplicates_in_lists(
        self,
        docs: npt.NDArray[np.int64],
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
        bounds: npt.NDArray[np.int64],
    ) -> list[list[int | None]]:
        """:meth:`duplicate_of` for many ranked lists at once.

        Args:
            docs: Document code of every hit, the lists one after the other.
            starts: Start offset of every hit.
            ends: End offset of every hit.
            bounds: List ``q`` is ``hits[bounds[q] : bounds[q + 1]]``.

        Returns:
            Per list, per hit, the 1-based rank of the hit it duplicates, or ``None``.
        """
        keys = list(zip(docs.tolist(), starts.tolist(), ends.tolist(), strict=True))
        missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            self._build(missing)
        entries = [self._cache[k] for k in keys]
        edges = bounds.tolist()
        results: list[list[int | None]] = [[None] * (b - a) for a, b in itertools.pairwise(edges)]
        # Only lists where two hits share their text hash or an element of their prefixes can
        # hold a duplicate (prefix filtering, see _similar_pairs): find them for all lists at
        # once, then look at those alone.
        for number in _lists_to_check(entries, np.asarray(bounds, dtype=np.int64)):
            first, last = edges[number], edges[number + 1]
            results[number] = self._list_duplicates(keys[first:last], entries[first:last])
        return results

    def _list_duplicates(
        self,
        keys: Sequence[tuple[int, int, int]],
        entries: Sequence[tuple[int, U64Array, U64Array]],
    ) -> list[int | None]:
        result: list[int | None] = [None] * len(keys)
        # Hits with equal text hashes, confirmed on their words.
        groups: dict[int, list[int]] = {}
        for index, (text_hash, _, _) in enumerate(entries):
            if not text_hash:
                continue
            earlier = groups.setdefault(text_hash, [])
            for first in earlier:
                if keys[first] == keys[index] or self._words(keys[first]) == self._words(
                    keys[index]
                ):
                    result[index] = first + 1
                    break
            else:
                earlier.append(index)
        similar = _similar_pairs([e[1] for e in entries])
        for second in np.flatnonzero(similar.any(axis=1)).tolist():
            first = int(np.argmax(similar[second])) + 1
            current = result[second]
            result[second] = first if current is None else min(current, first)
        return result


def _prefix_lengths(sizes: IntArray) -> IntArray:
    """How many of a set's first elements another set must share for Jaccard >= t."""
    lengths: IntArray = sizes - np.ceil(JACCARD_THRESHOLD * sizes - 1e-9).astype(np.int64) + 1
    return np.minimum(lengths, sizes)


def _lists_to_check(
    entries: Sequence[tuple[int, U64Array, U64Array]], bounds: IntArray
) -> list[int]:
    """Lists in which two hits share a nonzero text hash or an element of their prefixes."""
    n_lists = bounds.size - 1
    counts = np.diff(bounds)
    list_of_hit = np.repeat(np.arange(n_lists, dtype=np.int64), counts)
    text_hashes = np.fromiter((e[0] for e in entries), np.uint64, len(entries))
    prefixes = [e[2] for e in entries]
    lengths = np.fromiter(map(len, prefixes), np.int64, len(prefixes))
    elements = np.concatenate(prefixes) if lengths.sum() else np.zeros(0, np.uint64)
    flagged: set[int] = set()
    # (list << 51 | value): equal keys are equal values in one list; 2**13 lists at a time.
    for first in range(0, n_lists, _SPANS_PER_SORT):
        last = min(n_lists, first + _SPANS_PER_SORT)
        hits = slice(int(bounds[first]), int(bounds[last]))
        local = (list_of_hit[hits] - first).astype(np.uint64) << np.uint64(_ID_BITS)
        texts = text_hashes[hits]
        named = texts != 0
        # Text hashes cut to 51 bits: a clash only costs a closer look.
        text_keys = local[named] | (texts[named] >> np.uint64(64 - _ID_BITS))
        element_from = int(lengths[: hits.start].sum())
        element_to = element_from + int(lengths[hits].sum())
        element_keys = np.repeat(local, lengths[hits]) | elements[element_from:element_to]
        for keyed in (text_keys, element_keys):
            ordered = np.sort(keyed)
            repeated = ordered[1:][ordered[1:] == ordered[:-1]]
            flagged.update((first + (repeated >> np.uint64(_ID_BITS)).astype(np.int64)).tolist())
    return sorted(flagged)


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
    lengths = _prefix_lengths(sizes)
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


def _finalize(x: U64Array) -> U64Array:
    """A bijective 64-bit mix that spreads every input bit over every output bit."""
    x = x ^ (x >> np.uint64(30))
    x *= _MIX_3
    x ^= x >> np.uint64(27)
    x *= _MIX_2
    x ^= x >> np.uint64(31)
    return x


def _whitespace(codes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.bool_]:
    """Which code points ``str.split()`` splits on."""
    space: npt.NDArray[np.bool_] = codes == 32
    # Unsigned subtraction wraps code points below the range to large values.
    space |= (codes - codes.dtype.type(9)) <= 4
    space |= (codes - codes.dtype.type(28)) <= 3
    high = np.flatnonzero(codes >= 0x85)
    if high.size:
        space[high] = np.isin(codes[high], _OTHER_WHITESPACE)
    return space


def _batch_word_ids(pieces: Sequence[str]) -> tuple[U64Array, IntArray]:
    """Word ids of the words of some texts, in order, and each text's word count."""
    # Whitespace around and between the texts: every word then starts and ends inside one text.
    joined = " " + " ".join(pieces) + " "
    codes: npt.NDArray[np.unsignedinteger] = (
        np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        if joined.isascii()
        else np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    )
    n = codes.size
    in_word = ~_whitespace(codes)
    edges = np.flatnonzero(in_word[1:] != in_word[:-1]) + 1
    starts, ends = edges[0::2], edges[1::2]
    lengths = ends - starts
    # Position-independent polynomial hashes from prefix sums: with p[i] = sum of c[k] B^k
    # for k < i, (p[e] - p[s]) B^(n - s) B^-n is the sum of c[k] B^(k - s) over the word, the
    # same wherever the word is and whatever the batch (uint64 arithmetic wraps around modulo
    # 2**64, where B, odd, has an inverse).
    powers = np.empty(n + 1, dtype=np.uint64)
    powers[0] = 1
    powers[1:] = _BASE
    np.multiply.accumulate(powers, out=powers)
    prefix = np.empty(n + 1, dtype=np.uint64)
    prefix[0] = 0
    np.multiply(codes, powers[:n], out=prefix[1:])
    np.cumsum(prefix[1:], out=prefix[1:])
    hashes = (prefix[ends] - prefix[starts]) * powers[n - starts]
    hashes *= np.uint64(pow(int(_BASE), -n, 1 << 64))
    # The length in too: a code point 0 adds nothing to the sum.
    ids = _finalize(hashes + lengths.astype(np.uint64) * _MIX_1)
    sizes = np.fromiter(map(len, pieces), np.int64, len(pieces))
    bounds = np.empty(len(pieces) + 1, dtype=np.int64)
    bounds[0] = 1
    np.cumsum(sizes + 1, out=bounds[1:])
    counts = np.diff(np.searchsorted(starts, bounds))
    return ids, counts.astype(np.int64)


def _word_ids(pieces: Sequence[str]) -> tuple[U64Array, IntArray]:
    """Word ids of the words of many texts, in order, and each text's word count."""
    sizes = np.fromiter(map(len, pieces), np.int64, len(pieces))
    ends = np.cumsum(sizes + 1)
    cuts = np.searchsorted(ends, np.arange(_BATCH_CHARS, int(ends[-1]), _BATCH_CHARS))
    bounds = [0, *np.unique(cuts[cuts > 0]).tolist(), len(pieces)]
    parts = [_batch_word_ids(pieces[i:j]) for i, j in itertools.pairwise(bounds) if j > i]
    if len(parts) == 1:
        return parts[0]
    ids, counts = zip(*parts, strict=True)
    return np.concatenate(ids), np.concatenate(counts)


def _sorted_sets(shingles: U64Array, owners: IntArray, n_spans: int) -> list[U64Array]:
    """Each span's shingle ids, ascending, without repetitions."""
    sets: list[U64Array] = []
    for first in range(0, n_spans, _SPANS_PER_SORT):
        last = min(n_spans, first + _SPANS_PER_SORT)
        mine = (owners >= first) & (owners < last)
        local = (owners[mine] - first).astype(np.uint64)
        keys = np.sort((local << np.uint64(_ID_BITS)) | shingles[mine])
        keys = keys[np.r_[True, keys[1:] != keys[:-1]][: keys.size]]
        counts = np.bincount((keys >> np.uint64(_ID_BITS)).astype(np.int64), minlength=last - first)
        sets.extend(np.split(keys & _ID_MASK, np.cumsum(counts)[:-1]))
    return sets


def _short_text_id(ids: U64Array) -> int:
    """One shingle id for a text shorter than the shingle width (the short-text bit set)."""
    value = len(ids)
    for word in ids.tolist():
        value = (value * 0x100000001B3 + int(word)) & ((1 << 64) - 1)
    return (value >> (64 - _HASH_BITS)) | int(_SHORT_BIT)
