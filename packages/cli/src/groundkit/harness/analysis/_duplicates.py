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

Whole runs are handled at once (:meth:`DuplicateFinder.duplicates_in_lists`), and each
signature is computed once per distinct span (a chunk retrieved by 200 queries is shingled
once, and cached for the next stage). The spans of a run are grouped into classes of equal
normalised text, the pairs of classes with Jaccard >= 0.9 are found once for the whole run
(prefix filtering, a sketch bound, then exact counts), and each hit then looks up the first
hit of each class related to its own in its list: the work grows with the distinct spans and
the hits, not with pairs of hits in each list.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from groundkit.harness._cores import available_cores
from groundkit.harness._forked import plan_parts, run_in_parts
from groundkit.harness._unique import sorted_unique
from groundkit.harness.analysis._word_hashes import MIX_1, MIX_2, MIX_3, batch_word_ids, finalize

__all__ = ["JACCARD_THRESHOLD", "DuplicateFinder"]

JACCARD_THRESHOLD = 0.9
_WIDTH = 3
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
# Spans are hashed in batches of about this many code points: the temporary arrays take
# about 40 bytes a code point (a 2**22 batch added 130 MiB to a SciFact run's peak memory),
# and smaller batches stay in the processor's caches (faster, too).
_BATCH_CHARS = 1 << 20
# Spans are shingled about this many code points at a time (the first _BATCH_CHARS still make
# the order key table): a 2**20 batch added 40 MiB to a SciFact run's peak memory.
_HASH_CHARS = 1 << 18
# Where processes cannot be forked (macOS, Windows), from this many characters the batches
# are shingled on a thread per core: their array operations release the interpreter lock,
# and each span's set depends only on its own text and the order key table, so the sets are
# the same whatever thread made them. Below it the threads do not pay: on SciFact's hits
# (7.8 M characters, 2 cores) they took 1.80-1.96 s a run against 1.74-1.84 s serially, and
# added 20 MiB to the peak (two batches' temporaries at once, and a malloc arena per
# thread); on 82 M characters they save 10%.
_THREADED_CHARS = 1 << 24
# From this many characters of spans (where processes can be forked) the spans are shingled
# by forked workers, in parts of at least _FORKED_PART_CHARS: the shingling holds the
# interpreter lock for much of its time, so processes gain where threads did not (2 cores:
# SciFact's hits 0.16 -> 0.12 s; 100,000 documents' hits 1.51 s on threads -> 1.36 s).
_FORKED_CHARS = 1 << 22
_FORKED_PART_CHARS = 1 << 21
# Candidate pairs and related hits are looked up in batches of about this many (memory bound).
_BATCH_SLOTS = 1 << 20
# Buckets of the sketches that rule out most candidate pairs before they are counted exactly.
_BUCKETS = 512
# Sketches are counted this many sets at a time (memory bound).
_SKETCH_SETS = 256

