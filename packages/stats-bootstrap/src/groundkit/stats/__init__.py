"""Statistics for comparing retrieval runs honestly, from one engine.

Every verdict — a report's stage comparisons, `grk eval compare`, the HTML report, diagnosis
and the track record — comes from `compare_family` (or `compare_items`, a family of one):
exact paired tests as the gate, intervals chosen by measurement to keep their coverage,
family-wise control across every comparison, detection limits for the test actually used,
and "too few queries" where no outcome could be significant. Every bad input raises
`StatsError`, a `ValueError`.
"""

from groundkit.stats.__about__ import __version__
from groundkit.stats._errors import StatsError
from groundkit.stats.inference._agreement import cohen_kappa
from groundkit.stats.inference._bootstrap import (
    PERCENTILE_MIN_QUERIES,
    BootstrapResult,
    IntervalEstimate,
    bootstrap_interval,
    paired_bootstrap,
)
from groundkit.stats.inference._intervals import (
    DifferenceInterval,
    IntervalMethod,
    MeanInterval,
    mean_interval,
    paired_difference_interval,
)
from groundkit.stats.inference._mcnemar import McNemarResult, mcnemar
from groundkit.stats.inference._permutation import SignFlipResult, sign_flip_test
from groundkit.stats.inference._power import (
    detection_limit,
    mcnemar_power,
    minimum_detectable_difference,
    paired_minimum_detectable_difference,
    t_power,
)
from groundkit.stats.inference._proportions import (
    ProportionInterval,
    Stratum,
    exact_binomial_interval,
    stratified_wilson_interval,
    wilson_interval,
)
from groundkit.stats.inference._ratio import (
    RatioStratum,
    stratified_domain_interval,
    stratified_ratio_interval,
)
from groundkit.stats.kernels._engine import ResampleMethod
from groundkit.stats.verdicts._allpairs import AllPairsResult, PairResult, compare_all_pairs
from groundkit.stats.verdicts._compare import compare_items
from groundkit.stats.verdicts._comparison import GateTest, ItemComparison, Role, Verdict
from groundkit.stats.verdicts._family import (
    FamilySettings,
    PairedScores,
    compare_family,
    flip_share_floor,
    minimum_queries,
)
from groundkit.stats.verdicts._limits import (
    family_text,
    limit_text,
    limit_value,
    paired_limit_text,
    unpaired_limit_text,
)
from groundkit.stats.verdicts._multiplicity import (
    Adjustment,
    bh_adjust,
    holm_adjust,
    reproducing_alpha,
)
from groundkit.stats.verdicts._power_figures import MEASURED_POWER, PowerCell
from groundkit.stats.verdicts._stratified import (
    PairedStratum,
    StratifiedComparison,
    compare_stratified,
)

__all__ = [
    "MEASURED_POWER",
    "PERCENTILE_MIN_QUERIES",
    "Adjustment",
    "AllPairsResult",
    "BootstrapResult",
    "DifferenceInterval",
    "FamilySettings",
    "GateTest",
    "IntervalEstimate",
    "IntervalMethod",
    "ItemComparison",
    "McNemarResult",
    "MeanInterval",
    "PairResult",
    "PairedScores",
    "PairedStratum",
    "PowerCell",
    "ProportionInterval",
    "RatioStratum",
    "ResampleMethod",
    "Role",
    "SignFlipResult",
    "StatsError",
    "StratifiedComparison",
    "Stratum",
    "Verdict",
    "__version__",
    "bh_adjust",
    "bootstrap_interval",
    "cohen_kappa",
    "compare_all_pairs",
    "compare_family",
    "compare_items",
    "compare_stratified",
    "detection_limit",
    "exact_binomial_interval",
    "family_text",
    "flip_share_floor",
    "holm_adjust",
    "limit_text",
    "limit_value",
    "mcnemar",
    "mcnemar_power",
    "mean_interval",
    "minimum_detectable_difference",
    "minimum_queries",
    "paired_bootstrap",
    "paired_difference_interval",
    "paired_limit_text",
    "paired_minimum_detectable_difference",
    "reproducing_alpha",
    "sign_flip_test",
    "stratified_domain_interval",
    "stratified_ratio_interval",
    "stratified_wilson_interval",
    "t_power",
    "unpaired_limit_text",
    "wilson_interval",
]
