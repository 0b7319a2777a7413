"""Paired comparisons of two runs from a *stratified* sample: estimates weighted by strata.

A pooled evaluation judges a sample drawn in strata of unequal sizes (equal shares per
stratum, by design). Counting the sampled items as if they were the population weights every
stratum alike, so a stratum of 20 items counts as much as one of 2,000, and a verdict can come
out in the wrong direction. Here every sampled item stands for ``N_h / n_h`` items of its
stratum (``N_h`` items, ``n_h`` sampled), for the estimate, its interval and the test alike.

The compared measure is the difference in recall over the population's relevant items:

    D = (Σ_h N_h · (g_h − l_h) / n_h) / (Σ_h N_h · r_h / n_h),

with ``g_h`` the sampled relevant items only run b found, ``l_h`` those only run a found and
``r_h`` the sampled relevant items. Its standard error is the linearised ratio estimator's
(sample variances within strata, each with half an item added to its gained and its lost
items, and the finite-population correction, so a stratum judged whole adds no variance);
the interval and the gate are Student's t with Satterthwaite's degrees of freedom, p-values
adjusted over the family (Holm), and the verdict follows the family's gate as
`compare_family` does, "too few queries" when fewer discordant items were sampled than any
exact paired test would need.

Why not an exact sign-flip test on the weighted differences: conditional on the sampled
items, it ignores the variance of strata whose sample saw no discordant item. Simulated on a
pool whose decisive stratum is large and rarely sampled, it named the wrong direction more
often than the right one (3.1% against 1.4% at 50 items); the t gate above stays under α/2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from groundkit.stats._errors import StatsError
from groundkit.stats._validation import check_count, check_probability
from groundkit.stats.kernels._special import t_ppf, t_sf
from groundkit.stats.verdicts._comparison import Verdict
from groundkit.stats.verdicts._family import minimum_queries
from groundkit.stats.verdicts._multiplicity import holm_adjust

__all__ = ["PairedStratum", "StratifiedComparison", "compare_stratified"]


class PairedStratum(BaseModel):
    """One stratum of a stratified sample, counted for two runs' recall of relevant items.

    Attributes:
        n: Items sampled (and decided) in the stratum, at least 1.
        population_size: Items the stratum stands for, at least ``n``.
        relevant: Sampled items that are relevant.
        gained: Relevant sampled items run b found and run a did not.
        lost: Relevant sampled items run a found and run b did not.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    population_size: int
    relevant: int
    gained: int
    lost: int


