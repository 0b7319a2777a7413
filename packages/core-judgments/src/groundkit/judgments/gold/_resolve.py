"""Quote resolution: finding gold quotes (and hit texts) in the corpus as character spans.

Two passes, cheapest first:

1. **exact**: ``str.find`` of the quote as written; every non-overlapping occurrence.
2. **tolerant**: both the document and the quote are normalised (Unicode NFC; typographic
   quotes, dashes, ellipsis and ``ﬁ``-style ligatures replaced by their ASCII spelling; soft
   hyphens and zero-width characters dropped; every run of whitespace, including line breaks and
   non-breaking spaces, collapsed to one space; the quote's outer whitespace ignored). The
   normalised document keeps, for each of its characters, the offset of the original character
   it came from, so matches are reported as spans of the ORIGINAL text. A match must start and
   end on whole original characters (it may not split a ``…`` or a letter from its accent).

A quote found more than once resolves to every occurrence: the judgment says *what* text answers
the query, not which copy, so retrieving any copy counts as retrieving the evidence. When the
exact pass finds the quote, typographic variants of it elsewhere are not searched for.

A quote that is still not found is reported with the most similar passage of its document and a
similarity in [0, 1], so that a person can correct it. Candidate windows of the quote's length are
anchored on the quote's rarest words; each is scored by the longest common subsequence of
characters, ``2 * LCS / (len(window) + len(quote))`` (the Indel similarity, what RapidFuzz
calls ``ratio``), computed bit-parallel on Python integers (Hyyrö's algorithm): about
``len(window) * len(quote) / 64`` word operations per window, so a 3,000-character quote in a
200 KB document takes well under a second whatever the text.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.corpus._corpus import Corpus
from groundkit.judgments.gold._models import GoldQuote, Judgment

__all__ = [
    "Method",
    "ResolvedJudgment",
    "ResolvedQuote",
    "Span",
    "Unresolved",
    "closest_passage",
    "normalize_for_matching",
    "resolve_judgments",
    "resolve_quote",
]

Method = Literal["exact", "tolerant"]
_Offsets = npt.NDArray[np.int64]

# One original character -> its matching spelling ("" drops it). Whitespace is handled apart.
_REPLACEMENTS: dict[str, str] = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    "\u2026": "...",
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    # Soft hyphen, zero-width space/joiners, word joiner and BOM: invisible, dropped.
    **dict.fromkeys("\u00ad\u200b\u200c\u200d\u2060\ufeff", ""),
}
# Every character Python's str.isspace() accepts lies below U+3001.
_WHITESPACE = [code for code in range(0x3001) if chr(code).isspace()]
_SPACE = 0x20

_BMP = 0x10000
_MAP_BMP = np.arange(_BMP, dtype=np.uint32)
_COUNT_BMP = np.ones(_BMP, dtype=np.int64)
for _code in _WHITESPACE:
    _MAP_BMP[_code] = _SPACE
for _char, _spelling in _REPLACEMENTS.items():
    _COUNT_BMP[ord(_char)] = len(_spelling)
    if len(_spelling) == 1:
        _MAP_BMP[ord(_char)] = ord(_spelling)
_EXPANSIONS = {ord(char): spelling for char, spelling in _REPLACEMENTS.items() if len(spelling) > 1}
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
_WORD = re.compile(r"\w+")

# Closest-passage search budget: enough to find a typo'd quote, small enough for long documents.
_MAX_SEEDS = 4
_MAX_CANDIDATES = 40


@dataclass(frozen=True, slots=True)
class Span:
    """A character range ``[start, end)`` of a corpus document."""

    doc: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise JudgmentError(
                f"invalid span [{self.start}, {self.end}): need 0 <= start <= end",
                item_id=self.doc,
            )

    @property
    def length(self) -> int:
        """Number of characters covered (``end - start``)."""
        return self.end - self.start


class Unresolved(StrEnum):
    """Why a gold quote was not found (a code for programs; ``reason`` is for people)."""

    MISSING_DOCUMENT = "missing-document"
    BLANK_DOCUMENT = "blank-document"
    NOT_FOUND = "not-found"


class ResolvedQuote(BaseModel):
    """A gold quote and where it was found.

    Attributes:
        gold: The quote as judged.
        spans: Every occurrence in ``gold.doc`` (empty when unresolved).
        method: ``"exact"``, ``"tolerant"``, or ``None`` when unresolved.
        closest: For an unresolved quote, the most similar passage of the document (original
            text), else ``None``; also ``None`` when the document is missing or empty.
        similarity: Similarity of ``closest`` to the quote in [0, 1], else ``None``.
        reason: Why the quote is unresolved (``None`` when resolved).
        unresolved: The same as a code: ``missing-document``, ``blank-document`` or
            ``not-found`` (``None`` when resolved).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    gold: GoldQuote
    spans: tuple[Span, ...] = ()
    method: Method | None = None
    closest: str | None = None
    similarity: float | None = None
    reason: str | None = None
    unresolved: Unresolved | None = None

    @property
    def resolved(self) -> bool:
        """Whether the quote was found at least once."""
        return bool(self.spans)


