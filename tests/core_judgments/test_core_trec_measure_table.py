"""Every trec_eval family has exactly one computation, and all_trec prints in trec_eval's order."""

from __future__ import annotations

from groundkit.judgments.trec._measures import _FAMILY_VALUES, _MEASURE_VALUES
from groundkit.judgments.trec._measures_graded import _GRADED
from groundkit.judgments.trec._prefs import _VALUES as _PREFS_VALUES
from groundkit.judgments.trec._qrels_jg import _BASE
from groundkit.judgments.trec._select import _FAMILIES, _NICKNAMES, _select

OUTSIDE_THE_BLOCK = {"runid", "num_q", "relstring"}


def test_each_numeric_family_is_computed_once() -> None:
    tables = [
        set(_FAMILY_VALUES),
        set(_MEASURE_VALUES),
        set(_GRADED),
        set(_PREFS_VALUES),
        set(_BASE),
    ]
    computed = set().union(*tables)
    assert computed == set(_FAMILIES) - OUTSIDE_THE_BLOCK
    assert sum(len(table) for table in tables) == len(computed)


def test_all_trec_selects_its_families_in_print_order() -> None:
    families = [m.family for m in _select(["all_trec"])]
    assert list(dict.fromkeys(families)) == list(_NICKNAMES["all_trec"])
    assert [f for f in _FAMILIES if f in _NICKNAMES["all_trec"]] == list(_NICKNAMES["all_trec"])
