"""Resampling kernels: random sign patterns for the Monte Carlo sign-flip test."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["random_sign_counts"]

# Elements materialised per chunk (sign matrix plus products): about 8 MiB.
_CHUNK_ELEMENTS = 1 << 20


def random_sign_counts(
    nonzero: NDArray[np.float64],
    observed: float,
    *,
    resamples: int,
    seed: int | np.random.SeedSequence,
    tolerance: float,
) -> int:
    """How many of `resamples` random sign patterns give |signed sum| ≥ observed − tolerance.

    Each of the m values gets an independent fair sign. The signed sum is written as
    total − 2·(flipped values), so one matrix product per chunk evaluates a whole block of
    patterns; memory stays bounded whatever `resamples` and m are.
    """
    rng = np.random.default_rng(seed)
    size = int(nonzero.size)
    total = float(nonzero.sum())
    threshold = observed - tolerance
    extreme = 0
    rows = max(1, _CHUNK_ELEMENTS // max(size, 1))
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        flipped = rng.integers(0, 2, size=(stop - start, size), dtype=np.int8)
        sums = total - 2.0 * (flipped.astype(np.float64) @ nonzero)
        extreme += int(np.count_nonzero(np.abs(sums) >= threshold))
    return extreme
