"""Input checks shared by the public functions; every failure is a one-line StatsError."""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from groundkit.stats._errors import StatsError

__all__ = [
    "check_confidence",
    "check_count",
    "check_finite",
    "check_probability",
    "check_resamples",
    "check_seed",
    "finite_deltas",
    "format_ids",
    "paired_arrays",
    "real_array",
    "sorted_ids",
    "to_float",
]

_SHOWN_IDS = 5


def format_ids(ids: Iterable[str], *, limit: int = _SHOWN_IDS) -> str:
    """Sorted, quoted ids, truncated to `limit` with a count of the rest."""
    ordered = sorted(ids)
    shown = ", ".join(repr(item) for item in ordered[:limit])
    rest = len(ordered) - limit
    return f"{shown}, … and {rest} more" if rest > 0 else shown


# Types whose values numpy converts to float64 exactly as float() does.
_PLAIN_REALS = frozenset({float, int, bool, np.float64, np.float32, np.int64, np.int32, np.bool_})


def to_float(value: object, *, where: str) -> float:
    """A real number as float; strings, None and other objects are refused, not coerced."""
    # bool is a real number here on purpose: hit@k rows are naturally True/False.
    if type(value) is float or type(value) is int or type(value) is bool:
        return float(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise StatsError(f"{where} is not a real number (got {type(value).__name__}: {value!r})")


def check_finite(value: float, *, where: str) -> float:
    """`value` itself when finite, else a StatsError naming `where`."""
    if not math.isfinite(value):
        raise StatsError(f"{where} is not finite ({value})")
    return value


def paired_arrays(
    baseline: Mapping[str, object],
    candidate: Mapping[str, object],
    *,
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
) -> tuple[list[str], NDArray[np.float64], NDArray[np.float64]]:
    """Sorted query ids and the two score arrays in that order, after every pairing check."""
    if not isinstance(baseline, Mapping) or not isinstance(candidate, Mapping):
        raise StatsError(
            "scores must be mappings from query id to score "
            f"(got {type(baseline).__name__} and {type(candidate).__name__})"
        )
    if not baseline and not candidate:
        raise StatsError("no scores: both score mappings are empty")
    baseline_ids = set(baseline)
    candidate_ids = set(candidate)
    if baseline_ids != candidate_ids:
        parts = []
        missing_candidate = baseline_ids - candidate_ids
        missing_baseline = candidate_ids - baseline_ids
        if missing_candidate:
            parts.append(
                f"{len(missing_candidate)} missing from {candidate_name} "
                f"({format_ids(missing_candidate)})"
            )
        if missing_baseline:
            parts.append(
                f"{len(missing_baseline)} missing from {baseline_name} "
                f"({format_ids(missing_baseline)})"
            )
        raise StatsError(
            f"{baseline_name} and {candidate_name} score different query ids: " + "; ".join(parts)
        )
    ids = sorted_ids(baseline_ids)
    return (
        ids,
        _scores_array(baseline, ids, side=baseline_name),
        _scores_array(candidate, ids, side=candidate_name),
    )


def sorted_ids(ids: Iterable[object]) -> list[str]:
    """Ids in sorted order; ids of types that do not order together (1 and "1") are refused."""
    try:
        return sorted(ids)  # type: ignore[arg-type]
    except TypeError:
        kinds = sorted({type(item).__name__ for item in ids})
        raise StatsError(
            f"query ids must all be of one type that can be sorted (got {', '.join(kinds)})"
        ) from None


def finite_deltas(
    baseline: NDArray[np.float64],
    candidate: NDArray[np.float64],
    *,
    ids: Sequence[str] | None = None,
) -> NDArray[np.float64]:
    """Candidate − baseline, refused when a difference or their sum cannot be represented.

    Two finite scores can still have a difference that overflows (1e308 − (−1e308)), and
    finite differences can have a sum that overflows; either would silently turn an interval
    into nan or a p-value into 0.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        deltas = candidate - baseline
    bad = np.flatnonzero(~np.isfinite(deltas))
    if bad.size:
        first = int(bad[0])
        where = f"query {ids[first]!r}" if ids is not None else f"item {first}"
        raise StatsError(
            f"the difference for {where} is not a finite number "
            f"({candidate[first]!r} − {baseline[first]!r} overflows)"
        )
    if deltas.size and not math.isfinite(float(np.max(np.abs(deltas))) * deltas.size):
        raise StatsError(
            "the differences are too large to sum without overflow "
            f"(largest |difference| {float(np.max(np.abs(deltas))):.3g} over {deltas.size} items)"
        )
    return deltas


def _scores_array(
    scores: Mapping[str, object], ids: list[str], *, side: str
) -> NDArray[np.float64]:
    picked = list(map(scores.__getitem__, ids))
    if set(map(type, picked)) <= _PLAIN_REALS:
        # Plain Python numbers convert exactly as to_float does, in C (about 30x faster
        # than a call per value at a million queries); anything else takes the checked path.
        values = np.array(picked, dtype=np.float64)
    else:
        values = np.fromiter(
            (
                to_float(v, where=f"{side} score for query {q!r}")
                for q, v in zip(ids, picked, strict=True)
            ),
            dtype=np.float64,
            count=len(ids),
        )
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        first = int(bad[0])
        more = f" (and {bad.size - 1} more)" if bad.size > 1 else ""
        raise StatsError(
            f"{side} score for query {ids[first]!r} is not finite ({values[first]}){more}"
        )
    return values


def real_array(
    values: Sequence[float] | Mapping[str, float] | NDArray[np.floating],
    *,
    what: str,
) -> NDArray[np.float64]:
    """A finite 1-d float array from a sequence, an array or a mapping (read in sorted-id order)."""
    labels: list[str] | None = None
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise StatsError(f"{what} must be one-dimensional (got shape {values.shape})")
        if values.dtype.kind not in "biuf":
            raise StatsError(f"{what} must hold real numbers (got dtype {values.dtype})")
        array = values.astype(np.float64)
    else:
        items: Iterable[object]
        if isinstance(values, Mapping):
            labels = sorted_ids(values)
            items = (values[qid] for qid in labels)
        elif isinstance(values, Sequence) and not isinstance(values, (str, bytes)):
            items = values
        else:
            raise StatsError(
                f"{what} must be a sequence or mapping of numbers (got {type(values).__name__})"
            )
        array = np.fromiter(
            (
                to_float(value, where=f"{what}[{labels[i]!r}]" if labels else f"{what}[{i}]")
                for i, value in enumerate(items)
            ),
            dtype=np.float64,
        )
    if array.size == 0:
        raise StatsError(f"no scores: {what} is empty")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        first = int(bad[0])
        label = repr(labels[first]) if labels else str(first)
        raise StatsError(f"{what}[{label}] is not finite ({array[first]})")
    return array


def check_resamples(resamples: object) -> int:
    """A positive int number of resamples."""
    count = _as_int(resamples, name="resamples")
    if count <= 0:
        raise StatsError(f"resamples must be a positive integer (got {count})")
    return count


def check_seed(seed: object) -> int:
    """A non-negative int seed (numpy's SeedSequence refuses negative seeds)."""
    value = _as_int(seed, name="seed")
    if value < 0:
        raise StatsError(f"seed must be a non-negative integer (got {value})")
    return value


def check_count(value: object, *, name: str, minimum: int = 1) -> int:
    """An int of at least `minimum`."""
    count = _as_int(value, name=name)
    if count < minimum:
        raise StatsError(f"{name} must be at least {minimum} (got {count})")
    return count


def check_confidence(value: object, *, name: str = "confidence_level") -> float:
    """A level strictly between 0 and 1."""
    return check_probability(value, name=name)


def check_probability(value: object, *, name: str) -> float:
    """A finite real strictly inside (0, 1)."""
    level = to_float(value, where=name)
    if not (0.0 < level < 1.0):
        raise StatsError(f"{name} must be strictly between 0 and 1 (got {level})")
    return level


def _as_int(value: object, *, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise StatsError(f"{name} must be an integer (got {type(value).__name__}: {value!r})")
    return operator.index(value)
