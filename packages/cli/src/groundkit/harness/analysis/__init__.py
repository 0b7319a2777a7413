"""What a report says beyond its scores: statistics, notes, ablation, evidence, duplicates."""

from typing import TYPE_CHECKING

from groundkit.harness._lazy import harness_exports

if TYPE_CHECKING:
    from groundkit.harness.analysis._notes import DetectionLimits, detection_limits
    from groundkit.harness.analysis._rerun import rerun_chunk_fixes
    from groundkit.harness.analysis._stats import (
        family_settings,
        report_ablation_family,
        report_family,
    )
    from groundkit.harness.analysis._verify import comparison_problem

_EXPORTS: dict[str, str] = {
    "DetectionLimits": "groundkit.harness.analysis._notes",
    "comparison_problem": "groundkit.harness.analysis._verify",
    "detection_limits": "groundkit.harness.analysis._notes",
    "family_settings": "groundkit.harness.analysis._stats",
    "report_ablation_family": "groundkit.harness.analysis._stats",
    "report_family": "groundkit.harness.analysis._stats",
    "rerun_chunk_fixes": "groundkit.harness.analysis._rerun",
}

__all__ = [
    "DetectionLimits",
    "comparison_problem",
    "detection_limits",
    "family_settings",
    "report_ablation_family",
    "report_family",
    "rerun_chunk_fixes",
]

__getattr__, __dir__ = harness_exports(__name__, _EXPORTS)
