"""The verdict engine: is run b better than, worse than, or indistinguishable from run a?"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from groundkit.stats._bootstrap import paired_bootstrap
from groundkit.stats._engine import exact_mean
from groundkit.stats._errors import StatsError
from groundkit.stats._mcnemar import mcnemar
from groundkit.stats._permutation import sign_flip_test
from groundkit.stats._power import detection_limit, paired_minimum_detectable_difference
from groundkit.stats._validation import (
    check_confidence,
    check_probability,
    format_ids,
    paired_arrays,
)

__all__ = ["ItemComparison", "Verdict", "compare_items", "flip_share_floor"]

Verdict = Literal["better", "worse", "inconclusive"]
RowValue = bool | float | int | Mapping[str, float]


class ItemComparison(BaseModel):
    """Verdict and evidence for run b compared with run a on the same items.

    Attributes:
        metric: The metric compared (None for plain rows).
        kind: "binary" for right-or-wrong items, "numeric" for per-query scores.
        item_count: Number of paired items.
        mean_a: Mean of run a.
        mean_b: Mean of run b.
        difference: mean_b − mean_a.
        confidence_interval_low: Lower bound of the paired-bootstrap interval of the difference.
        confidence_interval_high: Upper bound of that interval.
        confidence_level: Coverage of the interval.
        detection_limit: Smallest true difference this comparison detects with the requested
            power at level alpha (same units as `difference`).
        flip_share: Observed share of items whose outcome differs (numeric: score differs).
        gained: Items better in b (binary: wrong in a, right in b).
        lost: Items worse in b (binary: right in a, wrong in b).
        mcnemar_p_value: Exact McNemar p-value (binary items only).
        sign_flip_p_value: Paired sign-flip p-value (numeric items only).
        p_value: The p-value of the gating test (McNemar for binary, sign-flip for numeric).
        alpha: Level the gating p-value must be below for a verdict other than inconclusive.
        verdict: "better", "worse" or "inconclusive".
        resamples: Bootstrap resamples (and the sign-flip budget).
        seed: Seed of the resampling.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str | None
    kind: Literal["binary", "numeric"]
    item_count: int
    mean_a: float
    mean_b: float
    difference: float
    confidence_interval_low: float
    confidence_interval_high: float
    confidence_level: float
    detection_limit: float
    flip_share: float
    gained: int
    lost: int
    mcnemar_p_value: float | None
    sign_flip_p_value: float | None
    p_value: float
    alpha: float
    verdict: Verdict
    resamples: int
    seed: int

    def summary(self) -> str:
        """One readable line: verdict, difference in points with its interval, limit and p."""
        label = f"{self.metric}: " if self.metric else ""
        test = "McNemar" if self.kind == "binary" else "sign-flip"
        return (
            f"{label}{self.verdict}: {100 * self.difference:+.1f} points "
            f"[{100 * self.confidence_interval_low:+.1f}, "
            f"{100 * self.confidence_interval_high:+.1f}] "
            f"({100 * self.confidence_level:g}% CI), detection limit "
            f"{100 * self.detection_limit:.1f} points, {test} p = {self.p_value:.2g}, "
            f"{self.gained} gained / {self.lost} lost of {self.item_count}"
        )


def flip_share_floor(item_count: int) -> float:
    """Smallest flip share used for a binary detection limit: the rule of three, 3 / n.

    Zero flips among n items is still consistent (at about 95%) with a true flip share up to
    3 / n, so the detection limit is computed from max(observed share, 3 / n), capped at 1.
    """
    return min(1.0, 3.0 / item_count)


def _delta_spread(deltas: npt.NDArray[np.float64]) -> float:
    return float(np.std(deltas, ddof=1))


def _spread_floor(
    deltas: npt.NDArray[np.float64],
    values_a: npt.NDArray[np.float64],
    values_b: npt.NDArray[np.float64],
) -> float:
    """Smallest standard deviation of the deltas used for a numeric detection limit.

    The numeric twin of the rule of three: identical deltas on n items are still consistent
    with a true spread of the size of a difference on 3 / n of them. The size is the largest
    observed difference, else the largest score (so two identical runs still get a finite,
    non-zero limit on the metric's own scale), else 1.
    """
    scale = float(np.max(np.abs(deltas)))
    if scale == 0.0:
        scale = float(max(np.max(np.abs(values_a)), np.max(np.abs(values_b))))
    if scale == 0.0:
        scale = 1.0
    return math.sqrt(flip_share_floor(deltas.size)) * scale


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


