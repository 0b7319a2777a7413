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
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from groundkit.harness._cores import available_cores
from groundkit.harness._forked import Background, can_fork, plan_parts, run_in_parts
from groundkit.harness.analysis._similar_sets import (
    ELEMENT_BITS,
    JACCARD_THRESHOLD,
    batches,
    each_batch,
    earliest_related,
    prefix_lengths,
    relation,
)
from groundkit.harness.analysis._word_hashes import MIX_1, MIX_2, MIX_3, batch_word_ids, finalize

__all__ = ["JACCARD_THRESHOLD", "DuplicateFinder"]

_WIDTH = 3
# A shingle id has 51 bits: bit 50 marks a short text, bits 43..49 hold the order key (rarer
# first, see _build), bits 0..42 the hash. Sorting (span << 51 | id) sorts every span's ids in
# one pass, for up to 2**13 spans at a time.
_ID_BITS = ELEMENT_BITS
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
# interpreter lock for much of its time, so processes gain where threads do not, but only
# on large runs (2 cores, alternated: SciFact's 7.8 M characters of hits 0.29 -> 0.23 s for
# 0.29 -> 0.35 s of processor time, and no gain over a whole SciFact run, which took 0.08 s
# more processor time; 124 M characters 11.1 -> 10.4 s).
_FORKED_CHARS = 1 << 25
_FORKED_PART_CHARS = 1 << 23
# Spans shingled beside the run (prefetch_in_background) from this many characters: on 2
# cores, SciFact's 7.8 M characters of documents shingled during the BM25 analysis took
# 0.50 -> 0.32 s for both together; a whole SciFact run, alternated, 0.09-0.10 s less wall
# time for 0.12-0.14 s more processor time (pages copied on write while both run).
_BACKGROUND_CHARS = 1 << 21

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
        # Spans being shingled by a forked worker (prefetch_in_background), and the worker.
        self._background: (
            tuple[
                list[tuple[int, int, int]],
                Background[tuple[npt.NDArray[np.uint8], list[tuple[int, int, _Built]]]],
            ]
            | None
        ) = None

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
        self._receive()
        sizes = np.fromiter((e - s for _, s, e in keys), np.int64, len(keys))
        self._count_order_keys(keys, sizes)
        parts = plan_parts(
            sizes + 1, available_cores(), min_chars=_FORKED_CHARS, part_chars=_FORKED_PART_CHARS
        )
        if len(parts) > 1:

            def part(first: int, last: int) -> list[tuple[int, int, _Built]]:
                edges = batches(sizes[first:last] + 1, _HASH_CHARS)
                return [
                    (first + a, first + b, self._shingle(keys[first + a : first + b]))
                    for a, b in edges
                ]

            for built in run_in_parts(part, parts):
                for a, b, batch in built:
                    self._store(keys[a:b], batch)
            return
        each_batch(
            lambda edge: self._store(
                keys[edge[0] : edge[1]], self._shingle(keys[edge[0] : edge[1]])
            ),
            batches(sizes + 1, _HASH_CHARS),
            threaded=int(sizes.sum()) >= _THREADED_CHARS,
        )

    def _count_order_keys(self, keys: Sequence[tuple[int, int, int]], sizes: IntArray) -> None:
        """Make the order key table from the first build's first spans (once)."""
        if self._frequency is not None or not keys:
            return
        first, last = batches(sizes + 1, _BATCH_CHARS)[0]
        counted = np.zeros(1 << _SKETCH_BITS, dtype=np.int64)
        for a, b in batches(sizes[first:last] + 1, _HASH_CHARS):
            hashes = _Shingled.of(self._texts, keys[first + a : first + b]).hashes
            counted += np.bincount(
                (hashes & _SKETCH_MASK).astype(np.intp), minlength=1 << _SKETCH_BITS
            )
        self._frequency = np.minimum(counted, int(_KEY_MAX)).astype(np.uint8)

    def prefetch_in_background(
        self,
        docs: npt.NDArray[np.int64],
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
    ) -> bool:
        """Start shingling spans that the hits are expected to be, beside this process.

        A forked worker builds their sets while the run goes on (indexing, searching); the
        first call that needs sets takes them (:meth:`_receive`). Only with two cores or more,
        where processes can be forked, for at least :data:`_BACKGROUND_CHARS` characters not
        built yet, and one worker at a time. The sets are the ones this process would build
        (the same texts, the same order key table), so the answers never depend on it.

        Returns:
            Whether a worker was started.
        """
        if self._background is not None or available_cores() < 2 or not can_fork():
            return False
        keys = self._not_built(docs, starts, ends)
        if not keys or sum(end - start for _, start, end in keys) < _BACKGROUND_CHARS:
            return False
        self._background = (keys, Background(lambda: self._built_here(keys)))
        return True

    def _not_built(
        self,
        docs: npt.NDArray[np.int64],
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
    ) -> list[tuple[int, int, int]]:
        """The distinct spans, in first order, whose sets are not built yet."""
        spans = dict.fromkeys(zip(docs.tolist(), starts.tolist(), ends.tolist(), strict=True))
        return [key for key in spans if key not in self._cache]

    def _built_here(
        self, keys: Sequence[tuple[int, int, int]]
    ) -> tuple[npt.NDArray[np.uint8], list[tuple[int, int, _Built]]]:
        """The order key table and the sets of ``keys``, batch by batch, in this process."""
        sizes = np.fromiter((e - s for _, s, e in keys), np.int64, len(keys))
        self._count_order_keys(keys, sizes)
        assert self._frequency is not None  # keys is not empty
        edges = batches(sizes + 1, _HASH_CHARS)
        return self._frequency, [(a, b, self._shingle(keys[a:b])) for a, b in edges]

    def _receive(self) -> None:
        """Store the sets a background worker built (nothing when it failed: built here)."""
        if self._background is None:
            return
        (keys, background), self._background = self._background, None
        received = background.result()
        if received is None:
            return
        frequency, built = received
        if self._frequency is None:  # nothing was built here meanwhile (this comes first)
            self._frequency = frequency
        for a, b, batch in built:
            self._store(keys[a:b], batch)

    def close(self) -> None:
        """Stop a background worker whose sets were not taken (a run that ends early)."""
        if self._background is not None:
            self._background[1].cancel()
            self._background = None

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
            prefix_lengths(built.sizes).tolist(),
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
        self._receive()
        missing = self._not_built(docs, starts, ends)
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
        self._receive()
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
        indptr, neighbours = relation(sets)
        ranks = earliest_related(
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
