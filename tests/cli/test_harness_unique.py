"""sorted_unique: np.unique's answer for integer arrays, by sorting."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from groundkit.harness._unique import sorted_unique


@given(
    hnp.arrays(
        dtype=st.sampled_from([np.int64, np.uint64, np.int32, np.uint8]),
        shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=40),
    )
)
def test_the_same_values_as_np_unique(values: np.ndarray) -> None:
    got = sorted_unique(values)
    expected = np.unique(values)
    assert got.dtype == expected.dtype
    assert got.ndim == 1
    assert np.array_equal(got, expected)


def test_the_input_is_left_as_it_was() -> None:
    values = np.array([5, 1, 5, 3, 1], dtype=np.int64)
    assert sorted_unique(values).tolist() == [1, 3, 5]
    assert values.tolist() == [5, 1, 5, 3, 1]


def test_a_list_and_an_empty_array() -> None:
    assert sorted_unique([3, 3, 2]).tolist() == [2, 3]
    assert sorted_unique(np.zeros(0, dtype=np.int64)).size == 0
