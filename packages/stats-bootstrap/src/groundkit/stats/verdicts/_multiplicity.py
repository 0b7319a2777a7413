"""Family-wise control: Holm's step-down and Benjamini–Hochberg's step-up adjustments."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal, overload

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import check_finite, to_float

__all__ = ["Adjustment", "adjust", "bh_adjust", "holm_adjust", "reproducing_alpha"]

Adjustment = Literal["holm", "bh", "none"]


@overload
def holm_adjust(p_values: Mapping[str, float]) -> dict[str, float]: ...
@overload
def holm_adjust(p_values: Sequence[float]) -> list[float]: ...
def holm_adjust(p_values: Mapping[str, float] | Sequence[float]) -> dict[str, float] | list[float]:
    """Holm step-down adjusted p-values (family-wise error control, any dependence).

    With the m p-values sorted ascending, p_(1) ≤ … ≤ p_(m), the adjusted value of the i-th is
    max over j ≤ i of min(1, (m − j + 1) · p_(j)). Adjusted values keep the order of the raw
    ones, never fall below them, and are capped at 1. Rejecting every hypothesis whose adjusted
    p-value is below α keeps the chance of one or more false rejections in the family at α.

    Args:
        p_values: Raw p-values, either keyed by name or as a sequence.

    Returns:
        Adjusted p-values in the same shape: a dict with the same keys, or a list in order.

    Raises:
        StatsError: If a p-value is not a finite number in [0, 1].
    """
    return _apply(p_values, _holm)


@overload
def bh_adjust(p_values: Mapping[str, float]) -> dict[str, float]: ...
@overload
def bh_adjust(p_values: Sequence[float]) -> list[float]: ...
def bh_adjust(p_values: Mapping[str, float] | Sequence[float]) -> dict[str, float] | list[float]:
    """Benjamini–Hochberg step-up adjusted p-values (false discovery rate control).

    With the m p-values sorted ascending, the adjusted value of the i-th is the minimum over
    j ≥ i of min(1, m · p_(j) / j). Rejecting every hypothesis whose adjusted value is below α
    keeps the expected share of false rejections among all rejections at α for independent or
    positively dependent tests — a weaker promise than Holm's, which bounds the chance of any.

    Args:
        p_values: Raw p-values, either keyed by name or as a sequence.

    Returns:
        Adjusted p-values in the same shape.

    Raises:
        StatsError: If a p-value is not a finite number in [0, 1].
    """
    return _apply(p_values, _bh)


def adjust(p_values: Sequence[float], method: Adjustment) -> list[float]:
    """Adjusted p-values of a sequence by ``method`` ("none" returns them unchanged)."""
    if method == "holm":
        return holm_adjust(p_values)
    if method == "bh":
        return bh_adjust(p_values)
    if method == "none":
        return [_p_value(value, where=f"p-value [{i}]") for i, value in enumerate(p_values)]
    raise StatsError(f"adjustment must be 'holm', 'bh' or 'none' (got {method!r})")


def _apply(
    p_values: Mapping[str, float] | Sequence[float], rule: object
) -> dict[str, float] | list[float]:
    assert callable(rule)
    if isinstance(p_values, Mapping):
        keys = list(p_values)
        raw = [_p_value(p_values[key], where=f"p-value {key!r}") for key in keys]
        return dict(zip(keys, rule(raw), strict=True))
    if isinstance(p_values, (str, bytes)) or not isinstance(p_values, Sequence):
        raise StatsError(
            f"p_values must be a mapping or a sequence (got {type(p_values).__name__})"
        )
    adjusted: list[float] = rule(
        [_p_value(v, where=f"p-value [{i}]") for i, v in enumerate(p_values)]
    )
    return adjusted


def _p_value(value: object, *, where: str) -> float:
    p = check_finite(to_float(value, where=where), where=where)
    if not (0.0 <= p <= 1.0):
        raise StatsError(f"{where} must be in [0, 1] (got {p})")
    return p


def _holm(raw: list[float]) -> list[float]:
    count = len(raw)
    order = sorted(range(count), key=lambda i: raw[i])
    adjusted = [0.0] * count
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (count - rank) * raw[index]))
        adjusted[index] = running
    return adjusted


def _bh(raw: list[float]) -> list[float]:
    count = len(raw)
    order = sorted(range(count), key=lambda i: raw[i])
    adjusted = [0.0] * count
    running = 1.0
    for rank in range(count - 1, -1, -1):
        index = order[rank]
        running = min(running, min(1.0, count * raw[index] / (rank + 1)))
        adjusted[index] = running
    return adjusted


def reproducing_alpha(
    p_values: Sequence[float], index: int, alpha: float, adjustment: Adjustment
) -> float:
    """The level at which member ``index``, tested alone, gets its in-family decision.

    A member of a family is significant when its adjusted p-value is below ``alpha``. Tested
    alone at the returned level ``e`` (significant when its raw p < ``e``), it is significant
    exactly when it is in the family, the other members' p-values being what they are:

    * Holm: with the raw values sorted, the level of the first step that fails at or before
      the member's rank (``alpha / (m − k + 1)``), or the member's own step level;
    * Benjamini–Hochberg: ``K · alpha / m`` for the largest rank ``K`` that passes, when the
      member's rank is at most ``K``, else its own ``rank · alpha / m``;
    * none (or a family of one): ``alpha``.

    Args:
        p_values: The raw p-values of the family's decisions.
        index: The member's position in ``p_values``.
        alpha: The family's level.
        adjustment: The family's adjustment.

    Returns:
        The single-comparison level.

    Raises:
        StatsError: A p-value outside [0, 1], an index outside the family, or an alpha
            outside (0, 1).
    """
    values = [check_finite(to_float(p, where="p-value"), where="p-value") for p in p_values]
    if not 0 <= index < len(values):
        raise StatsError(f"index {index} is outside a family of {len(values)}")
    if not 0.0 < alpha < 1.0:
        raise StatsError(f"alpha must be in (0, 1) (got {alpha})")
    if any(not 0.0 <= p <= 1.0 for p in values):
        raise StatsError("p-values must lie in [0, 1]")
    size = len(values)
    if adjustment == "none" or size == 1:
        return alpha
    level = _step_level(values, index, alpha, adjustment)
    # The engine decides on adjusted p-values; the level above is the same rule in exact
    # arithmetic. Where float rounding sets them apart, the engine's decision wins.
    raw = values[index]
    if adjust(values, adjustment)[index] < alpha:
        return level if raw < level else math.nextafter(raw, 1.0)
    return min(level, raw)


def _step_level(values: Sequence[float], index: int, alpha: float, adjustment: Adjustment) -> float:
    size = len(values)
    order = sorted(range(size), key=lambda i: values[i])
    rank = order.index(index) + 1
    if adjustment == "holm":
        for step in range(1, rank + 1):
            level = alpha / (size - step + 1)
            if not values[order[step - 1]] < level:
                return level
        return alpha / (size - rank + 1)
    passing = [k for k in range(1, size + 1) if size * values[order[k - 1]] / k < alpha]
    largest = max(passing, default=0)
    return (largest if rank <= largest else rank) * alpha / size
