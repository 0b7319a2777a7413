"""Word-level text helpers shared by the filters, the classifier and the assessment."""

from __future__ import annotations

import re

__all__ = ["STOP_WORDS", "content_words", "jaccard", "word_set", "words"]

# Letters and digits, with inner apostrophes kept ("don't", "o'clock"); underscores are not words.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

#: Function words ignored when comparing answers (so "the" and "of" do not make two answers match).
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "about",
        "into",
        "over",
        "under",
        "and",
        "or",
        "but",
        "nor",
        "so",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "done",
        "has",
        "have",
        "had",
        "having",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "their",
        "they",
        "them",
        "he",
        "him",
        "his",
        "she",
        "her",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "as",
        "than",
        "then",
        "if",
        "not",
        "no",
        "yes",
        "also",
        "just",
        "only",
        "very",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "which",
        "what",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
    ]
)


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order (letters and digits; inner apostrophes kept)."""
    return [match.group(0).replace("’", "'") for match in _WORD.finditer(text.casefold())]


def word_set(text: str) -> frozenset[str]:
    """The set of lower-cased words of ``text``."""
    return frozenset(words(text))


def content_words(text: str) -> frozenset[str]:
    """Words of ``text`` that are not function words; all words when only function words remain."""
    every = word_set(text)
    content = every - STOP_WORDS
    return content or every


def jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    """Jaccard similarity of two word sets: shared words over all words (two empty sets: 1.0)."""
    if not first and not second:
        return 1.0
    return len(first & second) / len(first | second)
