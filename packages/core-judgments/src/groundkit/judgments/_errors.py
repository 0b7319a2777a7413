"""The error hierarchy of groundkit-core-judgments.

Every bad-input error of the distribution is a :class:`JudgmentError` (a ``ValueError``), so
callers can catch one class; its ``str`` is always a single line of the form
``"<path>:<line>: <id>: <message>"`` with the parts that are unknown left out.

:class:`RunFailure` is the other branch, for the distributions whose runs can fail on good
input (a retriever that crashed, an endpoint that did not answer): a ``RuntimeError``, never a
``ValueError``, so no ``except ValueError`` can mistake a failed run for bad input. Both
render and pickle the same way.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

__all__ = ["JudgmentError", "ReportError", "RunFailure", "UnsafePathError", "one_line"]

# Characters that would break the one-line promise besides the C0/C1 controls ("Cc"): the
# line and paragraph separators. Format characters ("Cf": bidi controls U+200E/F, U+061C,
# U+202A-U+202E, U+2066-U+2069; zero-width U+200B-U+200D, U+2060, U+FEFF; soft hyphen...)
# are escaped too: they would reorder or hide text in a terminal.
_LINE_BREAKING = frozenset("\u2028\u2029\u0085")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf"})


def one_line(text: str) -> str:
    r"""Return ``text`` safe to show on one line of a terminal or log.

    The one rule for showing user data (an id, a quote, a file name) in a message: C0 and C1
    control characters and line breaks become Python escapes (``\n``, ``\x00``,
    ``\x85``...), and so do the invisible format characters that reorder or hide text
    (bidi controls such as ``\u202e``, zero-width characters such as ``\u200b`` and
    ``\ufeff``); a byte that was not UTF-8 in a file name (``surrogateescape``) is shown as
    ``\xff``, a lone surrogate as ``\udc00``. Every part of a :class:`JudgmentError` goes
    through it, so user data can never split, corrupt, disguise or fail to print the
    one-line report. Printable text, any script, is returned unchanged.

    Args:
        text: The text to show.

    Returns:
        ``text`` with the characters above escaped.
    """
    if text.isprintable():
        return text
    out: list[str] = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            # A byte that was not UTF-8 in a file name (Python's surrogateescape): show the byte.
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")  # a lone surrogate could not even be printed
        elif char in _LINE_BREAKING or unicodedata.category(char) in _HIDDEN_CATEGORIES:
            out.append(repr(char)[1:-1])
        else:
            out.append(char)
    return "".join(out)


class _LocatedError(Exception):
    """A one-line, pickle-safe error naming its file, line and id (see the subclasses).

    Args:
        message: What is wrong, in one sentence (line breaks are escaped).
        path: The file concerned, when known.
        line: The 1-based line number in ``path``, when known.
        item_id: The query id or document id concerned, when known.

    Attributes:
        message: The bare message, without location.
        path: The file as a string (``os.fspath``), or ``None``.
        line: The 1-based line number, or ``None``.
        item_id: The query or document id, or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        item_id: str | None = None,
    ) -> None:
        self.message = message
        self.path: str | None = None if path is None else os.fspath(path)
        self.line = line
        self.item_id = item_id
        super().__init__(self._render())

    def _render(self) -> str:
        location = ""
        if self.path is not None:
            location = one_line(self.path)
            if self.line is not None:
                location += f":{self.line}"
        elif self.line is not None:
            location = f"line {self.line}"
        parts = [part for part in (location, self.item_id) if part is not None and part != ""]
        rendered = [one_line(part) for part in parts]
        rendered.append(one_line(self.message))
        return ": ".join(rendered)

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructor arguments are not in self.args; keep pickling (and therefore
        # multiprocessing) faithful to every attribute.
        return (
            _rebuild,
            (type(self), self.message, self.path, self.line, self.item_id),
        )


def _rebuild(
    cls: type[_LocatedError],
    message: str,
    path: str | None,
    line: int | None,
    item_id: str | None,
) -> _LocatedError:
    return cls(message, path=path, line=line, item_id=item_id)


class JudgmentError(_LocatedError, ValueError):
    """Bad input to groundkit.judgments: base class of every error of the distribution.

    Args:
        message: What is wrong, in one sentence (line breaks are escaped).
        path: The file concerned, when known.
        line: The 1-based line number in ``path``, when known.
        item_id: The query id or document id concerned, when known.
    """


class RunFailure(_LocatedError, RuntimeError):  # noqa: N818  (a failure, not an "error" in the input)
    """A run that could not be completed on good input: not a ``ValueError``.

    Args:
        message: What went wrong, in one sentence (line breaks are escaped).
        path: The file concerned, when known.
        line: The 1-based line number in ``path``, when known.
        item_id: The query or stage concerned, when known.
    """


class UnsafePathError(JudgmentError):
    """A file or folder name, or a resolved path, that is unsafe or not portable."""


class ReportError(JudgmentError):
    """A report that does not follow the report schema, or has an unsupported version."""
