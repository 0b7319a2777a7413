"""Settings the light commands need without the config models (``grk eval compare`` on items).

Re-exported by :mod:`groundkit.harness.run._config`, which validates with them;
``MAX_RESAMPLES`` is the report settings' own bound (:mod:`groundkit.judgments.report`).
"""

from __future__ import annotations

from typing import Literal

# The bound belongs to the report's settings model (a config and a report read alike); the
# flags take it from there.
from groundkit.judgments.report import MAX_RESAMPLES

__all__ = ["MAX_RESAMPLES", "default_headline_metrics"]


def default_headline_metrics(level: Literal["chunk", "document"]) -> list[str]:
    """The headline metrics used when a config names none."""
    if level == "document":
        return ["ndcg@10", "recall@100", "mrr"]
    return ["recall@10", "ndcg@10", "mrr", "recall@2000c"]
