"""Agreement between two raters beyond chance: Cohen's kappa."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

from groundkit.stats._errors import StatsError

__all__ = ["cohen_kappa"]


def cohen_kappa(rater_a: Sequence[Hashable], rater_b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters' labels on the same items: (p_o − p_e) / (1 − p_e).

    ``p_o`` is the share of items both label alike; ``p_e`` the agreement expected by chance,
    the sum over labels of the product of the two raters' shares of that label. 1 is perfect
    agreement, 0 what chance gives, below 0 worse than chance.

    Args:
        rater_a: One label per item (any hashable labels, e.g. booleans or grades).
        rater_b: The other rater's labels of the same items, in the same order.

    Raises:
        StatsError: Different lengths, no items, or both raters giving every item one same
            label (p_e = 1: kappa is undefined, not 1).
    """
    if len(rater_a) != len(rater_b):
        raise StatsError(f"the raters labelled {len(rater_a)} and {len(rater_b)} items")
    n = len(rater_a)
    if n == 0:
        raise StatsError("cohen_kappa needs at least one item")
    observed = sum(1 for a, b in zip(rater_a, rater_b, strict=True) if a == b) / n
    counts_a, counts_b = Counter(rater_a), Counter(rater_b)
    expected = sum(counts_a[label] * counts_b.get(label, 0) for label in counts_a) / (n * n)
    if expected >= 1.0:
        raise StatsError("kappa is undefined when both raters give every item the same label")
    return (observed - expected) / (1.0 - expected)
