"""Hypothesis properties that hold by construction for every input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.stats import (
    BootstrapResult,
    bootstrap_interval,
    holm_adjust,
    paired_bootstrap,
    sign_flip_test,
)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
grid = st.sampled_from([0.0, 0.25, 0.5, 1.0])  # ties and few distinct values on purpose
score = st.one_of(unit, grid)
pairs = st.lists(st.tuples(score, score), min_size=1, max_size=40)
methods = st.sampled_from(["auto", "resample", "multinomial"])
FAST = settings(max_examples=60, deadline=None)


def boot(
    rows: list[tuple[float, float]],
    ids: list[str] | None = None,
    *,
    swap: bool = False,
    method: str = "auto",
    resamples: int = 199,
) -> BootstrapResult:
    names = ids or [f"q{i}" for i in range(len(rows))]
    base = {q: r[0] for q, r in zip(names, rows, strict=True)}
    cand = {q: r[1] for q, r in zip(names, rows, strict=True)}
    if swap:
        base, cand = cand, base
    return paired_bootstrap(
        base,
        cand,
        baseline_name="a",
        candidate_name="b",
        metric="m",
        resamples=resamples,
        seed=3,
        method=method,  # type: ignore[arg-type]
    )


@FAST
@given(rows=pairs, method=methods)
def test_stats_interval_ordered_and_p_value_in_range(
    rows: list[tuple[float, float]], method: str
) -> None:
    result = boot(rows, method=method)
    deltas = [c - b for b, c in rows]
    assert result.confidence_interval_low <= result.confidence_interval_high
    # Every resampled mean lies between the extreme deltas, so the interval does too.
    assert min(deltas) - 1e-12 <= result.confidence_interval_low
    assert result.confidence_interval_high <= max(deltas) + 1e-12
    assert 2 / 200 <= result.p_value_two_sided <= 1.0
    assert result.significant == (
        len(rows) >= 6  # an exact paired test can reach 0.05 only from 6 queries on
        and (result.confidence_interval_low > 0 or result.confidence_interval_high < 0)
    )


@FAST
@given(rows=pairs, data=st.data())
def test_stats_invariant_under_renaming_and_reordering_queries(
    rows: list[tuple[float, float]], data: st.DataObject
) -> None:
    order = data.draw(st.permutations(range(len(rows))))
    names = data.draw(
        st.lists(
            st.text(min_size=1, max_size=6), min_size=len(rows), max_size=len(rows), unique=True
        )
    )
    renamed = boot([rows[i] for i in order], names)
    assert renamed == boot(rows)


@FAST
@given(rows=pairs, method=methods)
def test_stats_swapping_sides_negates_effect_and_mirrors_interval(
    rows: list[tuple[float, float]], method: str
) -> None:
    forward = boot(rows, method=method)
    backward = boot(rows, swap=True, method=method)
    assert backward.effect == -forward.effect
    assert backward.p_value_two_sided == forward.p_value_two_sided
    deltas = np.array([c - b for b, c in rows])
    if np.array_equal(np.sort(deltas), np.sort(-deltas)):
        # A multiset equal to its own negation: swapping gives the very same input.
        assert backward.model_dump(exclude={"effect"}) == forward.model_dump(exclude={"effect"})
        return
    assert backward.confidence_interval_low == pytest.approx(
        -forward.confidence_interval_high, abs=1e-12
    )
    assert backward.confidence_interval_high == pytest.approx(
        -forward.confidence_interval_low, abs=1e-12
    )
    assert backward.significant == forward.significant


@FAST
@given(values=st.lists(score, min_size=1, max_size=40))
def test_stats_single_system_interval_brackets_within_range(values: list[float]) -> None:
    estimate = bootstrap_interval(values, resamples=199, seed=1)
    assert min(values) - 1e-12 <= estimate.low <= estimate.high <= max(values) + 1e-12
    assert min(values) - 1e-12 <= estimate.value <= max(values) + 1e-12


@FAST
@given(rows=st.lists(st.tuples(score, score), min_size=1, max_size=14))
def test_stats_sign_flip_p_value_in_range_and_symmetric(rows: list[tuple[float, float]]) -> None:
    base = [r[0] for r in rows]
    cand = [r[1] for r in rows]
    forward = sign_flip_test(base, cand, resamples=300, seed=2)
    backward = sign_flip_test(cand, base, resamples=300, seed=2)
    assert 0.0 < forward.p_value_two_sided <= 1.0
    assert backward.p_value_two_sided == forward.p_value_two_sided
    assert backward.effect == -forward.effect


p_values = st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=12)


@FAST
@given(raw=p_values, data=st.data())
def test_stats_holm_properties(raw: list[float], data: st.DataObject) -> None:
    adjusted = holm_adjust(raw)
    assert len(adjusted) == len(raw)
    for p, q in zip(raw, adjusted, strict=True):
        assert p <= q <= 1.0
        assert q <= min(1.0, len(raw) * p) + 1e-15
    # Monotone: a smaller raw p never gets a larger adjusted p.
    for i in range(len(raw)):
        for j in range(len(raw)):
            if raw[i] < raw[j]:
                assert adjusted[i] <= adjusted[j]
            if raw[i] == raw[j]:
                assert adjusted[i] == adjusted[j]
    # Equivariant under reordering, and the mapping form agrees with the sequence form.
    order = data.draw(st.permutations(range(len(raw))))
    assert holm_adjust([raw[i] for i in order]) == [adjusted[i] for i in order]
    keyed = holm_adjust({f"system-{i}": p for i, p in enumerate(raw)})
    assert list(keyed.values()) == adjusted
