"""The verdict engine: every paired comparison, alone or as a family, goes through here.

A comparison's verdict is "better" or "worse" only when its gate — the exact McNemar test for
right-or-wrong items, the sign-flip randomisation test (exact where it can be enumerated) for
numeric ones — gives a family-adjusted p-value below alpha AND the interval of the difference
excludes zero on the same side. The family is every decision compared together (a report's
stages × headline metrics): Holm's adjustment by default keeps the chance of any false claim
in the whole family at alpha; Benjamini–Hochberg ("bh") controls the false discovery rate
instead. Guardrails are shown beside the decisions, never adjusted, never claims.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import (
    check_confidence,
    check_probability,
    check_resamples,
    check_seed,
    finite_deltas,
    paired_arrays,
    to_float,
)
from groundkit.stats.inference._effects import (
    equivalence_p_value,
    paired_t_test,
    relative_change_interval,
    standardized_effect,
)
from groundkit.stats.inference._intervals import (
    Bounds,
    delta_bounds,
    difference_interval,
    is_binary,
)
from groundkit.stats.inference._mcnemar import mcnemar_p_value
from groundkit.stats.inference._permutation import sign_flip_test
from groundkit.stats.inference._power import (
    betting_detection_limit,
    detection_limit,
    paired_minimum_detectable_difference,
)
from groundkit.stats.kernels._engine import exact_mean
from groundkit.stats.verdicts._comparison import GateTest, ItemComparison, Role, Verdict
from groundkit.stats.verdicts._multiplicity import Adjustment, adjust
from groundkit.stats.verdicts._power_figures import limit_caution

__all__ = [
    "FamilySettings",
    "PairedScores",
    "compare_family",
    "flip_share_floor",
    "minimum_queries",
]


@dataclass(frozen=True)
class PairedScores:
    """One comparison of a family: run b against run a on the same items.

    Attributes:
        a: Scores of the reference run by item id.
        b: Scores of the compared run, with the same ids.
        metric: The metric (a label).
        label: Name of the comparison, e.g. the candidate stage.
        role: "decision" or "guardrail".
    """

    a: Mapping[str, object]
    b: Mapping[str, object]
    metric: str | None = None
    label: str | None = None
    role: Role = "decision"


@dataclass(frozen=True)
class FamilySettings:
    """Settings shared by every comparison of a family (checked by `compare_family`)."""

    resamples: int = 10_000
    seed: int = 0
    confidence_level: float = 0.95
    alpha: float = 0.05
    power: float = 0.80
    adjustment: Adjustment = "holm"
    equivalence_margin: float | None = None
    bounds: Bounds = "auto"


def flip_share_floor(item_count: int) -> float:
    """Smallest flip share used for a detection limit: the rule of three, 3 / n.

    Zero flips among n items is still consistent (at about 95%) with a true flip share up to
    3 / n, so a detection limit is computed from max(observed share, 3 / n), capped at 1.
    """
    return min(1.0, 3.0 / item_count)


def minimum_queries(alpha: float) -> int:
    """Fewest paired items with which an exact two-sided paired test can reach p < alpha.

    The smallest p-value an exact sign-flip (or McNemar) test of n items can give is
    2 / 2ⁿ, when every item differs in the same direction; below this n no outcome is
    significant, so the verdict is "too few queries" rather than a hollow "inconclusive".
    """
    return math.floor(1.0 - math.log2(alpha)) + 1


@dataclass(frozen=True)
class _Prepared:
    member: PairedScores
    values_a: NDArray[np.float64]
    values_b: NDArray[np.float64]
    deltas: NDArray[np.float64]
    binary: bool
    bounds: tuple[float, float] | None


def _prepare(member: PairedScores, index: int, bounds: Bounds) -> _Prepared:
    if not isinstance(member, PairedScores):
        raise StatsError(
            f"family member {index} must be PairedScores (got {type(member).__name__})"
        )
    ids, values_a, values_b = paired_arrays(
        member.a, member.b, baseline_name="a", candidate_name="b"
    )
    deltas = finite_deltas(values_a, values_b, ids=ids)
    binary = is_binary(values_a) and is_binary(values_b)
    return _Prepared(
        member, values_a, values_b, deltas, binary, delta_bounds(values_a, values_b, bounds)
    )


def _thresholds(alpha: float, size: int, adjustment: Adjustment) -> list[float]:
    """The raw-p levels a gate p-value is compared with under the adjustment."""
    if adjustment == "holm":
        return [alpha / (size - j) for j in range(size)]
    if adjustment == "bh":
        return [alpha * (j + 1) / size for j in range(size)]
    return [alpha]


def _gate(
    item: _Prepared, settings: FamilySettings, thresholds: Sequence[float]
) -> tuple[GateTest, float, float, int]:
    """(test, p-value, its Monte Carlo standard error, patterns drawn)."""
    if item.binary:
        gained = int(np.count_nonzero(item.deltas > 0.0))
        lost = int(np.count_nonzero(item.deltas < 0.0))
        return "exact McNemar", mcnemar_p_value(gained, lost), 0.0, 0
    flips = sign_flip_test(
        item.values_a.tolist(),
        item.values_b.tolist(),
        resamples=settings.resamples,
        seed=settings.seed,
        thresholds=thresholds,
    )
    if flips.exact:
        return "exact sign-flip", flips.p_value_two_sided, 0.0, 0
    return "Monte Carlo sign-flip", flips.p_value_two_sided, flips.standard_error, flips.resamples


def _spread_floor(item: _Prepared) -> float:
    """The differences' SD assumed when every difference is the same.

    None of n items differing is still consistent (at about 95%) with up to 3 / n of them
    differing; the floor is the SD such differences of the metric's full range would have.
    """
    if item.bounds is not None:
        scale = (item.bounds[1] - item.bounds[0]) / 2.0
    else:
        scale = max(float(np.max(np.abs(item.values_a))), float(np.max(np.abs(item.values_b))))
        scale = scale or 1.0
    share = flip_share_floor(item.deltas.size)
    return scale * math.sqrt(share * (1.0 - share)) if share < 1.0 else scale


def _limit(item: _Prepared, method: str, alpha: float, config: FamilySettings) -> float | None:
    n = int(item.deltas.size)
    if n < minimum_queries(alpha):
        return None
    if item.binary:
        share = float(np.count_nonzero(item.deltas)) / n
        return detection_limit(
            n, max(share, flip_share_floor(n)), confidence=1.0 - alpha, power=config.power
        )
    observed = float(np.std(item.deltas, ddof=1))
    spread = observed or _spread_floor(item)
    # Skewed differences are decided with the betting interval: solve the limit for it. With
    # no spread at all the floor stands for data not seen, which the t limit describes.
    if method == "betting" and item.bounds is not None and observed > 0.0:
        return betting_detection_limit(
            item.deltas,
            bounds=item.bounds,
            sd=spread,
            confidence_level=config.confidence_level,
            alpha=alpha,
            power=config.power,
            seed=config.seed,
        )
    return paired_minimum_detectable_difference(spread, n, power=config.power, alpha=alpha)


def _verdict(
    n: int, needed: int, p_adjusted: float, alpha: float, low: float, high: float, equivalent: bool
) -> Verdict:
    if n < needed:
        return "too few queries"
    if p_adjusted < alpha and low > 0.0:
        return "better"
    if p_adjusted < alpha and high < 0.0:
        return "worse"
    return "equivalent" if equivalent else "inconclusive"


def _effects(item: _Prepared, level: float) -> dict[str, float | None]:
    test = paired_t_test(item.deltas)
    size = standardized_effect(item.deltas, level)
    relative = relative_change_interval(item.values_a, item.values_b, level)
    return {
        "paired_t_statistic": None if test is None else test[0],
        "paired_t_p_value": None if test is None else test[1],
        "effect_size": None if size is None else size[0],
        "effect_size_low": None if size is None else size[1],
        "effect_size_high": None if size is None else size[2],
        "relative_change": None if relative is None else relative[0],
        "relative_change_low": None if relative is None else relative[1],
        "relative_change_high": None if relative is None else relative[2],
    }


def _check(settings: FamilySettings) -> FamilySettings:
    margin = settings.equivalence_margin
    if margin is not None:
        margin = to_float(margin, where="equivalence_margin")
        if not (math.isfinite(margin) and margin > 0.0):
            raise StatsError(f"equivalence_margin must be a positive number (got {margin})")
    if settings.adjustment not in ("holm", "bh", "none"):
        raise StatsError(f"adjustment must be 'holm', 'bh' or 'none' (got {settings.adjustment!r})")
    return FamilySettings(
        resamples=check_resamples(settings.resamples),
        seed=check_seed(settings.seed),
        confidence_level=check_confidence(settings.confidence_level),
        alpha=check_probability(settings.alpha, name="alpha"),
        power=check_probability(settings.power, name="power"),
        adjustment=settings.adjustment,
        equivalence_margin=margin,
        bounds=settings.bounds,
    )


def _family_levels(settings: FamilySettings, size: int) -> tuple[float, float]:
    """(level each detection limit is computed at, level the minimum n is computed at)."""
    if settings.adjustment == "none" or size <= 1:
        return settings.alpha, settings.alpha
    # Holm's first step and Bonferroni both need p < alpha / m to reject anything; BH can
    # reject everything at p ≤ alpha, but a single true difference still needs alpha / m.
    first = settings.alpha / size
    return first, first if settings.adjustment == "holm" else settings.alpha


def compare_family(
    members: Sequence[PairedScores], settings: FamilySettings | None = None
) -> list[ItemComparison]:
    """Compare every member of a family and decide each under family-wise control.

    Args:
        members: The comparisons; those with role "decision" form the family.
        settings: Shared settings (default `FamilySettings()`).

    Returns:
        One `ItemComparison` per member, in order.

    Raises:
        StatsError: A member's rows do not pair, hold a non-finite score or difference, or a
            setting is out of range.
    """
    config = _check(settings or FamilySettings())
    prepared = [_prepare(m, i, config.bounds) for i, m in enumerate(members)]
    decisions = [i for i, p in enumerate(prepared) if p.member.role == "decision"]
    size = len(decisions)
    thresholds = _thresholds(config.alpha, max(size, 1), config.adjustment)
    gates = [
        _gate(p, config, thresholds if p.member.role == "decision" else [config.alpha])
        for p in prepared
    ]
    adjusted = dict(
        zip(decisions, adjust([gates[i][1] for i in decisions], config.adjustment), strict=True)
    )
    equivalence = _equivalence(prepared, decisions, config)
    limit_level, floor_level = _family_levels(config, size)
    results = []
    for index, item in enumerate(prepared):
        deciding = item.member.role == "decision"
        results.append(
            _result(
                item,
                config,
                gate=gates[index],
                p_adjusted=adjusted.get(index, gates[index][1]),
                family=(size, config.adjustment) if deciding else (1, "none"),
                levels=(limit_level, floor_level) if deciding else (config.alpha, config.alpha),
                equivalence=equivalence.get(index),
            )
        )
    return results


def _equivalence(
    prepared: Sequence[_Prepared], decisions: Sequence[int], config: FamilySettings
) -> dict[int, tuple[float, float]]:
    """Raw and family-adjusted TOST p-values by member index (empty without a margin)."""
    margin = config.equivalence_margin
    if margin is None:
        return {}
    raw = {
        i: equivalence_p_value(p.deltas, margin, binary=p.binary, spread_floor=_spread_floor(p))
        for i, p in enumerate(prepared)
    }
    adjusted = dict(
        zip(decisions, adjust([raw[i] for i in decisions], config.adjustment), strict=True)
    )
    return {i: (raw[i], adjusted.get(i, raw[i])) for i in raw}


def _result(
    item: _Prepared,
    config: FamilySettings,
    *,
    gate: tuple[GateTest, float, float, int],
    p_adjusted: float,
    family: tuple[int, Adjustment],
    levels: tuple[float, float],
    equivalence: tuple[float, float] | None,
) -> ItemComparison:
    test, p_value, error, drawn = gate
    n = int(item.deltas.size)
    low, high, method, caution = difference_interval(
        item.deltas,
        binary=item.binary,
        confidence_level=config.confidence_level,
        bounds=item.bounds,
        seed=config.seed,
    )
    gained = int(np.count_nonzero(item.deltas > 0.0))
    lost = int(np.count_nonzero(item.deltas < 0.0))
    needed = minimum_queries(levels[1])
    equivalent = None if equivalence is None else equivalence[1] < config.alpha
    difference = exact_mean(item.deltas)
    limit = _limit(item, method, levels[0], config)
    return ItemComparison(
        label=item.member.label,
        metric=item.member.metric,
        kind="binary" if item.binary else "numeric",
        role=item.member.role,
        item_count=n,
        mean_a=exact_mean(item.values_a),
        mean_b=exact_mean(item.values_b),
        difference=difference,
        confidence_interval_low=min(low, difference),
        confidence_interval_high=max(high, difference),
        confidence_level=config.confidence_level,
        interval_method=method,
        interval_caution=caution,
        test=test,
        p_value=p_value,
        p_value_standard_error=error,
        test_resamples=drawn,
        mcnemar_p_value=p_value if item.binary else None,
        sign_flip_p_value=None if item.binary else p_value,
        p_adjusted=p_adjusted,
        adjustment=family[1],
        family_size=family[0],
        alpha=config.alpha,
        verdict=_verdict(n, needed, p_adjusted, config.alpha, low, high, bool(equivalent)),
        minimum_queries=needed,
        detection_limit=limit,
        detection_caution=limit_caution(
            item.deltas, binary=item.binary, method=method, limit=limit
        ),
        power=config.power,
        flip_share=(gained + lost) / n,
        gained=gained,
        lost=lost,
        ties=n - gained - lost,
        **_effects(item, config.confidence_level),
        equivalence_margin=config.equivalence_margin,
        equivalence_p_value=None if equivalence is None else equivalence[0],
        equivalence_p_adjusted=None if equivalence is None else equivalence[1],
        equivalent=equivalent,
        resamples=config.resamples,
        seed=config.seed,
    )
