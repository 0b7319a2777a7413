"""The closest passage to a quote that was not found: a bounded, anchored similarity search.

Candidate windows of the quote's length are anchored on the quote's rarest words; each is
scored by the longest common subsequence of characters, ``2 * LCS / (len(window) +
len(quote))`` (the Indel similarity, what RapidFuzz calls ``ratio``), computed bit-parallel on
Python integers (Hyyrö's algorithm): about ``len(window) * len(quote) / 64`` word operations
per window.

The search is bounded whatever the document and the quote:

* anchors come from the quote's first and last 5,000 characters: 16 slices of 24 characters
  looked up verbatim (a copied-then-edited quote shares such stretches with its source; a
  slice found more than twice is ignored), then words: at most 16 of them (the longest) are
  counted in the document, the 4 rarest found anchor;
* at most 40 candidate windows are scored (evenly spread when nothing anchors);
* a quote longer than 2,000 characters is scored on its first and last 1,000 characters only
  (the window is still placed by the anchors and has the quote's full length);
* the passage is widened to whole words by at most 40 characters a side.

So the work is at most about 64 scans of the document (C ``str.find``/``str.count``) plus
40 x 2,000 x 2,000 / 64 word operations:
an absent quote in a 10 MB document is answered in well under 2 s. The passage found is the
best of those windows, not necessarily the best of the whole document.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["closest_window"]

_WORD = re.compile(r"\w+")
_MAX_SEEDS = 4
_MAX_CANDIDATES = 40
_MAX_ANCHOR_WORDS = 16
_MAX_SCORED = 2_000
_MAX_WIDEN = 40
_MAX_ANCHOR_SPAN = 10_000
_SLICE = 24
_MAX_SLICES = 16
_MAX_SLICE_HITS = 3


class _LcsScorer:
    """Similarity of texts to one fixed quote: ``2 * LCS / (len(text) + len(quote))``.

    The LCS length is computed with Hyyrö's bit-parallel recurrence (one machine word per 64
    quote characters, here one Python integer for the whole quote): for every character of the
    other text, ``V = (V + U) | (V - U)`` with ``U = V & match_mask[char]``; the LCS length is
    the number of zero bits of ``V``.
    """

    def __init__(self, quote: str) -> None:
        self.length = len(quote)
        self.full = (1 << self.length) - 1
        masks: dict[str, int] = {}
        for index, char in enumerate(quote):
            masks[char] = masks.get(char, 0) | (1 << index)
        self.masks = masks
        self.counts = Counter(quote)

    def lcs(self, other: str) -> int:
        """The length of the longest common subsequence of ``other`` and the quote."""
        masks = self.masks
        full = self.full
        row = full
        for char in other:
            matches = row & masks.get(char, 0)
            row = ((row + matches) | (row - matches)) & full
        return self.length - row.bit_count()

    def ratio(self, other: str, *, at_least: float = -1.0) -> float:
        """The similarity in [0, 1]; ``-1`` without computing it when it cannot beat ``at_least``.

        The shared character counts bound the LCS from above, which skips hopeless windows.
        """
        total = len(other) + self.length
        if total == 0:
            return 1.0
        shared = sum((Counter(other) & self.counts).values())
        if 2.0 * shared / total <= at_least:
            return -1.0
        return 2.0 * self.lcs(other) / total


class _BoundedScorer:
    """Similarity of windows of a text to a quote, on at most ``_MAX_SCORED`` of its characters.

    A quote up to that length is scored whole. A longer one is scored by its first and last
    ``_MAX_SCORED // 2`` characters against the same stretches of the window (the LCS
    lengths of both ends added), so scoring costs the same for a 3 KB and a 10 MB quote.

    Args:
        quote: The (normalised) quote.
        width: The windows' length: the quote's, or the whole text when that is shorter.
    """

    def __init__(self, quote: str, width: int) -> None:
        self.width = width
        half = _MAX_SCORED // 2
        self.parts: list[tuple[int, int, _LcsScorer]]
        if len(quote) <= _MAX_SCORED:
            self.parts = [(0, width, _LcsScorer(quote))]
        else:
            self.parts = [
                (0, min(half, width), _LcsScorer(quote[:half])),
                (max(width - half, 0), width, _LcsScorer(quote[-half:])),
            ]
        #: Characters compared so far (window characters times quote characters), for tests.
        self.work = 0

    def ratio(self, text: str, start: int, *, at_least: float = -1.0) -> float:
        """The similarity of the window at ``start``; ``-1`` when it cannot beat ``at_least``."""
        windows = [(text[start + begin : start + end], scorer) for begin, end, scorer in self.parts]
        total = sum(len(window) + scorer.length for window, scorer in windows)
        if total == 0:
            return 1.0
        shared = sum(sum((Counter(window) & scorer.counts).values()) for window, scorer in windows)
        if 2.0 * shared / total <= at_least:
            return -1.0
        self.work += sum(len(window) * scorer.length for window, scorer in windows)
        return 2.0 * sum(scorer.lcs(window) for window, scorer in windows) / total


def _word_offsets(quote: str) -> dict[str, int]:
    """The first position of each word in the quote's two ends (where anchors come from).

    The ends are the first and last ``_MAX_ANCHOR_SPAN // 2`` characters, or the whole quote
    when it is no longer than ``_MAX_ANCHOR_SPAN``.
    """
    half = _MAX_ANCHOR_SPAN // 2
    if len(quote) <= _MAX_ANCHOR_SPAN:
        stretches = [(0, quote)]
    else:
        stretches = [(0, quote[:half]), (len(quote) - half, quote[-half:])]
    offsets: dict[str, int] = {}
    for first, stretch in stretches:
        for match in _WORD.finditer(stretch):
            offsets.setdefault(match.group(), first + match.start())
    return offsets


def _slice_offsets(length: int) -> list[int]:
    """Where the quote's ``_SLICE``-character slices start: spread over its two ends."""
    if length < _SLICE:
        return []
    half = min(length, _MAX_ANCHOR_SPAN) // 2
    per_end = _MAX_SLICES // 2
    head = [round(i * (half - _SLICE) / max(per_end - 1, 1)) for i in range(per_end)]
    tail = [length - half + offset for offset in head]
    return sorted(set(head + [offset for offset in tail if offset + _SLICE <= length]))


