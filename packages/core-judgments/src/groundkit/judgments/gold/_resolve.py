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
A quote *pinned* by ``GoldQuote.start`` resolves to the one occurrence starting at that offset
(exact there, else the tolerant match beginning there; whitespace or invisible characters at the
offset are skipped); if its text is not there, :func:`resolve_judgments` raises.

Quotes are NFC when read (:mod:`groundkit.judgments.gold._models`); a document that is not NFC
is still searched exactly first (an NFC quote is found as written in an NFC stretch of it), then
through its normalised form, so an NFC quote finds its decomposed (NFD) copy and the span is
reported as offsets into the document as read.

A quote that is still not found is reported with the most similar passage of its document and a
similarity in [0, 1], so that a person can correct it: a bounded search, see
:mod:`groundkit.judgments.gold._closest` (at most 16 scans of the document, 40 windows scored, on
at most 2,000 characters of the quote).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.corpus._corpus import Corpus
from groundkit.judgments.gold._closest import _LcsScorer as _LcsScorer
from groundkit.judgments.gold._closest import closest_window
from groundkit.judgments.gold._io import judgment_line
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

# What Python's str.isspace() accepts below U+0080: tab to CR, the separators 0x1C-0x1F, space.
_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True


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
        spans: Every occurrence in ``gold.doc``, or the one at ``gold.start`` for a pinned
            quote (empty when unresolved).
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


def _normalise_ascii(text: str) -> _Normalised:
    """:func:`_normalise` of ASCII text: only whitespace runs change (one byte a character)."""
    data = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    is_space = _ASCII_SPACE[data]
    keep = np.ones(len(data), dtype=bool)
    keep[1:] = ~(is_space[1:] & is_space[:-1])
    mapped = np.where(is_space, np.uint8(_SPACE), data)
    normalised = mapped[keep].tobytes().decode("ascii")
    return _Normalised(normalised, np.flatnonzero(keep).astype(np.int64), len(text))


def _normalise(text: str) -> _Normalised:
    if text.isascii():
        return _normalise_ascii(text)
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


def _pinned(
    text: str, quote: str, start: int, normalised: Callable[[], _Normalised]
) -> tuple[list[tuple[int, int]], Method | None]:
    """The one occurrence of ``quote`` starting at ``start``: exact, else tolerant."""
    if quote.strip() and text.startswith(quote, start):
        return [(start, start + len(quote))], "exact"
    target = _normalised_quote(quote)
    found = normalised()
    position = int(np.searchsorted(found.starts, start, side="left"))
    skipped = text[start : int(found.starts[position])] if position < len(found.starts) else ""
    if not target or _normalised_quote(skipped):
        return [], None  # past the end, or inside a character, or text skipped
    if found.text.startswith(" ", position):
        position += 1
    if not found.text.startswith(target, position):
        return [], None
    span = found.original_span(position, position + len(target))
    return ([span], "tolerant") if span is not None else ([], None)


class _PinnedMissingError(Exception):
    """A pinned quote whose text is not at its offset (the message says what is there)."""


