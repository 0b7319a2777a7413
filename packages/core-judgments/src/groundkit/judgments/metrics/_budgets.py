"""Context budgets: the hits read within ``N`` characters (``@Nc``) or ``N`` tokens (``@Nt``).

Both read a query's hits in rank order while the budget lasts: hit ``i`` is read when the hits
before it hold fewer than ``N`` units, and the hit that would exceed the budget is cut to its
first remaining units. A hit that is not read keeps nothing (its span becomes empty), so it can
touch no gold quote; the number of hits read is the ``m`` of the budget's ``ndcg@m``.

**Characters** are counted on the spans alone (``end - start``): exactly ``min(N, total)``
characters are read.

**Tokens** are counted by a tokenizer (:class:`~groundkit.judgments.corpus.Tokenizer`, the
run's ``tokenizer`` setting in the harness) on each hit's own text,
``texts[doc][start:end]``, tokenized on its own, as a reader given that passage would see it.
The hit that would exceed the budget is cut after its first remaining tokens: its span ends at
the end of the last token kept (a character offset, from the tokenizer's offsets), so overlap
with the gold is still counted in characters. A hit of no token (empty, or only whitespace for
``words``) is read whole while tokens remain, at no cost. Each span is tokenized once per
:class:`HitTokens` (the tokens of a chunk retrieved for many queries are counted once), and
only the hits a budget reaches are tokenized.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.corpus._token_windows import TokenIndex
from groundkit.judgments.corpus._tokenizers import WORDS, Tokenizer
from groundkit.judgments.metrics._spec import MetricSpec
from groundkit.judgments.metrics._tables import HitTable

__all__ = ["Budget", "HitTokens", "budget_ends", "budget_groups", "char_budget_ends"]

IntArray = npt.NDArray[np.int64]

Budget = tuple[str, int]
"""A budget: its unit (``"c"`` characters, ``"t"`` tokens) and its size ``N``."""


class HitTokens:
    """The texts hits are cut from and the tokenizer that counts their tokens (``@Nt`` metrics).

    Attributes:
        texts: Document id to text (a :class:`~groundkit.judgments.Corpus` will do).
        tokenizer: Whose tokens are counted.
    """

    def __init__(self, texts: Mapping[str, str], tokenizer: Tokenizer | None = None) -> None:
        """Keep the texts and the tokenizer.

        Args:
            texts: Document id to text; every document a hit names must be there.
            tokenizer: Whose tokens are counted (default: ``words``, the default of a run).
        """
        self.texts = texts
        self.tokenizer: Tokenizer = WORDS if tokenizer is None else tokenizer
        self._ends: dict[tuple[str, int, int], tuple[int, ...]] = {}

    def __repr__(self) -> str:
        return f"HitTokens({len(self.texts)} texts, tokenizer={self.tokenizer.name!r})"

    def token_ends(self, doc: str, start: int, end: int) -> tuple[int, ...]:
        """Where each token of the span's text ends, as character offsets in the document.

        Args:
            doc: The document id.
            start: Start of the span.
            end: End of the span (exclusive).

        Returns:
            One offset per token of ``texts[doc][start:end]`` (tokenized on its own), in order.

        Raises:
            JudgmentError: The document is not in the texts.
        """
        key = (doc, start, end)
        found = self._ends.get(key)
        if found is None:
            text = self.texts.get(doc)
            if text is None:
                raise JudgmentError(
                    f"a hit names document {doc!r}, which is not in the texts its tokens are "
                    "counted on"
                )
            index = TokenIndex(text[start:end], self.tokenizer)
            found = tuple(start + token_end for token_end in index.ends)
            self._ends[key] = found
        return found

    def budget_ends(self, hits: HitTable, budget: int) -> tuple[IntArray, IntArray]:
        """Hit ends cut to a budget of ``budget`` tokens, and the hits read per query.

        Args:
            hits: The ranked hits.
            budget: The number of tokens ``N >= 1``.

        Returns:
            The end of every hit row as read (its start when not read), and the number of
            hits read of each query of ``hits``.
        """
        ends = hits.starts.copy()
        read = np.zeros(len(hits.query_ids), dtype=np.int64)
        offsets = hits.offsets.tolist()
        codes, starts, stops = hits.docs.tolist(), hits.starts.tolist(), hits.ends.tolist()
        for query in range(len(hits.query_ids)):
            left = budget
            row = offsets[query]
            while left > 0 and row < offsets[query + 1]:
                tokens = self.token_ends(hits.doc_ids[codes[row]], starts[row], stops[row])
                ends[row] = stops[row] if len(tokens) <= left else tokens[left - 1]
                left -= len(tokens)
                row += 1
            read[query] = row - offsets[query]
        return ends, read


def char_budget_ends(hits: HitTable, budget: int) -> tuple[IntArray, IntArray]:
    """Hit ends cut to a budget of ``budget`` characters, and the hits read per query.

    Args:
        hits: The ranked hits.
        budget: The number of characters ``N >= 1``.

    Returns:
        The end of every hit row as read (its start when not read), and the number of hits
        read of each query of ``hits``.
    """
    lengths = hits.ends - hits.starts
    counts = np.diff(hits.offsets)
    totals = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=totals[1:])
    row_query = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    before = totals[:-1] - totals[hits.offsets[:-1]][row_query]
    remaining = budget - before
    taken = np.clip(np.minimum(lengths, remaining), 0, None)
    read = np.bincount(row_query[remaining > 0], minlength=len(counts)).astype(np.int64)
    return hits.starts + taken, read


def budget_groups(
    specs: Sequence[MetricSpec], tokens: HitTokens | None
) -> list[tuple[Budget, list[MetricSpec]]]:
    """The budget metrics grouped by budget (characters first, then tokens; smallest first).

    Raises:
        JudgmentError: A token budget without ``tokens`` to count them with.
    """
    groups: dict[Budget, list[MetricSpec]] = {}
    for spec in specs:
        if spec.budget_chars is not None:
            groups.setdefault(("c", spec.budget_chars), []).append(spec)
        elif spec.budget_tokens is not None:
            if tokens is None:
                raise JudgmentError(
                    f"metric {spec.name!r} counts the tokens of the hit texts: pass "
                    "tokens=HitTokens(texts, tokenizer)"
                )
            groups.setdefault(("t", spec.budget_tokens), []).append(spec)
    return sorted(groups.items())


def budget_ends(
    hits: HitTable, budget: Budget, tokens: HitTokens | None
) -> tuple[IntArray, IntArray]:
    """Hit ends cut to a budget of either unit, and the hits read per query of ``hits``."""
    unit, size = budget
    if unit == "t":
        assert tokens is not None  # checked by budget_groups
        return tokens.budget_ends(hits, size)
    return char_budget_ends(hits, size)