U64Array = npt.NDArray[np.uint64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


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
        """Shingle sets of many spans, about ``_HASH_CHARS`` characters of them at a time.

        Small batches keep the arrays small (memory, and speed: they stay in the processor's
        caches). The order key table comes from the spans of the first ``_BATCH_CHARS``
        characters, counted over their smaller batches: the same table, whatever the batch.
        From ``_FORKED_CHARS`` characters the spans are cut into contiguous parts shingled by
        forked workers beside this process (:func:`~groundkit.harness._forked.run_in_parts`):
        each span's set depends only on its text and the order key table, so the sets are the
        same whatever process made them.
        """
        sizes = np.fromiter((e - s for _, s, e in keys), np.int64, len(keys))
        if self._frequency is None and keys:
            first, last = _batches(sizes + 1, _BATCH_CHARS)[0]
            counted = np.zeros(1 << _SKETCH_BITS, dtype=np.int64)
            for a, b in _batches(sizes[first:last] + 1, _HASH_CHARS):
                hashes = _Shingled.of(self._texts, keys[first + a : first + b]).hashes
                counted += np.bincount(
                    (hashes & _SKETCH_MASK).astype(np.intp), minlength=1 << _SKETCH_BITS
                )
            self._frequency = np.minimum(counted, int(_KEY_MAX)).astype(np.uint8)
        parts = plan_parts(
            sizes + 1, available_cores(), min_chars=_FORKED_CHARS, part_chars=_FORKED_PART_CHARS
        )
        if len(parts) > 1:

            def part(first: int, last: int) -> list[tuple[int, int, _Built]]:
                edges = _batches(sizes[first:last] + 1, _HASH_CHARS)
                return [
                    (first + a, first + b, self._shingle(keys[first + a : first + b]))
                    for a, b in edges
                ]

            for batches in run_in_parts(part, parts):
                for a, b, batch in batches:
                    self._store(keys[a:b], batch)
            return
        _each_batch(
            lambda edge: self._store(
                keys[edge[0] : edge[1]], self._shingle(keys[edge[0] : edge[1]])
            ),
            _batches(sizes + 1, _HASH_CHARS),
            threaded=int(sizes.sum()) >= _THREADED_CHARS,
        )

    def _shingle(self, keys: Sequence[tuple[int, int, int]]) -> _Built:
        """Shingle sets of many spans at once (array operations over all their text)."""
        shingled = _Shingled.of(self._texts, keys)
        ids, counts, offsets = shingled.ids, shingled.counts, shingled.offsets
        position, starts, hashes = shingled.position, shingled.starts, shingled.hashes
        span_of = shingled.span_of
        # Prefix filtering is correct with any fixed order of the ids and fast when rare
        # shingles come first: the order key is how often the shingle's hash bucket occurs in
        # the first build (capped), fixed from then on so that every cached set agrees.
        buckets = (hashes & _SKETCH_MASK).astype(np.intp)
        assert self._frequency is not None  # set by _build before any batch
        order_key = self._frequency[buckets].astype(np.uint64)
        shingles = (order_key << np.uint64(_HASH_BITS)) | hashes
        owners = span_of[starts]
        short = np.flatnonzero((counts > 0) & (counts < _WIDTH))
        if short.size:
            extra = [_short_text_id(ids[offsets[i] : offsets[i + 1]]) for i in short.tolist()]
            # A short text has no other shingle: inserted in place, the owners stay ascending.
            where = np.searchsorted(owners, short)
            shingles = np.insert(shingles, where, np.asarray(extra, dtype=np.uint64))
            owners = np.insert(owners, where, short)
        flat, sizes = _sorted_sets(shingles, owners, len(keys))
        # A hash of each span's word sequence (position-dependent word ids, summed), odd so
        # that 0 means "no words".
        positioned = np.zeros(ids.size + 1, dtype=np.uint64)
        positioned[1:] = finalize(ids + position.astype(np.uint64) * MIX_3)
        np.cumsum(positioned, out=positioned)
        text_hashes = positioned[offsets[1:]] - positioned[offsets[:-1]]
        text_hashes = finalize(text_hashes + counts.astype(np.uint64) * MIX_1) | np.uint64(1)
        text_hashes[counts == 0] = 0
        return _Built(text_hashes, flat, sizes)

    def _store(self, keys: Sequence[tuple[int, int, int]], built: _Built) -> None:
        """Cache each span's text hash, shingle set and prefix (views of the batch's arrays)."""
        sets = np.split(built.shingles, np.cumsum(built.sizes)[:-1]) if keys else []
        cache = self._cache
        for key, text_hash, shingle_set, length in zip(
            keys,
            built.text_hashes.tolist(),
            sets,
            _prefix_lengths(built.sizes).tolist(),
            strict=True,
        ):
            cache[key] = (text_hash, shingle_set, shingle_set[:length])

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
        # The distinct spans (sorted), and each hit's.
        rows = np.stack([docs, starts, ends], axis=1).astype(np.int64)
        order = np.lexsort((rows[:, 2], rows[:, 1], rows[:, 0]))
        ordered = rows[order]
        first = np.r_[True, (ordered[1:] != ordered[:-1]).any(axis=1)] if order.size else order
        span_of_hit = np.empty(order.size, dtype=np.int64)
        span_of_hit[order] = np.cumsum(first) - 1
        spans: list[tuple[int, int, int]] = list(map(tuple, ordered[first.astype(bool)].tolist()))
        missing = [key for key in spans if key not in self._cache]
        if missing:
            self._build(missing)
        entries = [self._cache[key] for key in spans]
        class_of_span, sets = self._classes(spans, entries)
        indptr, neighbours = _relation(sets)
        ranks = _earliest_related(
            class_of_span[span_of_hit], np.asarray(bounds, dtype=np.int64), indptr, neighbours
        ).tolist()
        edges = bounds.tolist()
        return [[rank or None for rank in ranks[a:b]] for a, b in itertools.pairwise(edges)]

    def _classes(
        self,
        keys: Sequence[tuple[int, int, int]],
        entries: Sequence[tuple[int, U64Array, U64Array]],
    ) -> tuple[IntArray, list[U64Array]]:
        """One class per distinct normalised text: each span's class, each class's shingle set.

        Spans of equal text hashes are compared on their words, so a class is exactly one
        normalised text (all the spans without words share a class with an empty set).
        """
        hashes = np.fromiter((e[0] for e in entries), np.uint64, len(entries))
        order = np.argsort(hashes, kind="stable")
        ordered = hashes[order]
        first_of_run = np.r_[True, ordered[1:] != ordered[:-1]] if ordered.size else ordered
        run = np.cumsum(first_of_run) - 1
        labels = run.copy()
        leaders = order[np.flatnonzero(first_of_run)].tolist()
        # Spans sharing a text hash with an earlier one (copies, or in principle a collision).
        others: dict[int, list[tuple[int, int]]] = {}
        for position in np.flatnonzero(~first_of_run).tolist():
            span, group = int(order[position]), int(run[position])
            leader = leaders[group]
            if entries[leader][0] == 0 or self._same_words(keys[leader], keys[span]):
                continue
            for other, label in others.setdefault(group, []):
                if self._same_words(keys[other], keys[span]):
                    labels[position] = label
                    break
            else:
                labels[position] = len(leaders)
                others[group].append((span, len(leaders)))
                leaders.append(span)
        class_of_span = np.empty(len(entries), dtype=np.int64)
        class_of_span[order] = labels
        return class_of_span, [entries[span][1] for span in leaders]

    def _same_words(self, first: tuple[int, int, int], second: tuple[int, int, int]) -> bool:
        if first == second:
            return True
        doc, start, end = first
        words = self._texts[doc][start:end].casefold().split()
        doc, start, end = second
        return words == self._texts[doc][start:end].casefold().split()


class _Built(NamedTuple):
    """The shingle sets of a batch of spans, as one array (sent back whole by a worker)."""

    text_hashes: U64Array  # each span's hash of its words (0: no words)
    shingles: U64Array  # every span's sorted set, one after the other
    sizes: IntArray  # each span's set size


class _Shingled(NamedTuple):
    """The words and 3-shingle hashes of some spans, computed together."""

    ids: U64Array  # every word's id, span after span
    counts: IntArray  # words per span
    offsets: IntArray  # span i's words: ids[offsets[i] : offsets[i + 1]]
    span_of: IntArray  # each word's span
    position: IntArray  # each word's position in its span
    starts: IntArray  # the words that start a 3-shingle
    hashes: U64Array  # the hash of each of those shingles (_HASH_BITS bits)

    @classmethod
    def of(cls, texts: Sequence[str], keys: Sequence[tuple[int, int, int]]) -> _Shingled:
        pieces = [texts[d][s:e].casefold() for d, s, e in keys]
        ids, counts = _word_ids(pieces)
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        # 3-shingles that start at least three words before their span's end.
        span_of = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
        position = np.arange(ids.size, dtype=np.int64) - offsets[span_of]
        starts = np.flatnonzero(position <= counts[span_of] - _WIDTH)
        a, b, c = ids[starts], ids[starts + 1], ids[starts + 2]
        hashes = finalize(((a * MIX_1 + b) * MIX_2) ^ (c * MIX_3)) >> np.uint64(64 - _HASH_BITS)
        return cls(ids, counts, offsets, span_of, position, starts, hashes)


def _prefix_lengths(sizes: IntArray) -> IntArray:
    """How many of a set's first elements another set must share for Jaccard >= t."""
    lengths: IntArray = sizes - np.ceil(JACCARD_THRESHOLD * sizes - 1e-9).astype(np.int64) + 1
    return np.minimum(lengths, sizes)


def _relation(sets: Sequence[U64Array]) -> tuple[IntArray, IntArray]:
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
    lengths = _prefix_lengths(sizes).tolist()
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


def _batches(weights: IntArray, limit: int) -> list[tuple[int, int]]:
    """Consecutive ranges of items whose weights sum to about ``limit`` (at least one item)."""
    total = np.cumsum(weights)
    cuts = np.searchsorted(total, np.arange(limit, int(total[-1]) if total.size else 0, limit))
    edges = [0, *np.unique(cuts[cuts > 0]).tolist(), weights.size]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def _each_batch(
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
    _each_batch(test, _batches(np.full(len(pairs), _BUCKETS, dtype=np.int64), _BATCH_SLOTS))
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
    for group in range(0, owners.size, _SPANS_PER_SORT):
        mine = owners[group : group + _SPANS_PER_SORT]
        local, slots = _expand(sizes[mine], offsets[mine])
        keys = (local.astype(np.uint64) << np.uint64(_ID_BITS)) | flat[slots]
        first, last = int(owner_start[group]), int(owner_start[group + mine.size])
        local_of_pair = np.searchsorted(mine, large[first:last]).astype(np.uint64)
        for a, b in _batches(sizes[small[first:last]], _BATCH_SLOTS):
            rows, slots = _expand(
                sizes[small[first + a : first + b]], offsets[small[first + a : first + b]]
            )
            probe = (local_of_pair[a:b][rows] << np.uint64(_ID_BITS)) | flat[slots]
            at = np.minimum(np.searchsorted(keys, probe), keys.size - 1)
            found = (keys[at] == probe).astype(np.int64)
            shared[order[first + a : first + b]] = np.bincount(rows, weights=found, minlength=b - a)
    return shared


def _earliest_related(
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
    for first, last in _batches(degrees, _BATCH_SLOTS):
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


def _word_ids(pieces: Sequence[str]) -> tuple[U64Array, IntArray]:
    """Word ids of the words of many texts, in order, and each text's word count."""
    sizes = np.fromiter(map(len, pieces), np.int64, len(pieces))
    ends = np.cumsum(sizes + 1)
    cuts = np.searchsorted(ends, np.arange(_BATCH_CHARS, int(ends[-1]), _BATCH_CHARS))
    bounds = [0, *np.unique(cuts[cuts > 0]).tolist(), len(pieces)]
    parts = [batch_word_ids(pieces[i:j]) for i, j in itertools.pairwise(bounds) if j > i]
    if len(parts) == 1:
        return parts[0]
    ids, counts = zip(*parts, strict=True)
    return np.concatenate(ids), np.concatenate(counts)


def _sorted_sets(shingles: U64Array, owners: IntArray, n_spans: int) -> tuple[U64Array, IntArray]:
    """Each span's shingle ids, ascending, without repetitions (``owners`` ascending).

    Returns:
        The sets one after the other, and each set's size.
    """
    flats: list[U64Array] = []
    sizes: list[IntArray] = []
    # Contiguous slices of up to 2**13 spans: each element is sorted once, whatever the count.
    cuts = np.searchsorted(owners, np.arange(0, n_spans + _SPANS_PER_SORT, _SPANS_PER_SORT))
    for group, first in enumerate(range(0, n_spans, _SPANS_PER_SORT)):
        last = min(n_spans, first + _SPANS_PER_SORT)
        lo, hi = int(cuts[group]), int(cuts[group + 1])
        local = (owners[lo:hi] - first).astype(np.uint64)
        keys = np.sort((local << np.uint64(_ID_BITS)) | shingles[lo:hi])
        keys = keys[np.r_[True, keys[1:] != keys[:-1]][: keys.size]]
        sizes.append(
            np.bincount((keys >> np.uint64(_ID_BITS)).astype(np.int64), minlength=last - first)
        )
        flats.append(keys & _ID_MASK)
    if len(flats) == 1:
        return flats[0], sizes[0].astype(np.int64)
    if not flats:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    return np.concatenate(flats), np.concatenate(sizes).astype(np.int64)


def _short_text_id(ids: U64Array) -> int:
    """One shingle id for a text shorter than the shingle width (the short-text bit set)."""
    value = len(ids)
    for word in ids.tolist():
        value = (value * 0x100000001B3 + int(word)) & ((1 << 64) - 1)
    return (value >> (64 - _HASH_BITS)) | int(_SHORT_BIT)