def _pinned_problem(text: str, gold: GoldQuote, found: Callable[[], _Normalised]) -> str:
    start = gold.start
    where = f"pinned at start {start} of {gold.doc!r}"
    if start is None or start >= len(text):
        return f"quote {where} is past the end of the document ({len(text)} characters)"
    there = text[start : start + min(len(gold.quote), 60)]
    elsewhere = [first for first, _ in _match(text, gold.quote, found)[0]]
    if elsewhere:
        shown = ", ".join(str(first) for first in elsewhere[:5])
        more = f" and {len(elsewhere) - 5} more" if len(elsewhere) > 5 else ""
        hint = f"it occurs at start {shown}{more}"
    else:
        hint = "it occurs nowhere in the document"
    return f"quote {where} is not there (the text there reads {there!r}); {hint}"


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

    Candidate windows of the quote's length are anchored where short stretches or the rarest
    words of the quote occur in the document, and scored by their longest common subsequence
    with the quote, on normalised text. The search is bounded (at most 40 windows, scored on
    at most 2,000 characters of the quote, a few dozen scans of the document; see
    :mod:`groundkit.judgments.gold._closest`): linear in the document, whatever the quote's
    length, and the passage is the best of those windows.

    Args:
        text: The document text.
        quote: The passage that was not found.

    Returns:
        ``(passage, similarity)``: the passage as it appears in ``text`` (widened to whole
        words, by at most 40 characters a side) and its similarity ratio in [0, 1]; ``None``
        if ``text`` or ``quote`` is blank.
    """
    return _closest(_normalise(text), text, _normalised_quote(quote))


def _closest(normalised: _Normalised, text: str, quote: str) -> tuple[str, float] | None:
    found = closest_window(normalised.text, quote)
    if found is None:
        return None
    start, end, similarity = found
    starts = normalised.starts
    original_start = int(starts[start])
    original_end = int(starts[end]) if end < len(starts) else normalised.original_length
    return text[original_start:original_end].strip(), similarity


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
    """The corpus's id for ``doc``, also when one is NFC and the other decomposed.

    Judgment ids are NFC (see :mod:`groundkit.judgments.gold._models`) and so are the ids of
    a corpus read from a folder; a corpus built from a mapping keeps its keys as given, so a
    decomposed key is found through its NFC form (the first such key in id order).
    """
    if doc in corpus:
        return doc
    composed = unicodedata.normalize("NFC", doc)
    if composed in corpus:
        return composed
    by_nfc: dict[str, str] | None = corpus._derived.get("ids_by_nfc")
    if by_nfc is None:
        by_nfc = {}
        for known in sorted(corpus):
            by_nfc.setdefault(unicodedata.normalize("NFC", known), known)
        corpus._derived["ids_by_nfc"] = by_nfc
    return by_nfc.get(composed)


def _resolve_gold(corpus: Corpus, gold: GoldQuote) -> ResolvedQuote:
    doc = _corpus_id(corpus, gold.doc)
    if doc is None:
        return ResolvedQuote(
            gold=gold,
            reason=f"document {gold.doc!r} is not in the corpus",
            unresolved=Unresolved.MISSING_DOCUMENT,
        )
    text = corpus[doc]

    def normalised() -> _Normalised:
        return _cached_normalised(corpus, doc)

    if gold.start is not None:
        spans, method = _pinned(text, gold.quote, gold.start, normalised)
        if not spans:
            raise _PinnedMissingError(_pinned_problem(text, gold, normalised))
    else:
        spans, method = _match(text, gold.quote, normalised)
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
    judgments: Iterable[Judgment],
    corpus: Corpus | Mapping[str, str],
    *,
    source: str | Path | None = None,
) -> list[ResolvedJudgment]:
    """Resolve every gold quote of every judgment against the corpus.

    Unresolved quotes are not errors here: they are reported (with ``reason``, and ``closest``
    and ``similarity`` when the document exists) so that callers decide how strict to be.
    A pinned quote (``GoldQuote.start``) whose text is not at its offset is an error: the
    judgment contradicts its document. Normalised documents are cached on the corpus, so
    repeated calls stay cheap.

    Args:
        judgments: The judgments, in any order.
        corpus: A :class:`Corpus` (or a mapping of document id to text, validated first).
        source: The judgments file they were read from, named with the judgment's line in
            the error about a pinned quote.

    Returns:
        One :class:`ResolvedJudgment` per judgment, in input order.

    Raises:
        JudgmentError: A pinned quote is not at its offset (one line: file and line when
            ``source`` is given, the query id, ``gold.N``, the document and what is there).
    """
    resolved_corpus = _as_corpus(corpus)
    memo: dict[tuple[str, str, int | None], ResolvedQuote] = {}
    results: list[ResolvedJudgment] = []
    for judgment in judgments:
        quotes: list[ResolvedQuote] = []
        for index, gold in enumerate(judgment.gold):
            key = (gold.doc, gold.quote, gold.start)
            found = memo.get(key)
            if found is None:
                try:
                    found = memo[key] = _resolve_gold(resolved_corpus, gold)
                except _PinnedMissingError as missing:
                    raise JudgmentError(
                        f"gold.{index}: {missing}",
                        path=source,
                        line=None if source is None else judgment_line(source, judgment.query_id),
                        item_id=judgment.query_id,
                    ) from None
            elif found.gold != gold:  # same passage, different grade
                found = found.model_copy(update={"gold": gold})
            quotes.append(found)
        results.append(ResolvedJudgment(judgment=judgment, quotes=tuple(quotes)))
    return results
