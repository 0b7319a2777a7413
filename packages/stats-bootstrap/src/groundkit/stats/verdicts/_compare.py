"""Compare two runs' per-item rows: `compare_items`, a family of one."""

from __future__ import annotations

from collections.abc import Mapping

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import format_ids
from groundkit.stats.inference._intervals import Bounds
from groundkit.stats.verdicts._comparison import ItemComparison
from groundkit.stats.verdicts._family import FamilySettings, PairedScores, compare_family

__all__ = ["compare_items"]

RowValue = bool | float | int | Mapping[str, float]


def _select(rows: Mapping[str, RowValue], *, side: str, metric: str | None) -> Mapping[str, object]:
    if not isinstance(rows, Mapping):
        raise StatsError(f"{side} must map item ids to values (got {type(rows).__name__})")
    nested = {qid: value for qid, value in rows.items() if isinstance(value, Mapping)}
    if not nested:
        return rows
    if len(nested) != len(rows):
        raise StatsError(
            f"{side} mixes per-metric rows and plain values "
            f"(plain: {format_ids(set(rows) - set(nested))})"
        )
    if metric is None:
        available = sorted({name for row in nested.values() for name in row})
        raise StatsError(
            f"{side} holds per-metric rows: pass metric= (available: {', '.join(available)})"
        )
    selected: dict[str, object] = {}
    for qid, row in nested.items():
        if metric not in row:
            raise StatsError(f"{side} row {qid!r} has no metric {metric!r}")
        selected[qid] = row[metric]
    return selected


# Public API: each keyword is a documented option; grouping them would hide them from
# help() and inspect.signature. The defaults are FamilySettings' (one place for each), read
# from its fields so the signature still shows their values.
def compare_items(  # noqa: PLR0913
    a: Mapping[str, RowValue],
    b: Mapping[str, RowValue],
    *,
    metric: str | None = None,
    resamples: int = FamilySettings.resamples,
    seed: int = FamilySettings.seed,
    confidence_level: float = FamilySettings.confidence_level,
    alpha: float = FamilySettings.alpha,
    power: float = FamilySettings.power,
    equivalence_margin: float | None = FamilySettings.equivalence_margin,
    bounds: Bounds = FamilySettings.bounds,
) -> ItemComparison:
    """Compare two runs' per-item rows and return a verdict with its evidence.

    Rows map item ids to right-or-wrong outcomes (bools, or numbers that are exactly 0 or 1)
    or to numeric per-query scores; rows may also map ids to per-metric dicts, with `metric`
    choosing one. Both runs must cover exactly the same ids.

    This is a family of one comparison in the verdict engine (see `compare_family`): the
    verdict is "better" or "worse" only when the exact gate (McNemar for right-or-wrong
    items, the sign-flip test for numeric ones) gives p < `alpha` and the interval of the
    difference (Tango's for binary items, paired t for numeric ones) excludes zero; "too few
    queries" when no outcome of this many items could be significant; "equivalent" when an
    `equivalence_margin` is given and the two one-sided tests show the difference inside it.

    The detection limit is the smallest true difference this comparison catches with
    probability `power`: exact McNemar power for binary items (flip share floored at the
    rule-of-three 3 / n), noncentral t for numeric ones (SD floored, when no item differs, at
    what 3 / n items differing by the metric's full range would give). None: none at this n.

    Args:
        a: Rows of the first (reference) run.
        b: Rows of the second run, with the same ids.
        metric: Metric to pick from per-metric rows; with plain rows it is only a label.
        resamples: Sign-flip patterns drawn when the test cannot be enumerated exactly.
        seed: Non-negative seed of every random step.
        confidence_level: Coverage of the interval, strictly in (0, 1).
        alpha: Level for the gate and the detection limit, strictly in (0, 1).
        power: Power for the detection limit, strictly in (0, 1).
        equivalence_margin: Margin for the equivalence test (TOST), or None.
        bounds: Bounds of a score: "auto" ([0, 1] when every score lies in it), a pair, or
            None for an unbounded metric.

    Returns:
        The frozen `ItemComparison`.

    Raises:
        StatsError: If the ids differ (the message lists them), a row lacks the metric, a value
            or a difference is not a finite number, or a setting is out of range.
    """
    rows_a = _select(a, side="a", metric=metric)
    rows_b = _select(b, side="b", metric=metric)
    settings = FamilySettings(
        resamples=resamples,
        seed=seed,
        confidence_level=confidence_level,
        alpha=alpha,
        power=power,
        adjustment="none",
        equivalence_margin=equivalence_margin,
        bounds=bounds,
    )
    return compare_family([PairedScores(rows_a, rows_b, metric=metric)], settings)[0]