class ResolvedJudgment(BaseModel):
    """A judgment with each of its gold quotes resolved, in the order of ``judgment.gold``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judgment: Judgment
    quotes: tuple[ResolvedQuote, ...] = ()

    @property
    def spans(self) -> tuple[Span, ...]:
        """All spans of all resolved quotes."""
        return tuple(span for quote in self.quotes for span in quote.spans)

    @property
    def unresolved(self) -> tuple[ResolvedQuote, ...]:
        """The quotes that were not found."""
        return tuple(quote for quote in self.quotes if not quote.resolved)


# Normalisation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Normalised:
    """A normalised text and, per normalised character, the original offset it starts at."""

    text: str
    starts: _Offsets
    original_length: int

    def original_span(self, start: int, end: int) -> tuple[int, int] | None:
        """Map a normalised ``[start, end)`` back, or ``None`` if it splits an original char."""
        starts = self.starts
        if start > 0 and starts[start - 1] == starts[start]:
            return None
        if end < len(starts) and starts[end] == starts[end - 1]:
            return None
        original_end = int(starts[end]) if end < len(starts) else self.original_length
        return int(starts[start]), original_end


def _code_points(text: str) -> npt.NDArray[np.uint32]:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def _from_code_points(codes: npt.NDArray[np.uint32]) -> str:
    return codes.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")


def _is_cluster_start(char: str) -> bool:
    code = ord(char)
    # Hangul vowel and trailing jamo have combining class 0 but compose with what precedes.
    return unicodedata.combining(char) == 0 and not (
        0x1161 <= code <= 0x1175 or 0x11A8 <= code <= 0x11C2
    )


def _nfc(text: str) -> tuple[str, _Offsets]:
    """NFC-normalise ``text``; each output character maps to the start of its source cluster."""
    if unicodedata.is_normalized("NFC", text):
        return text, np.arange(len(text), dtype=np.int64)
    pieces: list[str] = []
    starts: list[_Offsets] = []
    position = 0
    for match in _NON_ASCII_RUN.finditer(text):
        # The ASCII character before a run may be the base of a combining accent in the run;
        # the ASCII character after it can never compose, so regions are independent.
        region_start = max(match.start() - 1, position)
        if region_start > position:
            pieces.append(text[position:region_start])
            starts.append(np.arange(position, region_start, dtype=np.int64))
        region = text[region_start : match.end()]
        normalised, offsets = _nfc_region(region)
        pieces.append(normalised)
        starts.append(offsets + region_start)
        position = match.end()
    if position < len(text):
        pieces.append(text[position:])
        starts.append(np.arange(position, len(text), dtype=np.int64))
    return "".join(pieces), np.concatenate(starts) if starts else np.zeros(0, np.int64)


def _nfc_region(region: str) -> tuple[str, _Offsets]:
    normalised = unicodedata.normalize("NFC", region)
    if normalised == region:
        return region, np.arange(len(region), dtype=np.int64)
    bounds = [i for i, char in enumerate(region) if i == 0 or _is_cluster_start(char)]
    bounds.append(len(region))
    # Clusters are a starter and its combining marks; a few scripts (Hangul jamo, some Indic
    # two-part vowels) also compose across starters, so neighbours that interact are merged.
    groups: list[tuple[int, str, str]] = []  # (first offset, original, normalised)
    for begin, end in itertools.pairwise(bounds):
        piece = region[begin:end]
        piece_nfc = unicodedata.normalize("NFC", piece)
        if groups:
            first, previous, previous_nfc = groups[-1]
            merged = unicodedata.normalize("NFC", previous + piece)
            if merged != previous_nfc + piece_nfc:
                groups[-1] = (first, previous + piece, merged)
                continue
        groups.append((begin, piece, piece_nfc))
    if "".join(group[2] for group in groups) == normalised:
        offsets = [first for first, _, piece_nfc in groups for _ in piece_nfc]
        return normalised, np.asarray(offsets, dtype=np.int64)
    # Not expected to happen; if some composition still spans groups, map the region as one
    # block so that no match can start or end inside it.
    return normalised, np.zeros(len(normalised), dtype=np.int64)


def _normalise(text: str) -> _Normalised:
    nfc_text, starts = _nfc(text)
    codes = _code_points(nfc_text)
    in_bmp = codes < _BMP
    bmp_index = np.where(in_bmp, codes, 0)
    mapped = np.where(in_bmp, _MAP_BMP[bmp_index], codes).astype(np.uint32)
    counts = np.where(in_bmp, _COUNT_BMP[bmp_index], 1)
    if not np.all(counts == 1):
        first_output = np.cumsum(counts) - counts
        expanded = np.repeat(mapped, counts)
        for code, spelling in _EXPANSIONS.items():
            targets = first_output[codes == code]
            for offset, char in enumerate(spelling):
                expanded[targets + offset] = ord(char)
        mapped = expanded
        starts = np.repeat(starts, counts)
    is_space = mapped == _SPACE
    keep = np.ones(len(mapped), dtype=bool)
    keep[1:] = ~(is_space[1:] & is_space[:-1])
    return _Normalised(_from_code_points(mapped[keep]), starts[keep], len(text))


def normalize_for_matching(text: str) -> str:
    """The normalised spelling tolerant matching compares (see the module docs).

    Args:
        text: Any text.

    Returns:
        ``text`` in NFC with typography, invisible characters and whitespace runs normalised.
    """
    return _normalise(text).text


def _normalised_quote(quote: str) -> str:
    return _normalise(quote).text.strip(" ")


# Matching -----------------------------------------------------------------------------------


def _exact_spans(text: str, quote: str, *, first_only: bool = False) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    position = text.find(quote)
    while position >= 0:
        spans.append((position, position + len(quote)))
        if first_only:
            break
        position = text.find(quote, position + len(quote))
    return spans


def _tolerant_spans(
    normalised: _Normalised, quote: str, *, first_only: bool = False
) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    haystack = normalised.text
    position = haystack.find(quote)
    while position >= 0:
        span = normalised.original_span(position, position + len(quote))
        if span is None:
            position = haystack.find(quote, position + 1)
            continue
        spans.append(span)
        if first_only:
            break
        position = haystack.find(quote, position + len(quote))
    return spans


def _match(
    text: str,
    quote: str,
    normalised: Callable[[], _Normalised],
    *,
    first_only: bool = False,
) -> tuple[list[tuple[int, int]], Method | None]:
    if not quote.strip():
        return [], None
    if len(quote) == len(text):
        if quote == text:  # whole-document quotes: one comparison, no search
            return [(0, len(text))], "exact"
    elif len(quote) < len(text):
        spans = _exact_spans(text, quote, first_only=first_only)
        if spans:
            return spans, "exact"
    target = _normalised_quote(quote)
    if not target:
        return [], None
    spans = _tolerant_spans(normalised(), target, first_only=first_only)
    return (spans, "tolerant") if spans else ([], None)


def resolve_quote(text: str, quote: str) -> tuple[list[tuple[int, int]], Method | None]:
    """Find every occurrence of ``quote`` in ``text`` (exact first, then tolerant).

    Args:
        text: The document text.
        quote: The passage to find.

    Returns:
        ``(spans, method)``: non-overlapping ``(start, end)`` offsets in the ORIGINAL ``text``,
        in document order, and ``"exact"`` or ``"tolerant"``; ``([], None)`` when not found.
    """
    return _match(text, quote, lambda: _normalise(text))


def closest_passage(text: str, quote: str) -> tuple[str, float] | None:
    """The passage of ``text`` most similar to ``quote``, for reporting an unresolved quote.

    Candidate windows of the quote's length are anchored on occurrences of the quote's rarest
    words in the document and scored by their longest common subsequence with the quote, on
    normalised text (see the module documentation), so the cost depends on the quote and a
    bounded number of windows, not on the document size squared.

    Args:
        text: The document text.
        quote: The passage that was not found.

    Returns:
        ``(passage, similarity)``: the passage as it appears in ``text`` (widened to whole
        words) and its similarity ratio in [0, 1]; ``None`` if ``text`` or ``quote`` is blank.
    """
    return _closest(_normalise(text), text, _normalised_quote(quote))


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


def _closest(normalised: _Normalised, text: str, quote: str) -> tuple[str, float] | None:
    haystack = normalised.text
    if not haystack.strip() or not quote:
        return None
    width = min(len(quote), len(haystack))
    last_start = len(haystack) - width
    # First position of each word within the quote (reversed so the earliest one wins).
    offsets = {match.group(): match.start() for match in reversed(list(_WORD.finditer(quote)))}
    # Rarest words first: they pin the quote's location best; longer words break ties.
    ranked = sorted((haystack.count(word), -len(word), word) for word in offsets)
    seeds = [word for count, _, word in ranked if count > 0][:_MAX_SEEDS]
    candidates: set[int] = set()
    for word in seeds:
        position = haystack.find(word)
        while position >= 0 and len(candidates) < _MAX_CANDIDATES:
            candidates.add(min(max(position - offsets[word], 0), last_start))
            position = haystack.find(word, position + 1)
    if not candidates:
        step = last_start // _MAX_CANDIDATES + 1
        candidates = set(range(0, last_start + 1, step))
    scorer = _LcsScorer(quote)
    best_ratio, best_start = -1.0, 0
    for start in sorted(candidates):
        ratio = scorer.ratio(haystack[start : start + width], at_least=best_ratio)
        if ratio > best_ratio:
            best_ratio, best_start = ratio, start
    start, end = best_start, best_start + width
    # Widen to whole words so the person fixing the quote sees complete words.
    while start > 0 and haystack[start - 1].isalnum() and haystack[start].isalnum():
        start -= 1
    while end < len(haystack) and haystack[end - 1].isalnum() and haystack[end].isalnum():
        end += 1
    starts = normalised.starts
    original_start = int(starts[start])
    original_end = int(starts[end]) if end < len(starts) else normalised.original_length
    return text[original_start:original_end].strip(), round(max(best_ratio, 0.0), 4)


# Corpus-level API ---------------------------------------------------------------------------


def _cached_normalised(corpus: Corpus, doc: str) -> _Normalised:
    cache: dict[str, _Normalised] = corpus._derived.setdefault("normalised", {})
    found = cache.get(doc)
    if found is None:
        found = cache[doc] = _normalise(corpus[doc])
    return found


def _as_corpus(corpus: Corpus | Mapping[str, str]) -> Corpus:
    return corpus if isinstance(corpus, Corpus) else Corpus.from_texts(corpus)


def _corpus_id(corpus: Corpus, doc: str) -> str | None:
    """The corpus's id for ``doc``, also when one is NFC and the other decomposed."""
    if doc in corpus:
        return doc
    composed = unicodedata.normalize("NFC", doc)
    return composed if composed in corpus else None


