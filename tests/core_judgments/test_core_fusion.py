"""Reciprocal-rank fusion, against a plain-Python reading of its definition."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.judgments import RRF_K, fuse_ranks

Key = tuple[int, int, int]
keys = st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(3, 4))
ranked_lists = st.lists(st.lists(keys, unique=True, max_size=8), min_size=1, max_size=3)


def reference(lists: list[list[Key]], k: int, depth: int) -> list[tuple[Key, Fraction]]:
    """The definition with exact fractions: score, then the key descending (trec_eval's rule)."""
    score: dict[Key, Fraction] = {}
    for ranked in lists:
        for rank, key in enumerate(ranked, start=1):
            score[key] = score.get(key, Fraction(0)) + Fraction(1, k + rank)
    order = sorted(score, key=lambda key: (score[key], key), reverse=True)
    return [(key, score[key]) for key in order[:depth]]


@settings(max_examples=300, deadline=None)
@given(ranked_lists, st.integers(1, 100), st.integers(1, 12))
def test_fusion_follows_its_definition(lists: list[list[Key]], k: int, depth: int) -> None:
    rows = [(key, rank) for r in lists for rank, key in enumerate(r, 1)]
    chosen, scores = fuse_ranks(
        np.asarray([key for key, _ in rows], dtype=np.int64).reshape(-1, 3),
        np.asarray([rank for _, rank in rows], dtype=np.int64),
        k=k,
        depth=depth,
    )
    expected = reference(lists, k, depth)
    got = [tuple(row) for row in chosen.tolist()]
    # Exact fractions decide the order; float sums in rank order keep equal scores equal.
    assert got == [key for key, _ in expected]
    assert np.allclose(scores, [float(s) for _, s in expected], rtol=1e-15, atol=0)


def test_the_default_constant() -> None:
    assert RRF_K == 60
