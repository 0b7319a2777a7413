"""The compact text form of a chunker: ``chars:800:100``, ``paragraphs``, ``sentences:3:600``.

One definition for every place a chunker is written as text (``--chunker``, the ``@CHUNKER`` of
``--stage``, ``chunker = "..."`` in a config file)::

    document                   one chunk per document
    paragraphs[:MAX_CHARS]     blank-line paragraphs and markdown sections, up to MAX_CHARS
    sentences[:N[:MAX_CHARS]]  groups of N sentences (and at most MAX_CHARS characters)
    chars:SIZE[:OVERLAP]       windows of SIZE characters overlapping by OVERLAP (default 0)
    tokens:SIZE[:OVERLAP]      windows of SIZE tokens overlapping by OVERLAP (default 0)

Tokens are the run's tokenizer's (``words`` by default). In ``paragraphs`` and ``sentences``
a limit written with a ``t`` counts tokens instead of characters: ``paragraphs:256t`` merges
paragraphs up to 256 tokens (no limit in characters), ``sentences:5:256t`` groups up to five
sentences and 256 tokens. A chunker limited both in characters and in tokens has no text form
(write it as a table).
"""

from __future__ import annotations

from pydantic import ValidationError

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.corpus._chunking import ChunkerConfig, validate_chunker_config
from groundkit.judgments.gold._models import format_validation_error

__all__ = ["chunker_spec", "parse_chunker_config", "parse_chunker_spec"]

_ARGS: dict[str, tuple[str, ...]] = {
    "document": (),
    "paragraphs": ("max_chars",),
    "sentences": ("max_sentences", "max_chars"),
    "chars": ("size", "overlap"),
    "tokens": ("size", "overlap"),
}
_REQUIRED = {"chars": 1, "tokens": 1}
_TOKEN_LIMITED = frozenset({"paragraphs", "sentences"})  # "…:256t" is max_tokens


def _whole_number(text: str, *, what: str, spec: str, allow_zero: bool) -> int:
    if not text.isdigit():
        raise JudgmentError(f"chunker {spec!r}: {what} must be a whole number, got {text!r}")
    value = int(text)
    if value == 0 and not allow_zero:
        raise JudgmentError(f"chunker {spec!r}: {what} must be positive")
    return value


def parse_chunker_spec(spec: str) -> ChunkerConfig:
    """Parse the text form of a chunker (see the module docstring).

    Args:
        spec: E.g. ``"chars:800:100"``.

    Returns:
        The validated chunker settings.

    Raises:
        JudgmentError: Unknown kind, wrong number of parts, or a bad number (one line quoting
            the spec).
    """
    kind, *args = spec.strip().split(":")
    names = _ARGS.get(kind)
    if names is None:
        raise JudgmentError(f"chunker {spec!r}: unknown kind {kind!r} (use {', '.join(_ARGS)})")
    if len(args) > len(names) or len(args) < _REQUIRED.get(kind, 0):
        usage = kind + "".join(f":{n.upper()}" for n in names)
        raise JudgmentError(f"chunker {spec!r}: expected {usage}")
    data: dict[str, object] = {"kind": kind}
    for name, text in zip(names, args, strict=False):
        if name == "max_chars" and kind in _TOKEN_LIMITED and text.endswith("t"):
            name, text = "max_tokens", text[:-1]
        data[name] = _whole_number(text, what=name, spec=spec, allow_zero=name == "overlap")
    if kind in ("chars", "tokens") and "overlap" not in data:
        data["overlap"] = 0
    try:
        return validate_chunker_config(data)
    except ValidationError as exc:
        reason = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise JudgmentError(f"chunker {spec!r}: {reason}") from None


def chunker_spec(config: ChunkerConfig) -> str:
    """The text form of chunker settings (the inverse of :func:`parse_chunker_spec`).

    Raises:
        JudgmentError: Settings without a text form (``sentences`` limited by characters only).
    """
    values = config.model_dump()
    kind = str(values.pop("kind"))
    tokens = values.get("max_tokens")
    if tokens is not None:
        if values.get("max_chars") is not None:
            raise JudgmentError(
                f"chunker {values!r} has no text form (a limit in characters and tokens)"
            )
        values["max_chars"] = f"{tokens}t"
    given = [values.get(name) for name in _ARGS[kind]]
    while given and given[-1] is None:
        given.pop()
    if any(value is None for value in given):
        raise JudgmentError(f"chunker {values!r} has no text form")
    return ":".join([kind, *(str(value) for value in given)])


def parse_chunker_config(
    data: object,
) -> ChunkerConfig:
    """A chunker config from a mapping (``{"kind": "chars", "size": 800}``) or its text form.

    The text form (``"chars:800:100"``, ``"tokens:100:20"``, ``"sentences:3"``) is the one
    ``--chunker`` and a config file's ``chunker = "..."`` accept
    (:func:`~groundkit.judgments.parse_chunker_spec`).

    Raises:
        JudgmentError: Unknown kind, unknown key or a bad value (every problem, one line).
    """
    if isinstance(data, str):
        return parse_chunker_spec(data)
    try:
        return validate_chunker_config(data)
    except ValidationError as error:
        raise JudgmentError(f"chunker {data!r}: {format_validation_error(error)}") from None
