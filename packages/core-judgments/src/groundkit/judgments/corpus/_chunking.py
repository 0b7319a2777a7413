"""Chunkers: cut documents into the character spans a retriever indexes.

Every chunker returns ``(start, end)`` offsets into the *original* text (end exclusive), so a
chunk can always be compared with a gold quote's span. All chunkers guarantee:

* every span lies within the text and is non-empty;
* spans are ordered by start (and by end);
* every non-whitespace character of the text lies in at least one span (whitespace-only text
  gives no chunk at all);
* consecutive spans overlap exactly as configured: ``chars`` by ``overlap`` characters,
  ``tokens`` by ``overlap`` word tokens, and the other kinds not at all. The one exception is a
  run of whitespace longer than what a chunk holds: the chunker then skips ahead to the next
  non-whitespace character, so the gap between the two chunks is whitespace only.

The kinds:

``document``
    One chunk per document: the text from its first to its last non-whitespace character.
``chars``
    Windows of at most ``size`` characters overlapping by ``overlap``. A window that does not
    reach the end of the text is cut at the last word end (a non-whitespace character followed
    by whitespace) within its final fifth, so words are not split; without a word end there it
    is cut at exactly ``size`` characters. The next window starts ``overlap`` characters before
    the cut.
``tokens``
    Windows of ``size`` word tokens (runs of non-whitespace characters; no tokenizer model)
    overlapping by ``overlap`` tokens; a span runs from its first token's start to its last
    token's end.
``sentences``
    Sentences found by a regular expression (a ``.``, ``!`` or ``?`` followed by whitespace and
    an upper-case letter, digit or opening quote, or a blank line), not after common
    abbreviations (``e.g.``, ``Dr.``, ``Fig.``...) or single-letter initials. Consecutive
    sentences are grouped up to ``max_sentences`` and ``max_chars``; a sentence longer than
    ``max_chars`` is cut like ``chars`` without overlap.
``paragraphs``
    Paragraphs separated by blank lines; a markdown heading line (``#`` to ``######``) always
    starts a new chunk, so a section's heading stays with its text. Consecutive paragraphs of a
    section are merged while the span stays within ``max_chars``; a longer paragraph is cut like
    ``chars`` without overlap.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments._numbers import WholeNumber
from groundkit.judgments.gold._models import format_validation_error

__all__ = [
    "CharsChunker",
    "Chunk",
    "ChunkerConfig",
    "DocumentChunker",
    "ParagraphsChunker",
    "SentencesChunker",
    "TokensChunker",
    "chunk_corpus",
    "chunk_text",
    "parse_chunker_config",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class DocumentChunker(BaseModel):
    """One chunk per document (whole-document retrieval)."""

    model_config = _FROZEN
    kind: Literal["document"] = "document"


class CharsChunker(BaseModel):
    """Windows of at most ``size`` characters, overlapping by ``overlap`` characters.

    Attributes:
        size: Maximum chunk length in characters.
        overlap: Characters shared by consecutive chunks (``0 <= overlap < size``).
    """

    model_config = _FROZEN
    kind: Literal["chars"] = "chars"
    size: WholeNumber = Field(default=1000, gt=0)
    overlap: WholeNumber = Field(default=200, ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> CharsChunker:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class TokensChunker(BaseModel):
    """Windows of ``size`` whitespace-separated word tokens, overlapping by ``overlap`` tokens.

    Attributes:
        size: Tokens per chunk.
        overlap: Tokens shared by consecutive chunks (``0 <= overlap < size``).
    """

    model_config = _FROZEN
    kind: Literal["tokens"] = "tokens"
    size: WholeNumber = Field(default=200, gt=0)
    overlap: WholeNumber = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> TokensChunker:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class SentencesChunker(BaseModel):
    """Groups of consecutive sentences.

    Attributes:
        max_sentences: Most sentences per chunk (``None``: no limit but ``max_chars``).
        max_chars: Most characters per chunk (``None``: no limit but ``max_sentences``).
    """

    model_config = _FROZEN
    kind: Literal["sentences"] = "sentences"
    max_sentences: WholeNumber | None = Field(default=5, gt=0)
    max_chars: WholeNumber | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _some_limit(self) -> SentencesChunker:
        if self.max_sentences is None and self.max_chars is None:
            raise ValueError("set max_sentences, max_chars or both")
        return self


class ParagraphsChunker(BaseModel):
    """Blank-line paragraphs and markdown sections, merged up to ``max_chars``.

    Attributes:
        max_chars: Most characters per chunk.
    """

    model_config = _FROZEN
    kind: Literal["paragraphs"] = "paragraphs"
    max_chars: WholeNumber = Field(default=1000, gt=0)


ChunkerConfig = Annotated[
    DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker,
    Field(discriminator="kind"),
]
"""A chunker's settings, discriminated by ``kind``."""

