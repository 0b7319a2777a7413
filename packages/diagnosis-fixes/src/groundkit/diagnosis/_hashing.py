"""Hashes that tie a prediction (made from a report) to a measurement (made from items files).

``items_hash`` is computed the same way on both sides: over the stage's per-query recall@k,
as ``(query_id, score)`` pairs sorted by query id, with the metric name. Both the report and
the items file write scores as JSON numbers, which round-trip exactly, so the same stage of
the same run hashes equally whether read from ``report.json`` or ``items.jsonl``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

from groundkit.diagnosis._errors import DiagnosisError
from groundkit.judgments import canonical_json, config_hash

__all__ = ["canonical_json", "config_hash", "items_hash"]


def items_hash(scores: Mapping[str, float], metric: str) -> str:
    """SHA-256 (hex) of one stage's per-query scores on one metric.

    The hashed text is the canonical JSON of
    ``{"metric": metric, "scores": [[query_id, float(score)], ...]}`` with the pairs sorted by
    query id. Integers are read as floats (``1`` and ``1.0`` hash equally).

    Args:
        scores: Query id to score (e.g. recall@10).
        metric: The metric name.

    Returns:
        The hex digest.

    Raises:
        DiagnosisError: A score is not a finite number.
    """
    pairs: list[list[Any]] = []
    for query_id in sorted(scores):
        value = scores[query_id]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DiagnosisError(f"{metric} is not a number: {value!r}", item_id=query_id)
        number = float(value)
        if not math.isfinite(number):
            raise DiagnosisError(f"{metric} is not finite: {value!r}", item_id=query_id)
        pairs.append([query_id, number])
    text = canonical_json({"metric": metric, "scores": pairs})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
