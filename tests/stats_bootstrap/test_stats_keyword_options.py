"""Options grouped as typed keywords (PEP 692): same results by name, misspelt names refused."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest

from groundkit.stats import (
    BootstrapOptions,
    CompareOptions,
    FamilySettings,
    check_keywords,
    compare_items,
    paired_bootstrap,
)

BASE = {f"q{i}": (i % 3) / 2 for i in range(12)}
CAND = {f"q{i}": ((i + 1) % 3) / 2 for i in range(12)}


def test_paired_bootstrap_defaults_are_the_documented_ones() -> None:
    names: dict[str, Any] = {"baseline_name": "a", "candidate_name": "b", "metric": "m"}
    default = paired_bootstrap(BASE, CAND, **names)
    spelled = paired_bootstrap(
        BASE, CAND, **names, resamples=10_000, seed=7, confidence_level=0.95, method="auto"
    )
    assert default == spelled
    assert (default.resamples, default.seed, default.confidence_level) == (10_000, 7, 0.95)
    other = paired_bootstrap(BASE, CAND, **names, resamples=500, seed=3)
    assert (other.resamples, other.seed) == (500, 3)


def test_compare_items_defaults_are_family_settings() -> None:
    default = compare_items(BASE, CAND, metric="m")
    settings = FamilySettings()
    spelled = compare_items(
        BASE,
        CAND,
        metric="m",
        resamples=settings.resamples,
        seed=settings.seed,
        confidence_level=settings.confidence_level,
        alpha=settings.alpha,
        power=settings.power,
        equivalence_margin=settings.equivalence_margin,
        bounds=settings.bounds,
    )
    assert default == spelled
    assert compare_items(BASE, CAND, metric="m", confidence_level=0.9).confidence_level == 0.9


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (
            lambda kw: paired_bootstrap(
                BASE, CAND, baseline_name="a", candidate_name="b", metric="m", **kw
            ),
            "paired_bootstrap",
        ),
        (lambda kw: compare_items(BASE, CAND, **kw), "compare_items"),
    ],
)
def test_misspelt_or_foreign_keyword_is_a_type_error(call: Any, name: str) -> None:
    for bad in ({"resample": 10}, {"adjustment": "holm"}, {"sed": 1}):
        with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument"):
            call(bad)


def test_check_keywords_names_missing_required_keys() -> None:
    class Spec(TypedDict):
        a: int

    check_keywords("f", {"a": 1}, Spec)
    with pytest.raises(TypeError, match=r"f\(\) missing required keyword argument 'a'"):
        check_keywords("f", {}, Spec)
    assert BootstrapOptions.__optional_keys__ == {"resamples", "seed", "confidence_level", "method"}
    assert CompareOptions.__optional_keys__ | {"adjustment"} == set(
        FamilySettings.__dataclass_fields__
    )