def _slice_anchors(text: str, quote: str) -> list[tuple[int, int]]:
    """``(occurrences, quote start)`` for each slice of the quote found verbatim, but rarely.

    A quote that was copied and then edited (a typo, a word changed, a line rewrapped) still
    shares short stretches with its source: each slice found at most ``_MAX_SLICE_HITS - 1``
    times says where the quote would start.
    """
    anchors: list[tuple[int, int]] = []
    for offset in _slice_offsets(len(quote)):
        piece = quote[offset : offset + _SLICE]
        positions: list[int] = []
        position = text.find(piece)
        while position >= 0 and len(positions) < _MAX_SLICE_HITS:
            positions.append(position)
            position = text.find(piece, position + 1)
        if len(positions) < _MAX_SLICE_HITS:
            anchors += [(len(positions), found - offset) for found in positions]
    return sorted(anchors)


def _word_anchors(text: str, quote: str) -> list[int]:
    """Quote starts given by the quote's rarest words in the text (rarest first)."""
    offsets = _word_offsets(quote)
    counted = sorted(offsets, key=lambda word: (-len(word), offsets[word]))[:_MAX_ANCHOR_WORDS]
    # Rarest words first: they pin the quote's location best; longer words break ties.
    ranked = sorted((text.count(word), -len(word), word) for word in counted)
    seeds = [word for count, _, word in ranked if count > 0][:_MAX_SEEDS]
    starts: list[int] = []
    for word in seeds:
        position = text.find(word)
        while position >= 0 and len(starts) < _MAX_CANDIDATES:
            starts.append(position - offsets[word])
            position = text.find(word, position + 1)
    return starts


def _candidate_starts(text: str, quote: str, width: int) -> list[int]:
    """Window starts worth scoring: where stretches or rare words of the quote say it begins.

    First the quote's slices found verbatim (each at most twice), then its rarest words (at
    most ``_MAX_ANCHOR_WORDS`` counted, ``_MAX_SEEDS`` used); at most ``_MAX_CANDIDATES``
    windows in all. Without any anchor, windows are spread evenly over the text.
    """
    last_start = len(text) - width
    starts = [start for _, start in _slice_anchors(text, quote)]
    if len(starts) < _MAX_CANDIDATES:
        starts += _word_anchors(text, quote)
    candidates = list(dict.fromkeys(min(max(start, 0), last_start) for start in starts))
    if not candidates:
        step = last_start // _MAX_CANDIDATES + 1
        candidates = list(range(0, last_start + 1, step))
    return sorted(candidates[:_MAX_CANDIDATES])


def closest_window(text: str, quote: str) -> tuple[int, int, float] | None:
    """The window of ``text`` most similar to ``quote`` among the bounded candidates.

    Args:
        text: The (normalised) document text.
        quote: The (normalised) quote.

    Returns:
        ``(start, end, similarity)``: offsets into ``text`` widened to whole words (by at
        most ``_MAX_WIDEN`` characters a side) and the similarity in [0, 1]; ``None`` if
        ``text`` or ``quote`` is blank.
    """
    if not text.strip() or not quote:
        return None
    width = min(len(quote), len(text))
    scorer = _BoundedScorer(quote, width)
    best_ratio, best_start = -1.0, 0
    for start in _candidate_starts(text, quote, width):
        ratio = scorer.ratio(text, start, at_least=best_ratio)
        if ratio > best_ratio:
            best_ratio, best_start = ratio, start
    start, end = best_start, best_start + width
    # Widen to whole words so the person fixing the quote sees complete words (within reason:
    # text without spaces, such as Chinese, has no word ends to widen to).
    floor, ceiling = max(start - _MAX_WIDEN, 0), min(end + _MAX_WIDEN, len(text))
    while start > floor and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while end < ceiling and text[end - 1].isalnum() and text[end].isalnum():
        end += 1
    return start, end, round(max(best_ratio, 0.0), 4)
