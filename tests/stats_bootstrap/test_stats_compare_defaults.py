"""``compare_items`` shows its settings in its signature, with ``FamilySettings``' defaults."""

from __future__ import annotations

import dataclasses
import inspect

from groundkit.stats import FamilySettings, compare_items

BASE = {f"q{i}": (i % 3) / 2 for i in range(12)}
CAND = {f"q{i}": ((i + 1) % 3) / 2 for i in range(12)}


def test_signature_defaults_are_family_settings_defaults() -> None:
    parameters = inspect.signature(compare_items).parameters
    fields = {f.name: f.default for f in dataclasses.fields(FamilySettings)}
    shared = set(parameters) & set(fields)
    assert shared == set(fields) - {"adjustment"}
    for name in shared:
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default == fields[name], name


def test_defaults_give_the_same_comparison_as_spelled_settings() -> None:
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
    assert compare_items(BASE, CAND, metric="m") == spelled
    assert compare_items(BASE, CAND, metric="m", confidence_level=0.9).confidence_level == 0.9
