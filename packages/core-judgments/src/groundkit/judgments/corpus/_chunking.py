"""Chunkers: cut documents into the character spans a retriever indexes.

Every chunker returns ``(start, end)`` offsets into the *original* text (end exclusive), so a
chunk can always be compared with a gold quote's span. All chunkers guarantee:

* every span lies within the text and is non-empty;
* spans are ordered by start (and by end);
* every non-whitespace character of the text lies in at least one span (whitespace-only text
  gives no chunk at all);
* consecutive spans overlap exactly as configured: ``chars`` by ``overlap`` characters,
  ``tokens`` by ``overlap`` tokens, and the other kinds not at all. The one exception is a
  run of whitespace longer than what a chunk holds: the chunker then skips ahead to the next
  non-whitespace character, so the gap between the two chunks is whitespace only (and a
  character that a tokenizer splits between tokens, which two windows may then share).

Tokens are the run's tokenizer's (:mod:`groundkit.judgments.corpus._tokenizers`): ``words``
(runs of non-whitespace characters, the default), a tiktoken encoding or a Hugging Face
tokenizer. Chunks stay character spans cut on the tokens' boundaries.

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
    Windows of ``size`` tokens of the run's tokenizer overlapping by ``overlap`` tokens; a span
    runs from its first token's start to its last token's end, so it holds exactly the tokens
    of its window (with ``words``: runs of non-whitespace characters, as before tokenizers).
    A window of whitespace tokens only is skipped.
``sentences``
    Sentences found by a regular expression (a ``.``, ``!`` or ``?`` followed by whitespace and
    an upper-case letter, digit or opening quote, or a blank line), not after common
    abbreviations (``e.g.``, ``Dr.``, ``Fig.``...) or single-letter initials. Consecutive
    sentences are grouped up to ``max_sentences``, ``max_chars`` and ``max_tokens``; a sentence
    longer than ``max_chars`` is cut like ``chars`` without overlap, and one of more than
    ``max_tokens`` tokens into windows of ``max_tokens`` tokens.
``paragraphs``
    Paragraphs separated by blank lines; a markdown heading line (``#`` to ``######``) always
    starts a new chunk, so a section's heading stays with its text. Consecutive paragraphs of a
    section are merged while the span stays within ``max_chars`` and ``max_tokens``; a longer
    paragraph is cut like ``chars`` without overlap, or into windows of ``max_tokens`` tokens.

A chunk's token count is the number of the document's tokens holding one of its characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
    model_validator,
)

from groundkit.judgments._numbers import WholeNumber
from groundkit.judgments.corpus._token_windows import TokenIndex
from groundkit.judgments.corpus._tokenizers import WORDS, Tokenizer

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
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class _TokenLimited(BaseModel):
    """A chunker with an optional ``max_tokens``, dumped without it when it is not set.

    So a config without a token limit dumps, and hashes, as it did before tokenizers.
    """

    @model_serializer(mode="wrap")
    def _no_token_limit_unchanged(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("max_tokens") is None:
            data.pop("max_tokens", None)
        return data


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
    """Windows of ``size`` tokens of the run's tokenizer, overlapping by ``overlap`` tokens.

    Attributes:
        size: Tokens per chunk (of the run's tokenizer: whitespace-separated words by default).
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


class SentencesChunker(_TokenLimited):
    """Groups of consecutive sentences.

    Attributes:
        max_sentences: Most sentences per chunk (``None``: no limit in sentences).
        max_chars: Most characters per chunk (``None``: no limit in characters).
        max_tokens: Most tokens of the run's tokenizer per chunk (``None``: no limit in tokens).
    """

    model_config = _FROZEN
    kind: Literal["sentences"] = "sentences"
    max_sentences: WholeNumber | None = Field(default=5, gt=0)
    max_chars: WholeNumber | None = Field(default=None, gt=0)
    max_tokens: WholeNumber | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _some_limit(self) -> SentencesChunker:
        if self.max_sentences is None and self.max_chars is None and self.max_tokens is None:
            raise ValueError("set max_sentences, max_chars, max_tokens or several")
        return self


class ParagraphsChunker(_TokenLimited):
    """Blank-line paragraphs and markdown sections, merged up to ``max_chars`` and ``max_tokens``.

    Attributes:
        max_chars: Most characters per chunk (default 1000; ``None``, the default when
            ``max_tokens`` is given: no limit in characters).
        max_tokens: Most tokens of the run's tokenizer per chunk (``None``: no limit in tokens).
    """

    model_config = _FROZEN
    kind: Literal["paragraphs"] = "paragraphs"
    max_chars: WholeNumber | None = Field(default=1000, gt=0)
    max_tokens: WholeNumber | None = Field(default=None, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _tokens_alone(cls, data: object) -> object:
        # A limit in tokens alone is that limit, not tokens and the default characters.
        if isinstance(data, dict) and data.get("max_tokens") is not None:
            return {"max_chars": None, **data}
        return data

    @model_validator(mode="after")
    def _some_limit(self) -> ParagraphsChunker:
        if self.max_chars is None and self.max_tokens is None:
            raise ValueError("set max_chars, max_tokens or both")
        return self


ChunkerConfig = Annotated[
    DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker,
    Field(discriminator="kind"),
]
"""A chunker's settings, discriminated by ``kind``."""

_CHUNKER_ADAPTER: TypeAdapter[
    DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker
] = TypeAdapter(ChunkerConfig)


def validate_chunker_config(
    data: object,
) -> DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker:
    """A chunker config from a mapping, for callers that render pydantic's errors themselves.

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


def _chunk_tokens(
    text: str, size: int, overlap: int, tokenizer: Tokenizer
) -> list[tuple[int, int]]:
    return TokenIndex(text, tokenizer).windows(0, len(text), size, overlap)


# Words after which a period does not end a sentence (compared lower-cased, without the dot).
_ABBREVIATIONS = frozenset(
    (  # noqa: SIM905  # one word list, read as text
        "mr mrs ms dr prof sr jr st vs etc al fig figs eq eqs no nos vol pp ca cf approx dept est "
        "inc ltd co corp e.g i.e e.i viz resp incl jan feb mar apr jun jul aug sep sept oct nov "
        "dec mt ft gen col lt sgt capt rev hon u.s u.k ph.d m.d b.sc m.sc"
    ).split()
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


@dataclass(frozen=True)
class _Limits:
    """How big a group of units may grow: characters and tokens (``None``: no limit)."""

    max_chars: int | None
    max_tokens: int | None
    tokens: TokenIndex | None

    @classmethod
    def of(
        cls, text: str, max_chars: int | None, max_tokens: int | None, tokenizer: Tokenizer
    ) -> _Limits:
        tokens = TokenIndex(text, tokenizer) if max_tokens is not None else None
        return cls(max_chars, max_tokens, tokens)

    def fits(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` is within both limits."""
        if self.max_chars is not None and end - start > self.max_chars:
            return False
        return (
            self.tokens is None
            or self.max_tokens is None
            or (self.tokens.count(start, end) <= self.max_tokens)
        )

    def cut(self, text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Each unit over a limit cut: like ``chars`` without overlap, then into token windows."""
        out: list[tuple[int, int]] = []
        for start, end in spans:
            if self.max_chars is not None and end - start > self.max_chars:
                out.extend(_char_windows(text, start, end, self.max_chars, 0))
            else:
                out.append((start, end))
        if self.tokens is None or self.max_tokens is None:
            return out
        tokens, size = self.tokens, self.max_tokens
        cut: list[tuple[int, int]] = []
        for start, end in out:
            if tokens.count(start, end) > size:
                cut.extend(tokens.windows(start, end, size, 0))
            else:
                cut.append((start, end))
        return cut


def _group(
    units: list[tuple[int, int]],
    max_units: int | None,
    limits: _Limits,
    breaks_before: frozenset[int] = frozenset(),
) -> list[tuple[int, int]]:
    """Merge consecutive units while within every limit.

    A unit index in ``breaks_before`` always starts a new group.
    """
    groups: list[tuple[int, int]] = []
    count = 0
    for index, (start, end) in enumerate(units):
        if groups and index not in breaks_before:
            group_start = groups[-1][0]
            fits_units = max_units is None or count < max_units
            if fits_units and limits.fits(group_start, end):
                groups[-1] = (group_start, end)
                count += 1
                continue
        groups.append((start, end))
        count = 1
    return groups


def _chunk_sentences(
    text: str, config: SentencesChunker, tokenizer: Tokenizer
) -> list[tuple[int, int]]:
    limits = _Limits.of(text, config.max_chars, config.max_tokens, tokenizer)
    return _group(limits.cut(text, _sentence_spans(text)), config.max_sentences, limits)


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)", re.MULTILINE)


def _chunk_paragraphs(
    text: str, config: ParagraphsChunker, tokenizer: Tokenizer
) -> list[tuple[int, int]]:
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
    limits = _Limits.of(text, config.max_chars, config.max_tokens, tokenizer)
    units: list[tuple[int, int]] = []
    breaks: set[int] = set()
    for start, end in paragraphs:
        if start in headings:
            breaks.add(len(units))
        units.extend(limits.cut(text, [(start, end)]))
    return _group(units, None, limits, frozenset(breaks))


def _chunk_document(text: str, config: object, tokenizer: Tokenizer) -> list[tuple[int, int]]:
    bounds = _content_bounds(text)
    return [] if bounds is None else [bounds]


def _chunk_chars_config(
    text: str, config: CharsChunker, tokenizer: Tokenizer
) -> list[tuple[int, int]]:
    return _chunk_chars(text, config.size, config.overlap)


def _chunk_tokens_config(
    text: str, config: TokensChunker, tokenizer: Tokenizer
) -> list[tuple[int, int]]:
    return _chunk_tokens(text, config.size, config.overlap, tokenizer)


_AnyChunker = DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker
_Cutter = Callable[[str, _AnyChunker, Tokenizer], list[tuple[int, int]]]

CHUNKERS: dict[str, _Cutter] = {
    "document": _chunk_document,
    "chars": _chunk_chars_config,  # type: ignore[dict-item]  # called with its own config
    "tokens": _chunk_tokens_config,  # type: ignore[dict-item]
    "sentences": _chunk_sentences,  # type: ignore[dict-item]
    "paragraphs": _chunk_paragraphs,  # type: ignore[dict-item]
}
"""Each chunker kind's cutting function: ``(text, config, tokenizer) -> spans``."""


def uses_tokenizer(config: _AnyChunker) -> bool:
    """Whether the chunker counts tokens (``tokens``, or a ``max_tokens`` limit)."""
    return config.kind == "tokens" or getattr(config, "max_tokens", None) is not None


def chunk_text(
    text: str, config: _AnyChunker, tokenizer: Tokenizer | None = None
) -> list[tuple[int, int]]:
    """Cut one text into chunk spans.

    Guarantees: spans lie within the text, are non-empty, ordered by start and end, and cover
    every non-whitespace character; consecutive spans overlap by exactly ``overlap`` characters
    (``chars``) or tokens (``tokens``) and not at all for the other kinds, except across a
    whitespace run longer than a chunk, which is skipped.

    Rules: ``document`` is the text from its first to its last non-whitespace character.
    ``chars`` windows hold at most ``size`` characters; a window that does not reach the end is
    cut at the last word end (non-whitespace followed by whitespace) within its final fifth, or
    at exactly ``size`` characters when there is none; the next window starts ``overlap``
    characters before the cut. ``tokens`` windows hold ``size`` tokens of ``tokenizer``, cut on
    its token boundaries. ``sentences`` groups sentences (split after ``.``, ``!`` or ``?``
    followed by an upper-case letter, digit or opening quote, or at a blank line; not after
    abbreviations such as ``e.g.``, ``Dr.``, ``Fig.`` or single-letter initials) up to
    ``max_sentences``, ``max_chars`` and ``max_tokens``. ``paragraphs`` merges blank-line
    paragraphs up to ``max_chars`` and ``max_tokens``, a markdown heading always starting a
    new chunk. A sentence or paragraph longer than ``max_chars`` is cut like ``chars`` without
    overlap, and one of more than ``max_tokens`` tokens into windows of ``max_tokens`` tokens.

    Args:
        text: The document text.
        config: The chunker settings.
        tokenizer: Whose tokens ``tokens`` and ``max_tokens`` count (default: ``words``, runs of
            non-whitespace characters).

    Returns:
        Ordered, non-empty ``(start, end)`` spans of ``text`` covering every non-whitespace
        character; empty for a whitespace-only text.
    """
    return CHUNKERS[config.kind](text, config, WORDS if tokenizer is None else tokenizer)


def chunk_corpus(
    corpus: Mapping[str, str], config: _AnyChunker, tokenizer: Tokenizer | None = None
) -> list[Chunk]:
    """Cut every document of a corpus, in the corpus's order.

    Args:
        corpus: Document id to text (a :class:`~groundkit.judgments.Corpus` or any mapping).
        config: The chunker settings.
        tokenizer: Whose tokens the chunker counts (default: ``words``); see :func:`chunk_text`.

    Returns:
        The chunks, document by document, each document's chunks in text order.
    """
    cut = CHUNKERS[config.kind]
    tokens = WORDS if tokenizer is None else tokenizer
    chunks: list[Chunk] = []
    for doc, text in corpus.items():
        chunks.extend(Chunk(doc, start, end) for start, end in cut(text, config, tokens))
    return chunks
