"""The compact flag syntax of `grk eval run`: chunker and stage specs.

Chunker specs (``--chunker`` and the ``@CHUNKER`` part of a stage)::

    document                 one chunk per document
    paragraphs[:MAX_CHARS]   blank-line paragraphs and markdown sections, merged up to MAX_CHARS
    sentences[:N[:MAX_CHARS]]  groups of N sentences (and at most MAX_CHARS characters)
    chars:SIZE[:OVERLAP]     windows of SIZE characters overlapping by OVERLAP (default 0)
    tokens:SIZE[:OVERLAP]    windows of SIZE word tokens overlapping by OVERLAP (default 0)

Stage specs (``--stage``, repeatable)::

    [NAME=]bm25[@CHUNKER]            lexical BM25 (the baseline must be named bm25)
    [NAME=]dense[:MODEL][@CHUNKER]   dense retrieval (needs the dense extra)
    [NAME=]hybrid:A+B[+C...]         reciprocal-rank fusion of stages A, B... given earlier

Shortcuts: ``--retriever dense`` is ``--stage dense``; ``--hybrid bm25,dense`` is
``--stage hybrid=hybrid:bm25+dense``; ``--command NAME=CMD`` runs an external retriever command;
``--predictions NAME=PATH`` reads hits computed elsewhere. Without ``@CHUNKER`` a stage uses
``--chunker``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from groundkit.cli._errors import InputError
from groundkit.judgments import parse_chunker_config

__all__ = [
    "StageSpec",
    "parse_chunker_spec",
    "parse_command_spec",
    "parse_hybrid_shortcut",
    "parse_named_path",
    "parse_predictions_spec",
    "parse_stage_spec",
]

# Same rule as the harness's StageConfig, checked here so the message can quote the flag.
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_CHUNKER_ARGS: dict[str, tuple[str, ...]] = {
    "document": (),
    "paragraphs": ("max_chars",),
    "sentences": ("max_sentences", "max_chars"),
    "chars": ("size", "overlap"),
    "tokens": ("size", "overlap"),
}
_REQUIRED_ARGS = {"chars": 1, "tokens": 1}


def _positive_int(text: str, *, what: str, spec: str, allow_zero: bool = False) -> int:
    if not text.isdigit():
        raise InputError(f"chunker {spec!r}: {what} must be a whole number, got {text!r}")
    value = int(text)
    if value == 0 and not allow_zero:
        raise InputError(f"chunker {spec!r}: {what} must be positive")
    return value


def parse_chunker_spec(spec: str) -> dict[str, Any]:
    """Parse ``chars:800:100`` and friends into a chunker config mapping.

    Args:
        spec: The spec (see the module docstring).

    Returns:
        A mapping accepted by :func:`groundkit.judgments.parse_chunker_config`.

    Raises:
        InputError: Unknown kind, wrong number of parts, or a bad number.
    """
    kind, *args = spec.strip().split(":")
    names = _CHUNKER_ARGS.get(kind)
    if names is None:
        raise InputError(
            f"chunker {spec!r}: unknown kind {kind!r} (use {', '.join(_CHUNKER_ARGS)})"
        )
    if len(args) > len(names) or len(args) < _REQUIRED_ARGS.get(kind, 0):
        usage = kind + "".join(f":{n.upper()}" for n in names)
        raise InputError(f"chunker {spec!r}: expected {usage}")
    config: dict[str, Any] = {"kind": kind}
    for name, text in zip(names, args, strict=False):
        config[name] = _positive_int(text, what=name, spec=spec, allow_zero=name == "overlap")
    if kind in ("chars", "tokens") and "overlap" not in config:
        config["overlap"] = 0
    try:
        validated = parse_chunker_config(config)
    except ValidationError as exc:
        reason = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise InputError(f"chunker {spec!r}: {reason}") from None
    return validated.model_dump(mode="json")


@dataclass(frozen=True, slots=True)
class StageSpec:
    """One stage asked for on the command line.

    Attributes:
        name: Stage name.
        kind: Retriever kind: bm25, dense, hybrid, command or predictions.
        chunker: Chunker mapping, or ``None`` to use the run's default chunker.
        options: Retriever options (model, fused stages, command, path).
    """

    name: str
    kind: str
    chunker: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def to_config(self) -> dict[str, Any]:
        """The stage as a mapping of the run configuration (``[[stages]]`` in TOML)."""
        stage: dict[str, Any] = {
            "name": self.name,
            "retriever": {"kind": self.kind, **self.options},
        }
        if self.chunker is not None:
            stage["chunker"] = self.chunker
        return stage


def _check_name(name: str, spec: str) -> str:
    if not _NAME.match(name):
        raise InputError(
            f"stage {spec!r}: name {name!r} must be 1-64 of a-z, 0-9, '_', '.', '-', "
            "starting with a letter or digit"
        )
    return name


def _split_name(spec: str) -> tuple[str | None, str]:
    if "=" in spec:
        name, _, rest = spec.partition("=")
        return _check_name(name.strip(), spec), rest.strip()
    return None, spec.strip()


def parse_stage_spec(spec: str) -> StageSpec:
    """Parse ``[NAME=]KIND[:ARG][@CHUNKER]`` (see the module docstring).

    Raises:
        InputError: Unknown kind, a bad name or a bad chunker.
    """
    name, body = _split_name(spec)
    body, _, chunker_text = body.partition("@")
    kind, _, arg = body.partition(":")
    chunker = parse_chunker_spec(chunker_text) if chunker_text else None
    options: dict[str, Any] = {}
    if kind == "bm25":
        if arg:
            raise InputError(f"stage {spec!r}: bm25 takes no argument (use bm25@CHUNKER)")
    elif kind == "dense":
        if arg:
            options["model"] = arg
    elif kind == "hybrid":
        parts = [p.strip() for p in re.split(r"[+,]", arg) if p.strip()]
        if len(parts) < 2:
            raise InputError(
                f"stage {spec!r}: hybrid needs two or more stages, e.g. hybrid:bm25+dense"
            )
        if chunker is not None:
            raise InputError(
                f"stage {spec!r}: a hybrid stage uses its parts' chunks; drop @CHUNKER"
            )
        options["stages"] = parts
    else:
        raise InputError(
            f"stage {spec!r}: unknown retriever {kind!r} (use bm25, dense or hybrid:A+B; "
            "--command and --predictions for the others)"
        )
    return StageSpec(name=name or kind, kind=kind, chunker=chunker, options=options)


def parse_hybrid_shortcut(spec: str) -> StageSpec:
    """Parse ``--hybrid [NAME=]A,B``: a fusion stage named ``hybrid`` unless named."""
    name, body = _split_name(spec)
    return parse_stage_spec(f"{name or 'hybrid'}=hybrid:{body}")


def parse_named_path(spec: str, *, flag: str) -> tuple[str, str]:
    """Parse ``NAME=VALUE`` for ``--predictions`` (and the like).

    Raises:
        InputError: No ``=`` or an empty value.
    """
    if "=" not in spec:
        raise InputError(f"{flag} {spec!r}: expected NAME=VALUE")
    name, value = _split_name(spec)
    if name is None or not value:
        raise InputError(f"{flag} {spec!r}: expected NAME=VALUE")
    return name, value


def parse_command_spec(spec: str, *, timeout: float | None = None) -> StageSpec:
    """Parse ``--command NAME=CMD``: CMD is split like a POSIX shell would, but never run by one.

    ``{in}`` and ``{out}`` in CMD stand for the queries file and the predictions file; without
    them the queries arrive on standard input and the hits are read from standard output.

    Raises:
        InputError: No ``NAME=``, an empty command, or unbalanced quotes.
    """
    name, command = parse_named_path(spec, flag="--command")
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InputError(f"--command {spec!r}: {exc}") from None
    if not argv:
        raise InputError(f"--command {spec!r}: empty command")
    options: dict[str, Any] = {"argv": argv}
    if timeout is not None:
        options["timeout"] = timeout
    return StageSpec(name=name, kind="command", options=options)


def parse_predictions_spec(spec: str) -> StageSpec:
    """Parse ``--predictions NAME=PATH`` (``.jsonl``: predictions rows; else a TREC run)."""
    name, path = parse_named_path(spec, flag="--predictions")
    return StageSpec(name=name, kind="predictions", options={"path": path})
