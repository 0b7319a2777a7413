"""Defaults shown by ``--help`` and used by the commands, from the constants the models use.

Nothing here is a default of its own: each value is a constant the harness's or the report's
models take their field default from (:mod:`groundkit.harness._limits`,
:mod:`groundkit.judgments.report._defaults`), so a default changes in one place, and reading
one for ``--help`` loads no pydantic model (``tests/cli/test_cli_startup.py`` checks both).
"""

from __future__ import annotations

from pathlib import Path

from groundkit.harness._limits import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_DEPTH,
    DEFAULT_MIN_OVERLAP,
    MAX_DEPTH,
    default_headline_metrics,
)
from groundkit.judgments.report._defaults import (
    DEFAULT_MULTIPLICITY,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
)

__all__ = [
    "DEFAULT_CHUNKERS",
    "DEFAULT_COMMAND_TIMEOUT",
    "DEFAULT_DEPTH",
    "DEFAULT_METRICS",
    "DEFAULT_MIN_OVERLAP",
    "DEFAULT_MULTIPLICITY",
    "DEFAULT_REPORT",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "DEPTH_RANGE",
]

DEPTH_RANGE: tuple[int, int] = (1, MAX_DEPTH)
"""The inclusive bounds of ``--k``: the run's depth is a whole number > 0, at most MAX_DEPTH."""

DEFAULT_METRICS = " ".join(default_headline_metrics("chunk"))
"""The headline metrics of a chunk-level run that names none, as ``--help`` lists them."""

DEFAULT_CHUNKERS = (
    # chunker_spec(default_chunker(level)) of the harness, written out (a test holds them equal).
    f"chars:{DEFAULT_CHUNK_SIZE}:{DEFAULT_CHUNK_OVERLAP}; document at --level document"
)
"""The run's default chunker at each level, as ``--help`` shows it."""

DEFAULT_REPORT = Path("groundkit-report.json")
"""Where `grk eval run` writes its report unless ``--report`` says otherwise."""
