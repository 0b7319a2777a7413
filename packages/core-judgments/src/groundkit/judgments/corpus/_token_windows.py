"""A text's tokens, for the chunkers that count them: windows and counts over character spans.

Token windows are cut on the tokenizer's own boundaries: a window of tokens ``i..j`` is the
span from token ``i``'s start to token ``j``'s end (clipped to the unit being cut), so a chunk
holds exactly the tokens of its window, whitespace tokens included. A window holding only
whitespace is skipped. A window does not end between the pieces of a character split between
tokens (the empty spans of :mod:`groundkit.judgments.corpus._tokenizers`): it ends before them,
and the next window starts with them, so its count of tokens is exact (a character of more
tokens than a window holds is the exception: its window runs to the character's last piece).
Two windows starting at the same character (pieces of one character between them) are one
chunk.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from groundkit.judgments.corpus._tokenizers import Tokenizer

__all__ = ["TokenIndex"]


class TokenIndex:
    """The tokens of one text: counts and windows over any span of it."""

    def __init__(self, text: str, tokenizer: Tokenizer) -> None:
        self.text = text
        offsets = tokenizer.offsets(text)
        self.starts = [start for start, _ in offsets]
        self.ends = [end for _, end in offsets]

    def __len__(self) -> int:
        return len(self.starts)

    def between(self, lo: int, hi: int) -> tuple[int, int]:
        """Indices ``[i, j)`` of the tokens holding a character of ``text[lo:hi]``.

        A token overlaps the span, or is an empty piece of the character at ``lo``.
        """
        first = bisect_right(self.ends, lo)
        while first > 0 and self.starts[first - 1] == self.ends[first - 1] == lo:
            first -= 1
        return first, max(first, bisect_left(self.starts, hi))

    def count(self, lo: int, hi: int) -> int:
        """How many tokens hold a character of ``text[lo:hi]``."""
        first, stop = self.between(lo, hi)
        return stop - first

    def windows(self, lo: int, hi: int, size: int, overlap: int) -> list[tuple[int, int]]:
        """Spans of ``size`` tokens overlapping by ``overlap``, clipped to ``text[lo:hi]``.

        Windows of whitespace only are left out; two windows starting at one character merge.
        """
        first, stop = self.between(lo, hi)
        spans: list[tuple[int, int]] = []
        while first < stop:
            last = self._last_whole(first, min(first + size, stop) - 1, overlap, stop)
            start, end = max(self.starts[first], lo), min(self.ends[last], hi)
            if self.text[start:end].strip():
                if spans and spans[-1][0] == start:
                    spans[-1] = (start, max(end, spans[-1][1]))
                else:
                    spans.append((start, end))
            if last == stop - 1:
                break
            first = last + 1 - overlap
        return spans

    def _last_whole(self, first: int, last: int, overlap: int, stop: int) -> int:
        """``last`` moved back before the pieces of a split character it would end among.

        Not so far that the window would hold ``overlap`` tokens or fewer (it must advance):
        then forward to the character's last piece instead (a window longer than asked).
        """
        if last + 1 >= stop:
            return last
        end = last
        while end >= first and self.starts[end] == self.ends[end] == self.starts[last + 1]:
            end -= 1
        if end - first + 1 > overlap:
            return end
        while last + 1 < stop and self.starts[last] == self.ends[last] == self.starts[last + 1]:
            last += 1
        return last
