"""Defaults shown by ``--help`` and used by the commands, read from the models that own them.

Nothing here is a literal: each value is a field default of a harness or report model (the
resamples of :class:`~groundkit.judgments.report.BootstrapSettings`, the depth of
:class:`~groundkit.harness.EvalSettings`...), so a default changes in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from groundkit.judgments.report import BootstrapSettings

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

if TYPE_CHECKING:
    DEFAULT_DEPTH: int
    DEPTH_RANGE: tuple[int | None, int | None]
    DEFAULT_MIN_OVERLAP: float
    DEFAULT_COMMAND_TIMEOUT: float
    DEFAULT_METRICS: str
    DEFAULT_CHUNKERS: str


def _harness_defaults() -> dict[str, Any]:
    from groundkit.harness import CommandRetriever, EvalSettings
    from groundkit.harness.run import default_chunker
    from groundkit.harness.run import default_headline_metrics as headline
    from groundkit.judgments import chunker_spec

    return {
        "DEFAULT_DEPTH": field_default(EvalSettings, "depth"),
        "DEPTH_RANGE": int_field_range(EvalSettings, "depth"),
        "DEFAULT_MIN_OVERLAP": field_default(EvalSettings, "min_overlap_fraction"),
        "DEFAULT_COMMAND_TIMEOUT": field_default(CommandRetriever, "timeout"),
        "DEFAULT_METRICS": " ".join(headline("chunk")),
        "DEFAULT_CHUNKERS": (
            f"{chunker_spec(default_chunker('chunk'))}; "
            f"{chunker_spec(default_chunker('document'))} at --level document"
        ),
    }


def __getattr__(name: str) -> Any:
    # The harness's defaults need its config models: read when a command asks for one (PEP
    # 562), so a command that needs only the bootstrap's defaults does not build them.
    if name.startswith("DEFAULT") or name == "DEPTH_RANGE":
        values = _harness_defaults()
        globals().update(values)
        if name in values:
            return values[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
