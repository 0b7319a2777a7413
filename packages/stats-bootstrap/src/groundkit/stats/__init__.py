"""Statistics for comparing retrieval runs honestly.

Paired bootstrap intervals, exact McNemar and sign-flip tests, Holm adjustment, Wilson
intervals, detection limits and a verdict engine (`compare_items`). Every bad input raises
`StatsError`, a `ValueError`.
"""

from groundkit.stats.__about__ import __version__
from groundkit.stats._bootstrap import (
    BootstrapResult,
    IntervalEstimate,
    bootstrap_interval,
    paired_bootstrap,
)
from groundkit.stats._compare import ItemComparison, Verdict, compare_items, flip_share_floor
from groundkit.stats._engine import ResampleMethod
from groundkit.stats._errors import StatsError
from groundkit.stats._mcnemar import McNemarResult, mcnemar
from groundkit.stats._multiplicity import holm_adjust
from groundkit.stats._permutation import SignFlipResult, sign_flip_test
from groundkit.stats._power import (
    detection_limit,
    minimum_detectable_difference,
    paired_minimum_detectable_difference,
)
from groundkit.stats._proportions import (
    ProportionInterval,
    Stratum,
    stratified_wilson_interval,
    wilson_interval,
)

__all__ = [
    "BootstrapResult",
    "IntervalEstimate",
    "ItemComparison",
    "McNemarResult",
    "ProportionInterval",
    "ResampleMethod",
    "SignFlipResult",
    "StatsError",
    "Stratum",
    "Verdict",
    "__version__",
    "bootstrap_interval",
    "compare_items",
    "detection_limit",
    "flip_share_floor",
    "holm_adjust",
    "mcnemar",
    "minimum_detectable_difference",
    "paired_bootstrap",
    "paired_minimum_detectable_difference",
    "sign_flip_test",
    "stratified_wilson_interval",
    "wilson_interval",
]