def compare_items(
    a: Mapping[str, RowValue],
    b: Mapping[str, RowValue],
    *,
    metric: str | None = None,
    resamples: int = 2_000,
    seed: int = 0,
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.80,
) -> ItemComparison:
    """Compare two runs' per-item rows and return a verdict with its evidence.

    Rows map item ids to right-or-wrong outcomes (bools, or numbers that are exactly 0 or 1)
    or to numeric per-query scores; rows may also map ids to per-metric dicts, with `metric`
    choosing one. Both runs must cover exactly the same ids.

    The difference (b − a) gets a paired-bootstrap percentile interval. The verdict is
    "better" or "worse" only when that interval excludes zero AND a paired test is below
    `alpha`: exact McNemar for binary items, the sign-flip randomisation test for numeric
    ones. The second gate matters for tiny samples, where every resample agrees (four items
    that all flip one way give the interval [1, 1] but McNemar p = 0.125).

    The detection limit says how large a true difference must be for this comparison to catch
    it with probability `power` at level `alpha`. Binary items: `detection_limit(n, d)` with d
    the observed flip share, floored at the rule-of-three 3 / n so that zero or very few flips
    still give a finite, honest limit. Numeric items: the paired minimum detectable difference
    from the observed deltas' standard deviation, floored like the binary case (see
    `_spread_floor`) so that identical deltas never claim a limit of zero.

    Args:
        a: Rows of the first (reference) run.
        b: Rows of the second run, with the same ids.
        metric: Metric to pick from per-metric rows; with plain rows it is only a label.
        resamples: Bootstrap resamples (and sign-flip budget).
        seed: Non-negative seed of the resampling.
        confidence_level: Coverage of the bootstrap interval, strictly in (0, 1).
        alpha: Level for the gating test and the detection limit, strictly in (0, 1).
        power: Power for the detection limit, strictly in (0, 1).

    Returns:
        The frozen `ItemComparison`.

    Raises:
        StatsError: If the ids differ (the message lists them), a row lacks the metric, a value
            is not a finite number, numeric rows have fewer than two items, or a setting is out
            of range.
    """
    level = check_confidence(confidence_level)
    threshold = check_probability(alpha, name="alpha")
    chance = check_probability(power, name="power")
    rows_a = _select(a, side="a", metric=metric)
    rows_b = _select(b, side="b", metric=metric)
    ids, values_a, values_b = paired_arrays(rows_a, rows_b, baseline_name="a", candidate_name="b")
    count = len(ids)
    binary = bool(np.all((values_a == 0.0) | (values_a == 1.0))) and bool(
        np.all((values_b == 0.0) | (values_b == 1.0))
    )
    if not binary and count < 2:
        raise StatsError(f"numeric rows need at least 2 items to compare (got {count})")
    scores_a = dict(zip(ids, values_a.tolist(), strict=True))
    scores_b = dict(zip(ids, values_b.tolist(), strict=True))
    boot = paired_bootstrap(
        scores_a,
        scores_b,
        baseline_name="a",
        candidate_name="b",
        metric=metric or "score",
        resamples=resamples,
        seed=seed,
        confidence_level=level,
    )
    deltas = values_b - values_a
    gained = int(np.count_nonzero(deltas > 0.0))
    lost = int(np.count_nonzero(deltas < 0.0))
    flip_share = (gained + lost) / count
    mcnemar_p: float | None = None
    sign_flip_p: float | None = None
    if binary:
        table = mcnemar((values_a == 1.0).tolist(), (values_b == 1.0).tolist())
        mcnemar_p = gate_p = table.p_value
        limit = detection_limit(
            count,
            max(flip_share, flip_share_floor(count)),
            confidence=1.0 - threshold,
            power=chance,
        )
    else:
        flips = sign_flip_test(scores_a, scores_b, resamples=resamples, seed=seed)
        sign_flip_p = gate_p = flips.p_value_two_sided
        limit = paired_minimum_detectable_difference(
            max(_delta_spread(deltas), _spread_floor(deltas, values_a, values_b)),
            count,
            power=chance,
            alpha=threshold,
        )
    verdict: Verdict = "inconclusive"
    if gate_p < threshold and boot.confidence_interval_low > 0.0:
        verdict = "better"
    elif gate_p < threshold and boot.confidence_interval_high < 0.0:
        verdict = "worse"
    return ItemComparison(
        metric=metric,
        kind="binary" if binary else "numeric",
        item_count=count,
        mean_a=exact_mean(values_a),
        mean_b=exact_mean(values_b),
        difference=boot.effect,
        confidence_interval_low=boot.confidence_interval_low,
        confidence_interval_high=boot.confidence_interval_high,
        confidence_level=level,
        detection_limit=limit,
        flip_share=flip_share,
        gained=gained,
        lost=lost,
        mcnemar_p_value=mcnemar_p,
        sign_flip_p_value=sign_flip_p,
        p_value=gate_p,
        alpha=threshold,
        verdict=verdict,
        resamples=boot.resamples,
        seed=boot.seed,
    )
