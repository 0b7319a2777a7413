"""Holm's step-down adjustment for several candidates compared with one baseline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import overload

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import check_finite, to_float

__all__ = ["holm_adjust"]


@overload
def holm_adjust(p_values: Mapping[str, float]) -> dict[str, float]: ...
@overload
def holm_adjust(p_values: Sequence[float]) -> list[float]: ...
def holm_adjust(p_values: Mapping[str, float] | Sequence[float]) -> dict[str, float] | list[float]:
    """Holm step-down adjusted p-values (family-wise error control, any dependence).

    With the m p-values sorted ascending, p_(1) ≤ … ≤ p_(m), the adjusted value of the i-th is
    max over j ≤ i of min(1, (m − j + 1) · p_(j)). Adjusted values keep the order of the raw
    ones, never fall below them, and are capped at 1. Rejecting every hypothesis whose adjusted
    p-value is below α controls the chance of any false "better" at α.

    Args:
        p_values: Raw p-values, either keyed by name (e.g. candidate system) or as a sequence.

    Returns:
        Adjusted p-values in the same shape: a dict with the same keys, or a list in the same
        order.

    Raises:
        StatsError: If a p-value is not a finite number in [0, 1].
    """
    if isinstance(p_values, Mapping):
        keys = list(p_values)
        raw = [_p_value(p_values[key], where=f"p-value {key!r}") for key in keys]
        return dict(zip(keys, _holm(raw), strict=True))
    if isinstance(p_values, (str, bytes)) or not isinstance(p_values, Sequence):
        raise StatsError(
            f"p_values must be a mapping or a sequence (got {type(p_values).__name__})"
        )
    return _holm([_p_value(value, where=f"p-value [{i}]") for i, value in enumerate(p_values)])


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
