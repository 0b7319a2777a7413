"""Dangling references: a question leaning on a pronoun that nothing in it introduces."""

from __future__ import annotations

from groundkit.evalset.filters._text import words

__all__ = ["dangling_pronoun"]


_PRONOUNS = frozenset(
    [
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "they",
        "them",
        "their",
        "theirs",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
    ]
)
# Words that can come before a pronoun without offering a noun it could refer to: question
# words, auxiliaries, prepositions, articles, conjunctions, request verbs, quantity words.
_NO_ANTECEDENT = frozenset(
    [
        "what",
        "what's",
        "which",
        "who",
        "who's",
        "whom",
        "whose",
        "when",
        "when's",
        "where",
        "where's",
        "why",
        "how",
        "how's",
        "is",
        "isn't",
        "are",
        "aren't",
        "was",
        "wasn't",
        "were",
        "weren't",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "doesn't",
        "did",
        "didn't",
        "done",
        "can",
        "can't",
        "could",
        "couldn't",
        "should",
        "shouldn't",
        "would",
        "wouldn't",
        "will",
        "won't",
        "shall",
        "may",
        "might",
        "must",
        "has",
        "hasn't",
        "have",
        "haven't",
        "had",
        "hadn't",
        "a",
        "an",
        "the",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "about",
        "into",
        "of",
        "to",
        "under",
        "over",
        "after",
        "before",
        "during",
        "since",
        "until",
        "and",
        "or",
        "but",
        "so",
        "also",
        "then",
        "exactly",
        "actually",
        "please",
        "tell",
        "me",
        "us",
        "explain",
        "describe",
        "list",
        "give",
        "show",
        "summarise",
        "summarize",
        "name",
        "many",
        "much",
        "long",
        "often",
        "old",
        "far",
        "big",
        "large",
        "i",
        "we",
        "you",
        "do",
        "i'm",
    ]
)
# "it" that is a grammatical placeholder ("is it true that ...", "how long does it take").
_EXPLETIVE_AFTER_IT = frozenset(
    [
        "true",
        "possible",
        "necessary",
        "required",
        "allowed",
        "okay",
        "ok",
        "mandatory",
        "likely",
        "safe",
        "worth",
        "legal",
        "permitted",
        "acceptable",
        "take",
        "takes",
        "took",
        "cost",
        "costs",
        "matter",
        "matters",
        "proven",
        "known",
        "unknown",
        "clear",
        "unclear",
        "believed",
        "thought",
        "important",
        "common",
        "rare",
        "difficult",
        "easy",
        "estimated",
        "reported",
        "recommended",
    ]
)
_TIME_NOUNS = frozenset(
    [
        "year",
        "year's",
        "month",
        "month's",
        "week",
        "week's",
        "quarter",
        "quarter's",
        "season",
        "time",
        "morning",
        "day",
        "today",
    ]
)


_PLACEHOLDER_VERBS = frozenset(["take", "takes", "took", "cost", "costs", "matter", "matters"])
_COMPLEMENT = frozenset(["that", "to", "for", "whether", "if"])


def _placeholder_it(rest: list[str]) -> bool:
    """Whether "it" before ``rest`` is a placeholder.

    "How long does it take", or "it (is|was) (not) <adjective> that/to/for/whether/if ...":
    the adjective alone ("Is it mandatory?") still leaves "it" pointing at nothing.
    """
    skipped = {"is", "was", "'s", "not", "isn't", "wasn't"}
    words_after = [word for word in rest[:6] if word not in skipped]
    if not words_after or words_after[0] not in _EXPLETIVE_AFTER_IT:
        return False
    if words_after[0] in _PLACEHOLDER_VERBS:
        return True
    return len(words_after) > 1 and words_after[1] in _COMPLEMENT


def dangling_pronoun(question: str) -> str | None:
    """The pronoun that dangles in ``question``, or ``None``.

    Heuristic: a reference pronoun or demonstrative (it, its, this, that, these, those, they,
    them, their, he, him, his, she, her...) dangles when every word before it is a function word
    (a question word, auxiliary, preposition, article, conjunction or request verb), so the
    question names nothing it could refer to: "What does it cover?", "Is this mandatory?",
    "When did they change that policy?". Once a content word appears ("What is the leave
    policy and who approves it?") later pronouns are assumed to refer back to it. Exempt:
    placeholder "it" ("Is it true that...", "It is not proven that...", "How long does it
    take...") and demonstratives of time ("this year"). Known misses: a pronoun whose
    antecedent is itself vague ("the thing that it mentions"); known false alarms: placeholder
    uses not in the exemption list.
    """
    tokens = words(question)
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if token in _PRONOUNS:
            if token == "it" and _placeholder_it(tokens[index + 1 :]):
                continue
            if token in {"this", "that", "these", "those"} and following in _TIME_NOUNS:
                continue
            return token
        if token not in _NO_ANTECEDENT:
            return None
    return None