_CHUNKER_ADAPTER: TypeAdapter[
    DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker
] = TypeAdapter(ChunkerConfig)


def parse_chunker_config(
    data: object,
) -> DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker:
    """A chunker config from a mapping (``{"kind": "chars", "size": 800}``) or its text form.

    The text form (``"chars:800:100"``, ``"tokens:100:20"``, ``"sentences:3"``) is the one
    ``--chunker`` and a config file's ``chunker = "..."`` accept
    (:func:`~groundkit.judgments.parse_chunker_spec`).

    Raises:
        JudgmentError: Unknown kind, unknown key or a bad value (every problem, one line).
    """
    if isinstance(data, str):
        from groundkit.judgments.corpus._chunker_spec import parse_chunker_spec  # a cycle

        return parse_chunker_spec(data)
    try:
        return validate_chunker_config(data)
    except ValidationError as error:
        raise JudgmentError(f"chunker {data!r}: {format_validation_error(error)}") from None


def validate_chunker_config(
    data: object,
) -> DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker:
    """:func:`parse_chunker_config` for callers that render pydantic's errors themselves.

    Raises:
        pydantic.ValidationError: Unknown kind, unknown key or a bad value.
    """
    return _CHUNKER_ADAPTER.validate_python(data)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A chunk of a document: ``corpus[doc][start:end]``.

    Attributes:
        doc: Document id.
        start: Start offset in the document.
        end: End offset (exclusive).
    """

    doc: str
    start: int
    end: int


_NON_SPACE = re.compile(r"\S")
_WORD_END = re.compile(r"\S(?=\s)")
_TOKEN = re.compile(r"\S+")


def _content_bounds(text: str) -> tuple[int, int] | None:
    first = _NON_SPACE.search(text)
    if first is None:
        return None
    end = len(text.rstrip())
    return first.start(), end


def _next_non_space(text: str, pos: int, limit: int) -> int:
    match = _NON_SPACE.search(text, pos, limit)
    return limit if match is None else match.start()


def _char_windows(
    text: str, start: int, stop: int, size: int, overlap: int
) -> list[tuple[int, int]]:
    """Windows of ``text[start:stop]`` (which starts and ends with non-whitespace)."""
    spans: list[tuple[int, int]] = []
    # The cut may move back by at most `window` characters; keeping the chunk longer than
    # `overlap` guarantees every window advances.
    window = min(size // 5, size - overlap - 1)
    pos = start
    while True:
        end = pos + size
        if end >= stop:
            spans.append((pos, stop))
            return spans
        if window > 0:
            last_end = -1
            for match in _WORD_END.finditer(text, end - window - 1, end + 1):
                last_end = match.end()
            if last_end > pos + overlap:
                end = last_end
        spans.append((pos, end))
        nxt = end - overlap
        if _NON_SPACE.search(text, nxt, nxt + size) is None:
            # A whitespace run longer than a chunk: skip it rather than emit a blank chunk.
            nxt = _next_non_space(text, nxt, stop)
        elif overlap == 0:
            nxt = _next_non_space(text, nxt, stop)
        pos = nxt


def _chunk_chars(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    bounds = _content_bounds(text)
    if bounds is None:
        return []
    return _char_windows(text, bounds[0], bounds[1], size, overlap)


def _chunk_tokens(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    tokens = [m.span() for m in _TOKEN.finditer(text)]
    spans: list[tuple[int, int]] = []
    step = size - overlap
    first = 0
    while first < len(tokens):
        last = min(first + size, len(tokens)) - 1
        spans.append((tokens[first][0], tokens[last][1]))
        if last == len(tokens) - 1:
            break
        first += step
    return spans


# Words after which a period does not end a sentence (compared lower-cased, without the dot).
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "al",
        "fig",
        "figs",
        "eq",
        "eqs",
        "no",
        "nos",
        "vol",
        "pp",
        "ca",
        "cf",
        "approx",
        "dept",
        "est",
        "inc",
        "ltd",
        "co",
        "corp",
        "e.g",
        "i.e",
        "e.i",
        "viz",
        "resp",
        "incl",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "mt",
        "ft",
        "gen",
        "col",
        "lt",
        "sgt",
        "capt",
        "rev",
        "hon",
        "u.s",
        "u.k",
        "ph.d",
        "m.d",
        "b.sc",
        "m.sc",
    ]
)
_SENTENCE_BREAK = re.compile(
    r"""(?:[.!?]+["'”’)\]]*)(?=\s+["'“‘(\[]?[A-Z0-9])|\n[ \t]*\n""",
)
_WORD_BEFORE = re.compile(r"(\S+)$")


def _is_abbreviation(text: str, dot: int, line_start: int) -> bool:
    """Whether the period at ``dot`` closes an abbreviation or an initial."""
    match = _WORD_BEFORE.search(text, line_start, dot)
    if match is None:
        return False
    word = match.group(1).lstrip("\"'“‘([").lower()
    if len(word) == 1 and word.isalpha():
        return True  # an initial, as in "J. Smith"
    return word in _ABBREVIATIONS


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    bounds = _content_bounds(text)
    if bounds is None:
        return []
    starts = [bounds[0]]
    for match in _SENTENCE_BREAK.finditer(text, bounds[0], bounds[1]):
        mark = match.group(0)
        if mark[0] == "." and len(mark.rstrip("\"'”’)]")) == 1:
            lookback = max(0, match.start() - 40)
            if _is_abbreviation(text, match.start(), lookback):
                continue
        nxt = _next_non_space(text, match.end(), bounds[1])
        if nxt < bounds[1] and nxt > starts[-1]:
            starts.append(nxt)
    spans: list[tuple[int, int]] = []
    for index, start in enumerate(starts):
        stop = starts[index + 1] if index + 1 < len(starts) else bounds[1]
        end = len(text[start:stop].rstrip()) + start
        spans.append((start, end))
    return spans


def _cut_long(text: str, spans: list[tuple[int, int]], max_chars: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if end - start <= max_chars:
            out.append((start, end))
        else:
            out.extend(_char_windows(text, start, end, max_chars, 0))
    return out


def _group(
    units: list[tuple[int, int]],
    max_units: int | None,
    max_chars: int | None,
    breaks_before: frozenset[int] = frozenset(),
) -> list[tuple[int, int]]:
    """Merge consecutive units while within both limits.

    A unit index in ``breaks_before`` always starts a new group.
    """
    groups: list[tuple[int, int]] = []
    count = 0
    for index, (start, end) in enumerate(units):
        if groups and index not in breaks_before:
            group_start = groups[-1][0]
            fits_units = max_units is None or count < max_units
            fits_chars = max_chars is None or end - group_start <= max_chars
            if fits_units and fits_chars:
                groups[-1] = (group_start, end)
                count += 1
                continue
        groups.append((start, end))
        count = 1
    return groups


def _chunk_sentences(
    text: str, max_sentences: int | None, max_chars: int | None
) -> list[tuple[int, int]]:
    sentences = _sentence_spans(text)
    if max_chars is not None:
        sentences = _cut_long(text, sentences, max_chars)
    return _group(sentences, max_sentences, max_chars)


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)", re.MULTILINE)


def _chunk_paragraphs(text: str, max_chars: int) -> list[tuple[int, int]]:
    bounds = _content_bounds(text)
    if bounds is None:
        return []
    cuts = {bounds[0]}
    for match in _PARAGRAPH_BREAK.finditer(text, bounds[0], bounds[1]):
        cuts.add(match.end())
    headings: set[int] = set()
    for match in _HEADING.finditer(text, bounds[0], bounds[1]):
        pos = _next_non_space(text, match.start(), bounds[1])
        cuts.add(pos)
        headings.add(pos)
    starts = sorted(c for c in cuts if c < bounds[1])
    paragraphs: list[tuple[int, int]] = []
    for index, start in enumerate(starts):
        stop = starts[index + 1] if index + 1 < len(starts) else bounds[1]
        end = len(text[start:stop].rstrip()) + start
        paragraphs.append((start, end))
    # A heading starts a new chunk; a long paragraph is cut into several units, and only its
    # first unit can be a heading.
    units: list[tuple[int, int]] = []
    breaks: set[int] = set()
    for start, end in paragraphs:
        if start in headings:
            breaks.add(len(units))
        units.extend(_cut_long(text, [(start, end)], max_chars))
    return _group(units, None, max_chars, frozenset(breaks))


def chunk_text(
    text: str,
    config: DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker,
) -> list[tuple[int, int]]:
    """Cut one text into chunk spans.

    Guarantees: spans lie within the text, are non-empty, ordered by start and end, and cover
    every non-whitespace character; consecutive spans overlap by exactly ``overlap`` characters
    (``chars``) or word tokens (``tokens``) and not at all for the other kinds, except across a
    whitespace run longer than a chunk, which is skipped.

    Rules: ``document`` is the text from its first to its last non-whitespace character.
    ``chars`` windows hold at most ``size`` characters; a window that does not reach the end is
    cut at the last word end (non-whitespace followed by whitespace) within its final fifth, or
    at exactly ``size`` characters when there is none; the next window starts ``overlap``
    characters before the cut. ``tokens`` windows hold ``size`` whitespace-separated tokens.
    ``sentences`` groups sentences (split after ``.``, ``!`` or ``?`` followed by an upper-case
    letter, digit or opening quote, or at a blank line; not after abbreviations such as
    ``e.g.``, ``Dr.``, ``Fig.`` or single-letter initials) up to ``max_sentences`` and
    ``max_chars``. ``paragraphs`` merges blank-line paragraphs up to ``max_chars``, a markdown
    heading always starting a new chunk. A sentence or paragraph longer than ``max_chars`` is
    cut like ``chars`` without overlap.

    Args:
        text: The document text.
        config: The chunker settings.

    Returns:
        Ordered, non-empty ``(start, end)`` spans of ``text`` covering every non-whitespace
        character; empty for a whitespace-only text.
    """
    if isinstance(config, DocumentChunker):
        bounds = _content_bounds(text)
        return [] if bounds is None else [bounds]
    if isinstance(config, CharsChunker):
        return _chunk_chars(text, config.size, config.overlap)
    if isinstance(config, TokensChunker):
        return _chunk_tokens(text, config.size, config.overlap)
    if isinstance(config, SentencesChunker):
        return _chunk_sentences(text, config.max_sentences, config.max_chars)
    return _chunk_paragraphs(text, config.max_chars)


def chunk_corpus(
    corpus: Mapping[str, str],
    config: DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker,
) -> list[Chunk]:
    """Cut every document of a corpus, in the corpus's order.

    Args:
        corpus: Document id to text (a :class:`~groundkit.judgments.Corpus` or any mapping).
        config: The chunker settings.

    Returns:
        The chunks, document by document, each document's chunks in text order.
    """
    chunks: list[Chunk] = []
    for doc, text in corpus.items():
        chunks.extend(Chunk(doc, start, end) for start, end in chunk_text(text, config))
    return chunks
