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
    """Smallest number of answerable questions whose (unpaired) floor is at most ``gap``."""
    if not math.isfinite(gap) or gap <= 0.0:
        raise EvalSetError(f"gap must be a positive number, got {gap!r}")
    z_floor_at_one = minimum_detectable_difference(1, power=power, alpha=alpha)
    # floor(n) = floor(1) / sqrt(n); start from the closed form and fix float edge cases.
    n = max(1, math.ceil((z_floor_at_one / gap) ** 2))
    while n > 1 and minimum_detectable_difference(n - 1, power=power, alpha=alpha) <= gap:
        n -= 1
    while minimum_detectable_difference(n, power=power, alpha=alpha) > gap:
        n += 1
    return n
