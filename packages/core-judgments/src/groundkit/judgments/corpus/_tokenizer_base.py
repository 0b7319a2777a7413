"""The tokenizer contract, the ``words`` kind, what a kind is, the ``tokens`` extra's check.

What the built-in kinds (:mod:`groundkit.judgments.corpus._tokenizer_kinds`) and the registry
(:mod:`groundkit.judgments.corpus._tokenizers`) both need, kept apart so that neither imports
the other's module.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from groundkit.judgments._errors import JudgmentError

__all__ = [
    "TOKENS_INSTALL_HINT",
    "WORDS",
    "Tokenizer",
    "TokenizerKind",
    "WordsTokenizer",
    "check_extra",
]

TOKENS_INSTALL_HINT = (
    "pip install 'groundkit-cli[tokens]' (or 'groundkit-core-judgments[tokens]' without the CLI)"
)
"""How to install the ``tokens`` extra (tiktoken and tokenizers)."""


@runtime_checkable
class Tokenizer(Protocol):
    """Where a text's tokens lie (see the module documentation for the contract).

    Attributes:
        name: What the tokenizer is called in settings and reports (``"cl100k_base"``).
        version: What pins its rule down: the library version and a digest of its vocabulary.
    """

    @property
    def name(self) -> str:
        """What the tokenizer is called in settings and reports."""
        ...

    @property
    def version(self) -> str:
        """The library version and a digest of the vocabulary (``"1"`` for ``words``)."""
        ...

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """The ``(start, end)`` character offsets of each token of ``text``, in order."""
        ...


_WORD = re.compile(r"\S+")


class WordsTokenizer:
    """Runs of non-whitespace characters: the rule of ``tokens:N`` before tokenizers."""

    @property
    def name(self) -> str:
        """``"words"``."""
        return "words"

    @property
    def version(self) -> str:
        """``"1"``: the rule has not changed."""
        return "1"

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """The span of each run of non-whitespace characters."""
        return [match.span() for match in _WORD.finditer(text)]

    def __repr__(self) -> str:
        return "WordsTokenizer()"


WORDS = WordsTokenizer()
"""The ``words`` tokenizer (the default of a run)."""


@dataclass(frozen=True)
class TokenizerKind:
    """A kind of tokenizer: which texts name it and how to load one.

    Attributes:
        kind: The kind's own name (``"tiktoken"``).
        choices: How a user names it, for messages (``"cl100k_base, o200k_base"``).
        matches: Whether a text names a tokenizer of this kind.
        load: The tokenizer a text names (raises :class:`JudgmentError` on bad input).
        modules: Modules the kind imports (``("tiktoken",)``): missing, the kind needs the
            ``tokens`` extra.
        check: Raises :class:`JudgmentError` when the text names no usable tokenizer (a folder
            without ``tokenizer.json``), without loading it.
    """

    kind: str
    choices: str
    matches: Callable[[str], bool]
    load: Callable[[str], Tokenizer]
    modules: tuple[str, ...] = ()
    check: Callable[[str], None] | None = None


def check_extra(spec: str, modules: Sequence[str]) -> None:
    """Check that the modules a tokenizer needs can be imported.

    Raises:
        JudgmentError: One is missing: the ``tokens`` extra, with the install hint.
    """
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise JudgmentError(
            f"tokenizer {spec!r} needs the tokens extra ({', '.join(missing)} is not "
            f"installed): {TOKENS_INSTALL_HINT}"
        )
