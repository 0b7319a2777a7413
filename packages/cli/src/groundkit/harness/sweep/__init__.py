"""Sweeps: a grid or list of arms run through the one pipeline, with a Pareto front."""

from typing import TYPE_CHECKING

from groundkit.harness._lazy import harness_exports

if TYPE_CHECKING:
    from groundkit.harness.sweep._config import (
        SweepArm,
        SweepPlan,
        SweepSettings,
        expand_sweep,
        load_sweep,
    )
    from groundkit.harness.sweep._run import SweepEvent, SweepProgress, arm_paths, run_sweep
    from groundkit.harness.sweep._summary import (
        SWEEP_SCHEMA_VERSION,
        SweepPoint,
        SweepSummary,
        load_sweep_summary,
        pareto_front,
    )

_EXPORTS: dict[str, str] = {
    "SWEEP_SCHEMA_VERSION": "groundkit.harness.sweep._summary",
    "SweepArm": "groundkit.harness.sweep._config",
    "SweepEvent": "groundkit.harness.sweep._run",
    "SweepPlan": "groundkit.harness.sweep._config",
    "SweepPoint": "groundkit.harness.sweep._summary",
    "SweepProgress": "groundkit.harness.sweep._run",
    "SweepSettings": "groundkit.harness.sweep._config",
    "SweepSummary": "groundkit.harness.sweep._summary",
    "arm_paths": "groundkit.harness.sweep._run",
    "expand_sweep": "groundkit.harness.sweep._config",
    "load_sweep": "groundkit.harness.sweep._config",
    "load_sweep_summary": "groundkit.harness.sweep._summary",
    "pareto_front": "groundkit.harness.sweep._summary",
    "run_sweep": "groundkit.harness.sweep._run",
}

__all__ = [
    "SWEEP_SCHEMA_VERSION",
    "SweepArm",
    "SweepEvent",
    "SweepPlan",
    "SweepPoint",
    "SweepProgress",
    "SweepSettings",
    "SweepSummary",
    "arm_paths",
    "expand_sweep",
    "load_sweep",
    "load_sweep_summary",
    "pareto_front",
    "run_sweep",
]

__getattr__, __dir__ = harness_exports(__name__, _EXPORTS)
