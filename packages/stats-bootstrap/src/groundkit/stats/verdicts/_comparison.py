"""The one result of every paired comparison: `ItemComparison`, and how it reads aloud."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from groundkit.stats.inference._intervals import IntervalMethod
from groundkit.stats.verdicts._limits import paired_limit_text
from groundkit.stats.verdicts._multiplicity import Adjustment

__all__ = ["GateTest", "ItemComparison", "Role", "Verdict"]

Verdict = Literal["better", "worse", "inconclusive", "equivalent", "too few queries"]
"""What a comparison concludes. "equivalent" needs an equivalence margin; "too few queries"
means no outcome of this many queries could reach significance at the family's level."""

Role = Literal["decision", "guardrail"]
GateTest = Literal["exact McNemar", "exact sign-flip", "Monte Carlo sign-flip"]


class ItemComparison(BaseModel):
    """Verdict and evidence for run b compared with run a on the same items.

    Attributes:
        label: Name of the comparison (e.g. the candidate stage), or None.
        metric: The metric compared (None for plain rows).
        kind: "binary" for right-or-wrong items, "numeric" for per-query scores.
        role: "decision" (counts in the family and makes a claim) or "guardrail" (shown
            beside a decision, not adjusted, not a claim).
        item_count: Number of paired items.
        mean_a: Mean of run a.
        mean_b: Mean of run b.
        difference: mean_b − mean_a.
        confidence_interval_low: Lower end of the interval of the difference.
        confidence_interval_high: Upper end.
        confidence_level: Coverage the interval is built for.
        interval_method: "tango" (binary), "t" or "betting" (numeric), "none".
        interval_caution: Why the interval's coverage is not assured, when it is not.
        test: The gate: "exact McNemar", "exact sign-flip" or "Monte Carlo sign-flip".
        p_value: The gate's two-sided p-value (before any family adjustment).
        p_value_standard_error: Monte Carlo standard error of ``p_value`` (0 when exact).
        test_resamples: Sign patterns a Monte Carlo p-value stands for (0 when exact).
        mcnemar_p_value: Exact McNemar p-value (binary items only).
        sign_flip_p_value: Sign-flip p-value (numeric items only).
        p_adjusted: ``p_value`` adjusted over the family (equal to it for one comparison).
        adjustment: "holm", "bh" or "none".
        family_size: Decisions in the family the adjustment ran over.
        alpha: Level the adjusted p-value must be below for a claim.
        verdict: "better", "worse", "inconclusive", "equivalent" or "too few queries".
        minimum_queries: Fewest items with which this family could reach a verdict at all.
        detection_limit: Smallest true difference detected with probability ``power`` by this
            comparison at the family's level (None: none is, at this n).
        detection_caution: Why the limit's power is not assured, when it is not.
        power: Power the detection limit is computed for.
        flip_share: Share of items whose outcome differs (numeric: whose score differs).
        gained: Items better in b (binary: wrong in a, right in b).
        lost: Items worse in b.
        ties: Items equal in both.
        paired_t_statistic: Student's paired t (None without spread).
        paired_t_p_value: Its two-sided p-value (reported, never the gate).
        effect_size: Cohen's d_z, the mean difference over the differences' SD (None
            without spread).
        effect_size_low: Lower end of d_z's noncentral-t interval.
        effect_size_high: Upper end.
        relative_change: mean_b / mean_a − 1 (None when mean_a is 0 or not clear of 0).
        relative_change_low: Lower end of Fieller's interval.
        relative_change_high: Upper end.
        equivalence_margin: Margin of the equivalence test, or None when not asked.
        equivalence_p_value: TOST p-value (the larger one-sided p).
        equivalence_p_adjusted: The same adjusted over the family.
        equivalent: Whether equivalence within the margin was shown (None when not asked).
        resamples: Sign-flip budget requested.
        seed: Seed of every random step.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str | None = None
    metric: str | None
    kind: Literal["binary", "numeric"]
    role: Role = "decision"
    item_count: int
    mean_a: float
    mean_b: float
    difference: float
    confidence_interval_low: float
    confidence_interval_high: float
    confidence_level: float
    interval_method: IntervalMethod
    interval_caution: str | None = None
    test: GateTest
    p_value: float
    p_value_standard_error: float = 0.0
    test_resamples: int = 0
    mcnemar_p_value: float | None
    sign_flip_p_value: float | None
    p_adjusted: float
    adjustment: Adjustment = "none"
    family_size: int = 1
    alpha: float
    verdict: Verdict
    minimum_queries: int
    detection_limit: float | None
    detection_caution: str | None = None
    power: float
    flip_share: float
    gained: int
    lost: int
    ties: int
    paired_t_statistic: float | None = None
    paired_t_p_value: float | None = None
    effect_size: float | None = None
    effect_size_low: float | None = None
    effect_size_high: float | None = None
    relative_change: float | None = None
    relative_change_low: float | None = None
    relative_change_high: float | None = None
    equivalence_margin: float | None = None
    equivalence_p_value: float | None = None
    equivalence_p_adjusted: float | None = None
    equivalent: bool | None = None
    resamples: int
    seed: int

    @property
    def claims(self) -> bool:
        """True when this comparison makes a claim (better, worse or equivalent)."""
        return self.role == "decision" and self.verdict in ("better", "worse", "equivalent")

    def detection_text(self) -> str:
        """The detection limit on the metric's scale, with its family, e.g.

        ``0.037 (paired, holm over 20 comparisons)``; ``none at this n`` when no difference is
        detectable (see :func:`groundkit.stats.paired_limit_text`).
        """
        return paired_limit_text(self.detection_limit, self.adjustment, self.family_size)

    def summary(self) -> str:
        """One readable line: verdict, difference with its interval, limit and p (metric scale)."""
        label = f"{self.metric}: " if self.metric else ""
        adjusted = (
            f", {self.adjustment} p = {self.p_adjusted:.2g} over {self.family_size}"
            if self.family_size > 1
            else ""
        )
        if self.verdict == "too few queries":
            return (
                f"{label}too few queries: {self.item_count} < {self.minimum_queries} needed for "
                f"any verdict at alpha {self.alpha:g}{adjusted}; {self.difference:+.3f}, "
                f"{self.gained} gained / {self.lost} lost"
            )
        return (
            f"{label}{self.verdict}: {self.difference:+.3f} "
            f"[{self.confidence_interval_low:+.3f}, {self.confidence_interval_high:+.3f}] "
            f"({100 * self.confidence_level:g}% CI, {self.interval_method}), detection limit "
            f"{self.detection_text()}, {self.test} p = {self.p_value:.2g}{adjusted}, "
            f"{self.gained} gained / {self.lost} lost of {self.item_count}"
        )
