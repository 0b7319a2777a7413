"""Settings the light commands need without the config models (``grk eval compare`` on items).

Defined here once and re-exported by :mod:`groundkit.harness.run._config`, which validates
with them.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["MAX_RESAMPLES", "default_headline_metrics"]

MAX_RESAMPLES = 1_000_000
"""Most bootstrap resamples a run accepts: more only costs memory and time (2e9 needs 16 GB)."""


def default_headline_metrics(level: Literal["chunk", "document"]) -> list[str]:
    """The headline metrics used when a config names none."""
    if level == "document":
        return ["ndcg@10", "recall@100", "mrr"]
    return ["recall@10", "ndcg@10", "mrr", "recall@2000c"]
