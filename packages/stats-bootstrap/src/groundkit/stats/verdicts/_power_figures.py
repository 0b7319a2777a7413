"""What the calibration grid measured of power at the detection limit, and the caution quoting it.

A detection limit promises its power (80% by default) exactly only for the tests it is solved
for: McNemar's exact power for right-or-wrong items, the noncentral t for numeric ones. Where
a comparison's data are not like that, its caution quotes what the calibration grid measured
in the cell the comparison falls in (tests/stats_bootstrap/calibration_power.py builds the
cells; tests/benchmarks/bench_stats_calibration.py measures them and checks these figures):

* ``t``: numeric differences decided with the t interval on fewer than 30 items (bounded
  scores of four shapes: continuous, zero-inflated, graded, reciprocal rank);
* ``betting``: numeric differences decided with the distribution-free betting interval (skewed
  differences on fewer than 30 items), whose limit is solved for that interval;
* ``few sizes``: from 30 items on, differences that take at most three sizes (recall over
  three quotes or fewer): the sign-flip gate is coarse there.

Cells whose measured power is never more than 3 points under the promise carry no caution
(the betting cell: its limit is conservative, 87–98% measured). The figures are for limits at
80% power, the default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from groundkit.stats.inference._intervals import PAIRED_T_MIN_QUERIES

__all__ = ["MEASURED_POWER", "PowerCell", "limit_caution", "power_cell"]

_FEW_SIZES = 3
_PROMISED = 0.80


@dataclass(frozen=True)
class PowerCell:
    """One cell of the grid: comparisons like these, and the power measured at their limit.

    Attributes:
        decided_by: ``t``, ``betting`` or ``few sizes`` (see the module's docstring).
        first: Fewest items of the cell.
        last: Most items of the cell (None: no upper end).
        sizes: The numbers of items the grid measured the cell at.
        low: Lowest power measured in the cell (any shape, any size), for 80% promised.
        high: Highest power measured in the cell.
    """

    decided_by: str
    first: int
    last: int | None
    sizes: tuple[int, ...]
    low: float
    high: float

    def holds(self, n: int) -> bool:
        """Whether a comparison of n items falls in this cell's range of sizes."""
        return n >= self.first and (self.last is None or n <= self.last)

    @property
    def kept(self) -> bool:
        """Whether every measured power is at least the 80% promised, less the grid's 3 points.

        More power than promised keeps the promise (the limit is then conservative).
        """
        return self.low >= _PROMISED - 0.03


# Measured by tests/benchmarks/bench_stats_calibration.py (see the statistics page's table).
MEASURED_POWER: tuple[PowerCell, ...] = (
    PowerCell("t", 6, 9, (8,), 0.08, 0.75),
    PowerCell("t", 10, 17, (12, 16), 0.73, 0.91),
    PowerCell("t", 18, 29, (20, 25), 0.70, 0.82),
    PowerCell("betting", 6, 29, (12, 16, 20, 25), 0.87, 0.98),
    PowerCell("few sizes", 30, None, (30, 50, 100, 300), 0.74, 0.79),
)


def _decided_by(deltas: NDArray[np.float64], method: str) -> str | None:
    if method == "betting":
        return "betting"
    if deltas.size < PAIRED_T_MIN_QUERIES:  # the cells split where the t interval does
        return "t"
    # Rounded: 2/3 − 1/3 and 1/3 are one size, not two floats.
    sizes = np.unique(np.round(np.abs(deltas[deltas != 0.0]), 9))
    return "few sizes" if 1 < sizes.size <= _FEW_SIZES else None


def power_cell(deltas: NDArray[np.float64], *, binary: bool, method: str) -> PowerCell | None:
    """The grid cell a numeric comparison falls in (None: binary, or a cell not measured).

    Args:
        deltas: The per-item differences.
        binary: Both runs are right-or-wrong (exact McNemar power: no cell needed).
        method: The interval the verdict used (``t``, ``betting``, ...).

    Returns:
        The cell, or None.
    """
    if binary:
        return None
    decided_by = _decided_by(deltas, method)
    for cell in MEASURED_POWER:
        if cell.decided_by == decided_by and cell.holds(int(deltas.size)):
            return cell
    return None


_WHAT = {
    "t": "numeric differences on fewer than 30 queries (bounded scores of four shapes)",
    "betting": "differences skewed enough to be decided with the distribution-free (betting) "
    "interval, whose limit is solved for it",
    "few sizes": "differences that take at most three sizes (e.g. recall over three quotes)",
}


def limit_caution(
    deltas: NDArray[np.float64], *, binary: bool, method: str, limit: float | None
) -> str | None:
    """Why a detection limit's power is not assured, quoting the grid's figure for its cell.

    Args:
        deltas: The per-item differences.
        binary: Both runs are right-or-wrong.
        method: The interval the verdict used.
        limit: The limit (None: no caution, there is no limit to caution about).

    Returns:
        The caution, or None where the cell kept its promise (never more than 3 points under
        80%), or no cell applies.
    """
    if limit is None:
        return None
    cell = power_cell(deltas, binary=binary, method=method)
    if cell is None or cell.kept:
        return None
    measured = f"{cell.low:.0%}–{cell.high:.0%}"
    sizes = ", ".join(str(s) for s in cell.sizes)
    return (
        f"power at this limit is not assured: for {_WHAT[cell.decided_by]}, the calibration "
        f"grid measured {measured} power at an 80% limit, at n = {sizes}"
    )
