"""Exact McNemar test on paired right-or-wrong outcomes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from groundkit.stats._errors import StatsError
from groundkit.stats.inference._binomial import binomtest_p_value

__all__ = ["McNemarResult", "as_bool", "mcnemar", "mcnemar_p_value"]

_TINY = float(np.finfo(np.float64).tiny)


class McNemarResult(BaseModel):
    """Counts of the 2×2 paired table and the exact two-sided McNemar p-value.

    Attributes:
        gained: Items wrong before and right after (False → True).
        lost: Items right before and wrong after (True → False).
        both: Items right in both.
        neither: Items wrong in both.
        item_count: Number of paired items.
        p_value: Exact two-sided binomial p-value on the discordant pairs (1.0 when none).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    gained: int
    lost: int
    both: int
    neither: int
    item_count: int
    p_value: float

    @property
    def discordant(self) -> int:
        """Number of items whose outcome changed (gained + lost)."""
        return self.gained + self.lost


def as_bool(value: object, *, where: str) -> bool:
    """A right-or-wrong outcome: a bool, a numpy bool, or the integers 0 and 1."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise StatsError(f"{where} is not a right-or-wrong outcome (got {value!r})")


def mcnemar(before: Sequence[bool], after: Sequence[bool]) -> McNemarResult:
    """Exact McNemar test: did the share of right items change between two paired runs?

    Only the discordant pairs carry information. Under "no change" each discordant pair is
    equally likely to be a gain or a loss, so the number of gains is Binomial(gained + lost,
    1/2); the two-sided p-value is scipy's exact `binomtest` on that count.

    Args:
        before: Per-item outcomes of the first run (True = right).
        after: Per-item outcomes of the second run, in the same item order.

    Returns:
        The frozen `McNemarResult` with gained/lost/both/neither counts and the p-value.

    Raises:
        StatsError: If the sequences differ in length, are empty, or hold something other than
            booleans (or the integers 0 and 1).
    """
    if len(before) != len(after):
        raise StatsError(
            f"before and after must pair item by item (got {len(before)} and {len(after)} items)"
        )
    if len(before) == 0:
        raise StatsError("no items: before and after are empty")
    first = [as_bool(value, where=f"before[{i}]") for i, value in enumerate(before)]
    second = [as_bool(value, where=f"after[{i}]") for i, value in enumerate(after)]
    gained = sum(1 for b, a in zip(first, second, strict=True) if not b and a)
    lost = sum(1 for b, a in zip(first, second, strict=True) if b and not a)
    both = sum(1 for b, a in zip(first, second, strict=True) if b and a)
    discordant = gained + lost
    p_value = mcnemar_p_value(gained, lost)
    return McNemarResult(
        gained=gained,
        lost=lost,
        both=both,
        neither=len(first) - discordant - both,
        item_count=len(first),
        p_value=p_value,
    )


def mcnemar_p_value(gained: int, lost: int) -> float:
    """The exact two-sided McNemar p-value from the discordant counts (1.0 when there are none)."""
    discordant = gained + lost
    if discordant == 0:
        return 1.0
    # Never zero: a p-value that underflows is reported as the smallest normal float.
    return min(1.0, max(binomtest_p_value(gained, discordant, 0.5), _TINY))
