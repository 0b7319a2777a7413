"""The compact flag syntax of `grk eval run`: chunker and stage specs.

Chunker specs (``--chunker`` and the ``@CHUNKER`` part of a stage) are
:func:`groundkit.judgments.parse_chunker_spec`'s (``document``, ``paragraphs[:MAX_CHARS]``,
``sentences[:N[:MAX_CHARS]]``, ``chars:SIZE[:OVERLAP]``, ``tokens:SIZE[:OVERLAP]``).

Stage specs (``--stage``, repeatable): ``[NAME=]KIND[:ARG][@CHUNKER]`` for any registered kind
(plugins included); what ``:ARG`` sets is the kind's
:meth:`~groundkit.harness.RetrieverSettings.from_spec_argument`::

    [NAME=]bm25[@CHUNKER]            lexical BM25 (the name bm25 is kept for a BM25 stage)
    [NAME=]dense[:MODEL][@CHUNKER]   dense retrieval (needs the dense extra)
    [NAME=]hybrid:A+B[+C...]         reciprocal-rank fusion of stages A, B... given earlier
    [NAME=]rerank:STAGE:MODEL        STAGE's top hits re-ordered by a cross-encoder
    [NAME=]callable:TARGET           a Python retriever, TARGET = package.module:name or
                                     path/file.py:name (a function, an object with search(),
                                     or a zero-argument factory of one)
    [NAME=]langchain:TARGET          a LangChain retriever or vector store (or a factory);
                                     llamaindex:TARGET and haystack:TARGET alike

Shortcuts: ``--retriever dense`` is ``--stage dense``; ``--hybrid bm25,dense`` is
``--stage hybrid=hybrid:bm25+dense``; ``--command NAME=CMD`` runs an external retriever command;
``--predictions NAME=PATH`` reads hits computed elsewhere. Without ``@CHUNKER`` a stage uses
``--chunker``. The name and chunker rules are the harness's own (one definition each).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from groundkit.cli._errors import InputError
from groundkit.harness import HarnessError
from groundkit.harness.retrievers import retriever_kind
from groundkit.harness.run import check_stage_name
from groundkit.judgments import JudgmentError
from groundkit.judgments import parse_chunker_spec as chunker_from_spec

__all__ = [
    "StageSpec",
    "parse_chunker_spec",
    "parse_command_spec",
    "parse_hybrid_shortcut",
    "parse_named_path",
    "parse_predictions_spec",
    "parse_stage_spec",
]


def parse_chunker_spec(spec: str) -> dict[str, Any]:
    """Parse ``chars:800:100`` and friends into a chunker config mapping.

    Args:
        spec: The spec (see :func:`groundkit.judgments.parse_chunker_spec`).

    Returns:
        The chunker settings as a mapping (``{"kind": "chars", "size": 800, ...}``).

    Raises:
        InputError: Unknown kind, wrong number of parts, or a bad number.
    """
    try:
        return chunker_from_spec(spec).model_dump(mode="json")
    except JudgmentError as error:
        raise InputError(error.message) from None


@dataclass(frozen=True, slots=True)
class StageSpec:
    """One stage asked for on the command line.

    Attributes:
        name: Stage name.
        kind: Retriever kind (any registered kind).
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
    try:
        return check_stage_name(name)
    except ValueError as error:
        raise InputError(f"stage {spec!r}: {error}") from None


def _split_name(spec: str) -> tuple[str | None, str]:
    if "=" in spec:
        name, _, rest = spec.partition("=")
        return _check_name(name.strip(), spec), rest.strip()
    return None, spec.strip()


def parse_stage_spec(spec: str) -> StageSpec:
    """Parse ``[NAME=]KIND[:ARG][@CHUNKER]`` (see the module docstring).

    Raises:
        InputError: Unknown kind, a bad argument, a bad name or a bad chunker.
    """
    name, body = _split_name(spec)
    body, at, chunker_text = body.partition("@")
    kind, _, arg = body.partition(":")
    try:
        registered = retriever_kind(kind)
    except HarnessError as error:
        raise InputError(f"stage {spec!r}: {error.message}") from None
    chunker = parse_chunker_spec(chunker_text) if at else None
    if chunker is not None and not registered.chunked:
        raise InputError(f"stage {spec!r}: a {kind} stage brings its own spans; drop @CHUNKER")
    options: dict[str, Any] = {}
    if arg:
        try:
            options = registered.settings.from_spec_argument(arg)
        except ValueError as error:
            raise InputError(f"stage {spec!r}: {error}") from None
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
