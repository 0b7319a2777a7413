"""How a detection limit is written, wherever a user reads one: one unit, one name.

A detection limit is a difference on the metric's own scale (0 to 1 for recall or nDCG), the
true difference a test detects with the stated power. Every surface — console, HTML, report
notes, ``grk eval compare`` in both modes, ``grk evalset assess`` — writes it with
:func:`limit_text` and names which limit it is:

* **unpaired**: two independent runs of this many queries (the set's floor, a worst case);
* **paired**: one comparison of two runs on the same queries, for the test its verdict uses,
  at the level of the family it is decided in (:func:`family_text`).

The number is rounded **up** to three decimals: "differences under 0.152 cannot be told from
noise" stays true of the unrounded limit.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal

__all__ = [
    "family_text",
    "limit_text",
    "limit_value",
    "paired_limit_text",
    "unpaired_limit_text",
]

_NONE = "none at this n"


def limit_value(limit: float) -> float:
    """A finite detection limit rounded up to 3 decimals: the number :func:`limit_text` prints.

    The float's shortest decimal form (``0.1``, not its binary expansion) is rounded up, so the
    result is never below ``limit``.
    """
    return float(_rounded(limit))


def limit_text(limit: float | None) -> str:
    """A detection limit on the metric's scale, rounded up to 3 decimals, e.g. ``0.152``.

    Args:
        limit: The limit, a fraction of the metric's range; ``None`` when no difference is
            detectable at this number of queries.

    Returns:
        The number as printed everywhere, or ``"none at this n"``.
    """
    if limit is None or not math.isfinite(limit):
        return _NONE
    return str(_rounded(limit))


def _rounded(limit: float) -> Decimal:
    return Decimal(repr(limit)).quantize(Decimal("0.001"), rounding=ROUND_CEILING)


def family_text(adjustment: str, family_size: int) -> str:
    """The family a comparison is decided in: ``holm over 20 comparisons`` or a family of one."""
    if family_size <= 1 or adjustment == "none":
        return "a family of one"
    return f"{adjustment} over {family_size} comparisons"


def paired_limit_text(limit: float | None, adjustment: str, family_size: int) -> str:
    """``0.037 (paired, holm over 20 comparisons)``: one comparison's limit with its family."""
    return f"{limit_text(limit)} (paired, {family_text(adjustment, family_size)})"


def unpaired_limit_text(limit: float | None) -> str:
    """``0.152 (unpaired: two independent runs)``: the set's floor."""
    return f"{limit_text(limit)} (unpaired: two independent runs)"
