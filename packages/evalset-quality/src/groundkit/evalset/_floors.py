"""Detection floors: the smallest difference between two systems a set of a given size detects."""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal

from groundkit.evalset._errors import EvalSetError
from groundkit.stats import minimum_detectable_difference

__all__ = ["questions_needed", "round_up"]


def round_up(value: float, places: int = 2) -> float:
    """``value`` rounded UP to ``places`` decimals, never below ``value`` itself.

    The exact binary value is rounded with decimal arithmetic, and the nearest float to that
    decimal is returned: it is at least ``value`` (the decimal is, and ``value`` is a float), and
    it prints with ``places`` decimals as exactly the number that is returned.
    """
    step = Decimal(1).scaleb(-places)
    return float(Decimal(value).quantize(step, rounding=ROUND_CEILING))


def questions_needed(gap: float, *, power: float = 0.8, alpha: float = 0.05) -> int:
    """Smallest number of answerable questions whose (unpaired) floor is at most ``gap``.

    The floor falls as the set grows, so the answer is found by doubling and then bisecting:
    a few dozen evaluations of the floor whatever the answer.
    """
    if not math.isfinite(gap) or gap <= 0.0:
        raise EvalSetError(f"gap must be a positive number, got {gap!r}")

    def small_enough(n: int) -> bool:
        return minimum_detectable_difference(n, power=power, alpha=alpha) <= gap

    high = 1
    while not small_enough(high):
        high *= 2
    low = high // 2  # the floor at `low` is still above the gap (or low is 0)
    while high - low > 1:
        middle = (low + high) // 2
        if small_enough(middle):
            high = middle
        else:
            low = middle
    return high
