"""Which fix a stage configuration applied: inferred from the knobs that changed between two."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from groundkit.diagnosis._models import FIXES, FixName
from groundkit.diagnosis._record_models import (
    PredictedFix,
)
from groundkit.judgments.report import CHUNK_SIZE_KNOBS, Knob, flatten_stage_config

__all__ = ["infer_applied_fix"]


# -- inference of the applied fix -----------------------------------------------------------

_SIZE_KEYS = frozenset(str(knob) for knob in CHUNK_SIZE_KNOBS)
_OVERLAP = str(Knob.CHUNK_OVERLAP)
_KIND = str(Knob.RETRIEVER_KIND)
_FUSED = str(Knob.FUSED_STAGES)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _moved(a: Mapping[str, Any], b: Mapping[str, Any], keys: set[str]) -> tuple[bool, bool]:
    """Whether any of ``keys`` went up, and whether any went down, from a to b."""
    up = down = False
    for key in keys:
        before, after = _number(a.get(key)), _number(b.get(key))
        if before is None or after is None:
            continue
        up = up or after > before
        down = down or after < before
    return up, down


def _fused_stages(b: Mapping[str, Any]) -> list[str] | None:
    """The stages a flattened config's hybrid retriever fuses (``None``: not a hybrid)."""
    if b.get(_KIND) != "hybrid":
        return None
    fused = b.get(_FUSED)
    names = json.loads(fused) if isinstance(fused, str) else []
    return [str(name) for name in names] if isinstance(names, list) else []


def _applies(
    fix: str,
    a: dict[str, Any],
    b: dict[str, Any],
    stage_a: str | None,
    partner: str | None = None,
) -> bool:
    diff = {key for key in set(a) | set(b) if a.get(key) != b.get(key)}
    if not diff:
        return False
    if fix == "chunk-overlap":
        up, _ = _moved(a, b, {_OVERLAP})
        return diff == {_OVERLAP} and up
    if fix in ("larger-chunks", "smaller-chunks"):
        if not diff <= _SIZE_KEYS | {_OVERLAP}:
            return False
        up, down = _moved(a, b, set(_SIZE_KEYS))
        return up and not down if fix == "larger-chunks" else down and not up
    if fix == "hybrid-fusion":
        names = _fused_stages(b)
        if names is None or stage_a is None:
            return False
        if partner is not None:  # the prediction replayed this very pair
            return set(names) == {stage_a, partner} and len(names) == 2
        return stage_a in names
    if fix == "dense":
        chunker_same = all(
            a.get(key) == b.get(key) for key in set(a) | set(b) if key.startswith("chunker.")
        )
        kinds = (a.get(_KIND), b.get(_KIND))
        return kinds == ("bm25", "dense") and chunker_same
    return False  # judgments, corpus, k, reranking, expansion, dedup: not in a stage config


def infer_applied_fix(
    config_a: Mapping[str, Any],
    config_b: Mapping[str, Any],
    candidates: Sequence[str],
    *,
    stage_a: str | None = None,
    partner: str | None = None,
) -> list[FixName]:
    """The candidate fixes whose knobs are the only difference between two stage configs.

    Inferable: chunk-overlap (only ``chunker.overlap`` grew), larger-chunks / smaller-chunks
    (only chunk size keys moved, all one way), hybrid-fusion (B is a hybrid fusing exactly
    A's stage and ``partner``; any hybrid fusing A's stage when no partner is known), dense
    (BM25 to dense, same chunker).
    Other fixes turn knobs outside a stage config and must be named. The keys are
    :class:`~groundkit.judgments.report.Knob` values (see :data:`FIX_CONFIG_KEYS`).

    Args:
        config_a: A's stage configuration (nested mappings; a top-level ``name`` is ignored).
        config_b: B's.
        candidates: Fix names to consider (the prediction's).
        stage_a: A's stage name (hybrid-fusion).
        partner: The stage the predicted hybrid-fusion fused A's with (its replay's).

    Returns:
        The matching fixes, in the order of :data:`FIXES`.
    """
    a, b = flatten_stage_config(config_a), flatten_stage_config(config_b)
    return [fix for fix in FIXES if fix in candidates and _applies(fix, a, b, stage_a, partner)]


def _fusion_mismatch(
    predicted: PredictedFix | None, stage_a: str, config_b: Mapping[str, Any] | None
) -> str | None:
    """Why B's stage is not the predicted fusion (``None``: it is, or it cannot be told)."""
    if predicted is None or predicted.partner is None or config_b is None:
        return None
    names = _fused_stages(flatten_stage_config(config_b))
    wanted = f"the prediction was fusing {stage_a} with {predicted.partner}"
    if names is None:
        return f"B's stage is not a hybrid, but {wanted}"
    if len(names) == 2 and set(names) == {stage_a, predicted.partner}:
        return None
    return f"B's stage fuses {', '.join(names) or 'no stages'}, but {wanted}"
