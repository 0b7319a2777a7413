"""Locating a hit given as text in the corpus: exactly, then through the tolerant normal form."""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from groundkit.judgments.corpus._corpus import Corpus
from groundkit.judgments.gold._resolve import (
    Span,
    _as_corpus,
    _cached_normalised,
    _corpus_id,
    _match,
    _normalised_quote,
)

__all__ = ["locate_text"]


# Locating hit texts ---------------------------------------------------------------------------

# Hits given as text often start where their document starts (whole-document or first-chunk
# hits); those are found through a sorted index of every document's first characters.
_PREFIX = 64


@dataclass(frozen=True, slots=True)
class _Concatenation:
    """Every document joined by NUL, with each document's first offset, for one-pass search."""

    text: str
    firsts: list[int]
    docs: list[str]

    def locate(self, start: int, end: int) -> tuple[int, int, int] | None:
        """``(document index, local start, local end)`` if the range lies inside one document."""
        index = bisect.bisect_right(self.firsts, start) - 1
        first = self.firsts[index]
        limit = self.firsts[index + 1] - 1 if index + 1 < len(self.firsts) else len(self.text)
        if end > limit:
            return None
        return index, start - first, end - first


def _concatenate(docs: Sequence[str], texts: Sequence[str]) -> _Concatenation:
    firsts: list[int] = []
    position = 0
    for text in texts:
        firsts.append(position)
        position += len(text) + 1
    return _Concatenation("\x00".join(texts), firsts, list(docs))


def _prefix_index(corpus: Corpus) -> tuple[list[str], list[str]]:
    """Documents' first characters, sorted, with their ids.

    A range query over the sorted prefixes finds every document that starts with a given
    text, whatever the text's length.
    """
    index: tuple[list[str], list[str]] | None = corpus._derived.get("prefix_index")
    if index is None:
        pairs = sorted((text[:_PREFIX], doc) for doc, text in corpus.items())
        index = ([prefix for prefix, _ in pairs], [doc for _, doc in pairs])
        corpus._derived["prefix_index"] = index
    return index


def _starting_with(corpus: Corpus, text: str) -> str | None:
    prefixes, docs = _prefix_index(corpus)
    head = text[:_PREFIX]
    found: str | None = None
    for position in range(bisect.bisect_left(prefixes, head), len(prefixes)):
        if not prefixes[position].startswith(head):
            break
        doc = docs[position]
        if (found is None or doc < found) and corpus[doc].startswith(text):
            found = doc
    return found


def _raw_concatenation(corpus: Corpus) -> _Concatenation:
    found: _Concatenation | None = corpus._derived.get("raw_concatenation")
    if found is None:
        docs = list(corpus)
        found = _concatenate(docs, [corpus[doc] for doc in docs])
        corpus._derived["raw_concatenation"] = found
    return found


def _normalised_concatenation(corpus: Corpus) -> _Concatenation:
    found: _Concatenation | None = corpus._derived.get("normalised_concatenation")
    if found is None:
        docs = list(corpus)
        found = _concatenate(docs, [_cached_normalised(corpus, doc).text for doc in docs])
        corpus._derived["normalised_concatenation"] = found
    return found


def _search_all(concatenation: _Concatenation, needle: str) -> Iterator[tuple[int, int, int]]:
    position = concatenation.text.find(needle)
    while position >= 0:
        located = concatenation.locate(position, position + len(needle))
        if located is not None:
            yield located
        position = concatenation.text.find(needle, position + 1)


def locate_text(corpus: Corpus | Mapping[str, str], doc: str | None, text: str) -> Span | None:
    """Find where a hit given only as text (LangChain, LlamaIndex...) lies in the corpus.

    Uses the same exact-then-tolerant matching as quote resolution.

    Args:
        corpus: The corpus the retriever indexed.
        doc: The hit's document id when the retriever reports it; ``None`` searches the whole
            corpus (in id order). Whole documents and text starting at a document's start are
            found through a prefix index; other text through one search over all documents.
        text: The hit's text.

    Returns:
        The first occurrence as a :class:`Span`, or ``None`` if the text is blank, the document
        unknown, or nothing matches. Without ``doc``, text that begins a document is attributed
        to that document (the first such in id order: a chunk equal to a document's start most
        likely comes from it); otherwise the first document in id order that contains it wins.
    """
    resolved_corpus = _as_corpus(corpus)
    if not text.strip():
        return None
    if doc is not None:
        known = _corpus_id(resolved_corpus, doc)
        if known is None:
            return None
        spans, _ = _match(
            resolved_corpus[known],
            text,
            lambda: _cached_normalised(resolved_corpus, known),
            first_only=True,
        )
        return Span(known, *spans[0]) if spans else None
    starting = _starting_with(resolved_corpus, text)
    if starting is not None:
        return Span(starting, 0, len(text))
    raw = _raw_concatenation(resolved_corpus)
    for index, start, end in _search_all(raw, text):
        return Span(raw.docs[index], start, end)
    target = _normalised_quote(text)
    if not target:
        return None
    normalised = _normalised_concatenation(resolved_corpus)
    for index, start, end in _search_all(normalised, target):
        candidate = normalised.docs[index]
        span = _cached_normalised(resolved_corpus, candidate).original_span(start, end)
        if span is not None:
            return Span(candidate, *span)
    return None
