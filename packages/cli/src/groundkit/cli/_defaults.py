"""Defaults shown by ``--help`` and used by the commands, read from the models that own them.

Nothing here is a literal: each value is a field default of a harness or report model (the
resamples of :class:`~groundkit.judgments.BootstrapSettings`, the depth of
:class:`~groundkit.harness.EvalSettings`...), so a default changes in one place.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from groundkit.harness import (
    CommandRetriever,
    EvalSettings,
    default_chunker,
    default_headline_metrics,
)
from groundkit.judgments import BootstrapSettings, chunker_spec

__all__ = [
    "DEFAULT_CHUNKERS",
    "DEFAULT_COMMAND_TIMEOUT",
    "DEFAULT_DEPTH",
    "DEFAULT_METRICS",
    "DEFAULT_MIN_OVERLAP",
    "DEFAULT_MULTIPLICITY",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "DEPTH_RANGE",
    "field_default",
    "int_field_range",
]


def field_default(model: type[BaseModel], name: str) -> Any:
    """The default of a model field (a default factory is called)."""
    return model.model_fields[name].get_default(call_default_factory=True)


def int_field_range(model: type[BaseModel], name: str) -> tuple[int | None, int | None]:
    """The inclusive bounds of an integer field, from its ``gt``/``ge``/``lt``/``le``."""
    low: int | None = None
    high: int | None = None
    for item in model.model_fields[name].metadata:
        # pydantic keeps each constraint as an object with one of these attributes.
        if isinstance(getattr(item, "gt", None), int):
            low = item.gt + 1
        elif isinstance(getattr(item, "ge", None), int):
            low = item.ge
        elif isinstance(getattr(item, "lt", None), int):
            high = item.lt - 1
        elif isinstance(getattr(item, "le", None), int):
            high = item.le
    return low, high


DEFAULT_RESAMPLES: int = field_default(BootstrapSettings, "resamples")
DEFAULT_SEED: int = field_default(BootstrapSettings, "seed")
DEFAULT_MULTIPLICITY: str = field_default(BootstrapSettings, "multiplicity")
DEFAULT_DEPTH: int = field_default(EvalSettings, "depth")
DEPTH_RANGE = int_field_range(EvalSettings, "depth")
DEFAULT_MIN_OVERLAP: float = field_default(EvalSettings, "min_overlap_fraction")
DEFAULT_COMMAND_TIMEOUT: float = field_default(CommandRetriever, "timeout")
DEFAULT_METRICS = " ".join(default_headline_metrics("chunk"))
DEFAULT_CHUNKERS = (
    f"{chunker_spec(default_chunker('chunk'))}; "
    f"{chunker_spec(default_chunker('document'))} at --level document"
)
