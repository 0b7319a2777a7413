"""The names of the fixes, without the models: ``grk eval compare --help`` lists them.

:mod:`groundkit.diagnosis._models` builds on these (each fix's buckets and knobs); a command
option that offers the fixes as choices reads them here and loads no pydantic.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["FIXES", "FixName"]

FixName = Literal[
    "repair-judgments",
    "index-coverage",
    "chunk-overlap",
    "larger-chunks",
    "smaller-chunks",
    "rerank",
    "raise-k",
    "hybrid-fusion",
    "query-expansion",
    "dense",
    "deduplicate",
]

FIXES: tuple[FixName, ...] = get_args(FixName)
"""Every fix, in bucket order (the tie-break of the ranking)."""
