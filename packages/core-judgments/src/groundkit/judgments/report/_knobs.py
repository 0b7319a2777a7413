"""The knobs of a stage configuration: the dotted keys a fix turns, named once.

Diagnosis says which key a fix turns and infers which fix a pair of configurations applied;
the harness defines the configuration models those keys live in. Both use this one list,
and a test proves every knob is a field of the harness's models.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from groundkit.judgments._hashing import canonical_json

__all__ = ["CHUNK_SIZE_KNOBS", "Knob", "flatten_stage_config"]


class Knob(StrEnum):
    """A key of a stage configuration, as a dotted path into its ``{retriever, chunker}``."""

    CHUNK_OVERLAP = "chunker.overlap"
    """Characters or tokens that consecutive chunks share (``chars`` and ``tokens``)."""
    CHUNK_SIZE = "chunker.size"
    """Chunk length of the ``chars`` and ``tokens`` chunkers."""
    CHUNK_MAX_CHARS = "chunker.max_chars"
    """Longest chunk of the ``sentences`` and ``paragraphs`` chunkers."""
    CHUNK_MAX_SENTENCES = "chunker.max_sentences"
    """Sentences per chunk of the ``sentences`` chunker."""
    RETRIEVER_KIND = "retriever.kind"
    """The retriever kind (bm25, dense, hybrid, rerank, ...)."""
    FUSED_STAGES = "retriever.stages"
    """The stages a hybrid fuses."""
    RERANK_TOP = "retriever.top"
    """Hits of the upstream stage a rerank stage re-orders."""


CHUNK_SIZE_KNOBS = frozenset({Knob.CHUNK_SIZE, Knob.CHUNK_MAX_CHARS, Knob.CHUNK_MAX_SENTENCES})
"""The knobs that set how long a chunk is, whatever the chunker kind."""


def flatten_stage_config(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A stage configuration as dotted keys (``chunker.size``); lists as canonical JSON.

    A top-level ``name`` is left out: a stage's name is not one of its settings.

    Args:
        config: Nested mappings, as a stage configuration dumps or an items header holds.
        prefix: Path of ``config`` itself (for the recursion).

    Returns:
        One entry per leaf value.
    """
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if not prefix and key == "name":
            continue
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten_stage_config(value, f"{path}."))
        elif isinstance(value, list | tuple):
            flat[path] = canonical_json(list(value))
        else:
            flat[path] = value
    return flat
