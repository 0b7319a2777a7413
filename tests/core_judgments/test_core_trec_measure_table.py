"""Every trec_eval family has exactly one computation in the measure table."""

from __future__ import annotations

from groundkit.judgments.trec._eval import _FAMILIES, _select
from groundkit.judgments.trec._measures import _FAMILY_VALUES

OUTSIDE_THE_BLOCK = {"runid", "num_q", "relstring"}


def test_each_numeric_family_is_computed() -> None:
    assert set(_FAMILY_VALUES) == set(_FAMILIES) - OUTSIDE_THE_BLOCK


def test_all_trec_selects_every_family_in_print_order() -> None:
    families = [m.family for m in _select(["all_trec"])]
    assert list(dict.fromkeys(families)) == list(_FAMILIES)