def _resolve_gold(corpus: Corpus, gold: GoldQuote) -> ResolvedQuote:
    doc = _corpus_id(corpus, gold.doc)
    if doc is None:
        return ResolvedQuote(
            gold=gold,
            reason=f"document {gold.doc!r} is not in the corpus",
            unresolved=Unresolved.MISSING_DOCUMENT,
        )
    text = corpus[doc]
    spans, method = _match(text, gold.quote, lambda: _cached_normalised(corpus, doc))
    if spans:
        return ResolvedQuote(
            gold=gold,
            spans=tuple(Span(doc, start, end) for start, end in spans),
            method=method,
        )
    closest = _closest(_cached_normalised(corpus, doc), text, _normalised_quote(gold.quote))
    if closest is None:
        return ResolvedQuote(
            gold=gold,
            reason=f"quote not found: document {doc!r} is blank",
            unresolved=Unresolved.BLANK_DOCUMENT,
        )
    passage, similarity = closest
    return ResolvedQuote(
        gold=gold,
        closest=passage,
        similarity=similarity,
        reason=f"quote not found in {gold.doc!r} (closest passage similarity {similarity:.2f})",
        unresolved=Unresolved.NOT_FOUND,
    )


def resolve_judgments(
    judgments: Iterable[Judgment], corpus: Corpus | Mapping[str, str]
) -> list[ResolvedJudgment]:
    """Resolve every gold quote of every judgment against the corpus.

    Unresolved quotes are not errors here: they are reported (with ``reason``, and ``closest``
    and ``similarity`` when the document exists) so that callers decide how strict to be.
    Normalised documents are cached on the corpus, so repeated calls stay cheap.

    Args:
        judgments: The judgments, in any order.
        corpus: A :class:`Corpus` (or a mapping of document id to text, validated first).

    Returns:
        One :class:`ResolvedJudgment` per judgment, in input order.
    """
    resolved_corpus = _as_corpus(corpus)
    memo: dict[tuple[str, str], ResolvedQuote] = {}
    results: list[ResolvedJudgment] = []
    for judgment in judgments:
        quotes: list[ResolvedQuote] = []
        for gold in judgment.gold:
            key = (gold.doc, gold.quote)
            found = memo.get(key)
            if found is None:
                found = memo[key] = _resolve_gold(resolved_corpus, gold)
            elif found.gold != gold:  # same passage, different grade
                found = found.model_copy(update={"gold": gold})
            quotes.append(found)
        results.append(ResolvedJudgment(judgment=judgment, quotes=tuple(quotes)))
    return results
