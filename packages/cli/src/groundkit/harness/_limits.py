"""Settings the light commands need without the config models (``grk eval compare`` on items).

Re-exported by :mod:`groundkit.harness.run._config`, which validates with them: the models
take their defaults and bounds from here, and ``--help`` reads them here without loading the
models. ``MAX_RESAMPLES`` is the report settings' own bound (:mod:`groundkit.judgments.report`).
"""

from __future__ import annotations

from typing import Final, Literal

# The bound belongs to the report's settings model (a config and a report read alike); the
# flags take it from there.
from groundkit.judgments.report import MAX_RESAMPLES

__all__ = [
    "DEFAULT_CHUNK_OVERLAP",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_COMMAND_TIMEOUT",
    "DEFAULT_DEPTH",
    "DEFAULT_MIN_OVERLAP",
    "MAX_DEPTH",
    "MAX_RESAMPLES",
    "default_headline_metrics",
]

DEFAULT_DEPTH: Final = 100
"""Hits retrieved and recorded per query and stage (``EvalSettings.depth``)."""

MAX_DEPTH: Final = 10_000
"""The largest depth a run accepts (the depth is a positive whole number up to it)."""

DEFAULT_MIN_OVERLAP: Final = 0.0
"""Share of a quote's span a hit must cover (``EvalSettings.min_overlap_fraction``)."""

DEFAULT_CHUNK_SIZE: Final = 1000
"""Characters per chunk of the run's default chunker at chunk level (``chars``)."""

DEFAULT_CHUNK_OVERLAP: Final = 200
"""Characters consecutive chunks of the run's default chunker share at chunk level."""

DEFAULT_COMMAND_TIMEOUT: Final = 600.0
"""Seconds before an external command stage is killed (``CommandRetriever.timeout``)."""


def default_headline_metrics(level: Literal["chunk", "document"]) -> list[str]:
    """The headline metrics used when a config names none."""
    if level == "document":
        return ["ndcg@10", "recall@100", "mrr"]
    return ["recall@10", "ndcg@10", "mrr", "recall@2000c"]
