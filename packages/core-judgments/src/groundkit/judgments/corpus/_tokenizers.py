"""Tokenizers: where a text's tokens lie, as character offsets.

A chunker that counts tokens (``tokens:SIZE``, ``max_tokens`` of ``sentences`` and
``paragraphs``) asks a :class:`Tokenizer` for the character offsets of each token and cuts on
them, so chunks stay character spans whatever the tokenizer. The contract of
:meth:`Tokenizer.offsets`: one ``(start, end)`` pair per token, in text order, each within the
text, none overlapping the one before (``start >= previous end``), and every non-whitespace
character inside some token. A span may be empty: a token holding only some of the bytes of a
character (an emoji cut in two by a byte-level BPE) gets ``(c, c)``; the character belongs to
the token holding its last byte.

Kinds are registered (:func:`register_tokenizer_kind`) and found by the text that names
them (``"words"``, ``"cl100k_base"``, a folder): the built-in ones are

``words``
    Runs of non-whitespace characters (the ``tokens`` chunker's rule before tokenizers; no
    extra needed). The default.
``cl100k_base``, ``o200k_base``
    OpenAI's byte-level BPE encodings through ``tiktoken`` (the ``tokens`` extra).
a folder holding ``tokenizer.json`` (or that file itself)
    A Hugging Face tokenizer loaded with the ``tokenizers`` library (the ``tokens`` extra),
    without its special tokens, truncation or padding.

The implementations of the extra's kinds are in
:mod:`groundkit.judgments.corpus._tokenizer_kinds`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.corpus._tokenizer_base import (
    TOKENS_INSTALL_HINT,
    WORDS,
    Tokenizer,
    TokenizerKind,
    WordsTokenizer,
    check_extra,
)

__all__ = [
    "TOKENS_INSTALL_HINT",
    "WORDS",
    "Tokenizer",
    "TokenizerKind",
    "WordsTokenizer",
    "check_extra",
    "check_tokenizer",
    "find_tokenizer_kind",
    "load_tokenizer",
    "register_tokenizer_kind",
    "tokenizer_choices",
]

_KINDS: dict[str, TokenizerKind] = {}


def register_tokenizer_kind(kind: TokenizerKind) -> None:
    """Add a kind (one of the same ``kind`` name is replaced); the built-in kinds match first."""
    _builtin_kinds()
    _KINDS[kind.kind] = kind
    load_tokenizer.cache_clear()


def find_tokenizer_kind(spec: str) -> TokenizerKind | None:
    """The kind that ``spec`` names, or ``None``."""
    _builtin_kinds()
    for kind in _KINDS.values():
        if kind.matches(spec):
            return kind
    return None


def tokenizer_choices() -> list[str]:
    """How each registered kind is named, for messages."""
    _builtin_kinds()
    return [kind.choices for kind in _KINDS.values()]


def check_tokenizer(spec: str, *, also: Sequence[str] = ()) -> TokenizerKind:
    """The kind of ``spec``, checked usable (known, its extra installed) without loading it.

    Args:
        spec: The tokenizer's name (``"cl100k_base"``) or folder.
        also: More choices a caller accepts before calling this, for the message.

    Raises:
        JudgmentError: An unknown tokenizer, a folder without ``tokenizer.json``, or a missing
            ``tokens`` extra (one line, with the install hint).
    """
    kind = find_tokenizer_kind(spec)
    if kind is None:
        choices = ", ".join([*tokenizer_choices(), *also])
        raise JudgmentError(f"unknown tokenizer {spec[:100]!r} (use {choices})")
    check_extra(spec, kind.modules)
    if kind.check is not None:
        kind.check(spec)
    return kind


@functools.lru_cache(maxsize=8)
def load_tokenizer(spec: str) -> Tokenizer:
    """The tokenizer ``spec`` names (``"words"``, ``"cl100k_base"``, a folder), loaded once.

    Nothing is downloaded: the tiktoken encodings ship inside this package, and a Hugging Face
    tokenizer is read from its folder.

    Raises:
        JudgmentError: See :func:`check_tokenizer`; or the tokenizer cannot be read.
    """
    return check_tokenizer(spec).load(spec)


def _builtin_kinds() -> None:
    if "words" in _KINDS:
        return
    # Registered on first use: the extra's kinds import nothing until a tokenizer is loaded.
    from groundkit.judgments.corpus._tokenizer_kinds import BUILTIN_KINDS

    words = TokenizerKind("words", "words", lambda spec: spec == "words", lambda _: WORDS)
    for kind in (words, *BUILTIN_KINDS):
        _KINDS.setdefault(kind.kind, kind)