class StratifiedComparison(BaseModel):
    """Run b against run a from a stratified sample, decided under family-wise control.

    Attributes:
        label: The comparison's name (the compared run).
        difference: Estimated recall of b minus recall of a over the population's relevant
            items (strata weighted by their sizes).
        low: Lower end of the interval of the difference.
        high: Upper end.
        confidence_level: The interval's coverage.
        p_value: The weighted exact sign-flip test's two-sided p-value.
        p_adjusted: ``p_value`` adjusted over the family (Holm).
        alpha: Level the adjusted p-value must be below for a claim.
        verdict: "better", "worse", "inconclusive" or "too few queries".
        gained: Sampled relevant items only b found.
        lost: Sampled relevant items only a found.
        effective_n: Kish's effective number of discordant items (what the weights leave).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    difference: float
    low: float
    high: float
    confidence_level: float
    p_value: float
    p_adjusted: float
    alpha: float
    verdict: Verdict
    gained: int
    lost: int
    effective_n: float


def _checked(strata: Sequence[PairedStratum], label: str) -> list[PairedStratum]:
    if not isinstance(strata, (list, tuple)) or not strata:
        raise StatsError(f"{label}: strata must be a non-empty sequence of PairedStratum")
    for index, s in enumerate(strata):
        where = f"{label}: stratum {index}"
        if not isinstance(s, PairedStratum):
            raise StatsError(f"{where} must be a PairedStratum (got {s!r})")
        check_count(s.n, name=f"{where} n")
        check_count(s.population_size, name=f"{where} population_size", minimum=s.n)
        for name in ("relevant", "gained", "lost"):
            check_count(getattr(s, name), name=f"{where} {name}", minimum=0)
        if s.gained + s.lost > s.relevant or s.relevant > s.n:
            raise StatsError(
                f"{where}: need gained + lost ({s.gained + s.lost}) <= relevant "
                f"({s.relevant}) <= n ({s.n})"
            )
    return list(strata)


def _estimate(strata: list[PairedStratum]) -> tuple[float, float, float]:
    """The weighted difference, its linearised standard error and Satterthwaite's df.

    Each stratum's spread is computed with half an item added to both its gained and its lost
    items (the Agresti–Caffo adjustment, for the variance only): a stratum whose sample saw
    no discordant item still adds the variance that its size makes possible, which keeps the
    coverage at small samples.
    """
    total = math.fsum(s.population_size * (s.gained - s.lost) / s.n for s in strata)
    relevant = math.fsum(s.population_size * s.relevant / s.n for s in strata)
    if relevant == 0.0:
        return 0.0, 0.0, math.inf
    ratio = total / relevant
    parts: list[tuple[float, int]] = []
    for s in strata:
        if s.n < 2 or s.relevant == 0:
            continue
        # d = y − R·x per item: gained (1 − R), lost (−1 − R), other relevant −R, others 0.
        gained, lost, n = s.gained + 0.5, s.lost + 0.5, s.n + 1
        tied = max(0.0, s.relevant - s.gained - s.lost)
        first = gained * (1 - ratio) + lost * (-1 - ratio) - tied * ratio
        second = gained * (1 - ratio) ** 2 + lost * (1 + ratio) ** 2 + tied * ratio**2
        spread = max(0.0, (second - first * first / n) / (n - 1))
        correction = max(0.0, 1.0 - s.n / s.population_size)
        parts.append(((s.population_size / relevant) ** 2 * correction * spread / s.n, s.n))
    variance = math.fsum(v for v, _ in parts)
    if variance == 0.0:
        return ratio, 0.0, math.inf
    df = variance**2 / math.fsum(v * v / (n - 1) for v, n in parts)
    return ratio, math.sqrt(variance), df


def _interval_and_p(ratio: float, error: float, df: float, level: float) -> tuple[float, ...]:
    """The t interval (clipped to [−1, 1]) and the two-sided p-value of "no difference"."""
    if error == 0.0:
        return ratio, ratio, 1.0 if ratio == 0.0 else 0.0
    half = t_ppf(0.5 + level / 2.0, df) * error
    p_value = min(1.0, 2.0 * t_sf(abs(ratio) / error, df))
    return max(-1.0, ratio - half), min(1.0, ratio + half), p_value


def _discordant(strata: list[PairedStratum]) -> list[float]:
    """Each discordant sampled item's weighted difference (``± N_h / n_h``)."""
    deltas: list[float] = []
    for s in strata:
        weight = s.population_size / s.n
        deltas.extend([weight] * s.gained + [-weight] * s.lost)
    return deltas


def _kish(deltas: Sequence[float]) -> float:
    weights = [abs(d) for d in deltas]
    squares = math.fsum(w * w for w in weights)
    return math.fsum(weights) ** 2 / squares if squares else 0.0


def compare_stratified(
    members: Mapping[str, Sequence[PairedStratum]],
    *,
    confidence: float = 0.95,
    alpha: float = 0.05,
) -> list[StratifiedComparison]:
    """Compare each run with the reference from a stratified sample, under Holm control.

    Args:
        members: Label of each compared run to its strata (the same strata for all, counted
            against the same reference run a).
        confidence: Coverage of every interval, strictly in (0, 1).
        alpha: Family-wise level of the claims, strictly in (0, 1).

    Returns:
        One comparison per member, in the order given.

    Raises:
        StatsError: No members, a stratum out of range, or a bad level.
    """
    if not isinstance(members, Mapping) or not members:
        raise StatsError("members must be a non-empty mapping of label to strata")
    level = check_probability(confidence, name="confidence")
    gate = check_probability(alpha, name="alpha")
    fewest = minimum_queries(gate)
    rows = []
    for label, strata in members.items():
        parsed = _checked(strata, str(label))
        ratio, error, df = _estimate(parsed)
        low, high, p_value = _interval_and_p(ratio, error, df, level)
        rows.append((str(label), parsed, _discordant(parsed), (ratio, low, high), p_value))
    adjusted = holm_adjust([row[4] for row in rows])
    out = []
    for (label, parsed, deltas, (difference, low, high), p_value), p_adj in zip(
        rows, adjusted, strict=True
    ):
        verdict: Verdict = "inconclusive"
        if len(deltas) < fewest:
            verdict = "too few queries"
        elif p_adj < gate and difference != 0.0:
            verdict = "better" if difference > 0 else "worse"
        out.append(
            StratifiedComparison(
                label=label,
                difference=difference,
                low=low,
                high=high,
                confidence_level=level,
                p_value=p_value,
                p_adjusted=p_adj,
                alpha=gate,
                verdict=verdict,
                gained=sum(s.gained for s in parsed),
                lost=sum(s.lost for s in parsed),
                effective_n=_kish(deltas),
            )
        )
    return out
