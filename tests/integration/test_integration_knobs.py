"""The knobs named once in core are real fields of the configuration models that hold them."""

from __future__ import annotations

from typing import get_args

import pytest
from pydantic import BaseModel

from groundkit.diagnosis import FIX_CONFIG_KEYS, FIXES, infer_applied_fix
from groundkit.harness import StageConfig
from groundkit.harness.retrievers import retriever_kinds
from groundkit.judgments import ChunkerConfig
from groundkit.judgments.report import CHUNK_SIZE_KNOBS, Knob, flatten_stage_config


def _chunker_fields() -> set[str]:
    union = get_args(ChunkerConfig)[0]  # Annotated[Union[...], discriminator]
    models: tuple[type[BaseModel], ...] = get_args(union)
    return {name for model in models for name in model.model_fields}


def _retriever_fields() -> set[str]:
    return {name for kind in retriever_kinds().values() for name in kind.settings.model_fields}


@pytest.mark.parametrize("knob", list(Knob))
def test_every_knob_is_a_field_of_the_models_that_hold_it(knob: Knob) -> None:
    section, field = knob.value.split(".")
    assert section in StageConfig.model_fields
    fields = _chunker_fields() if section == "chunker" else _retriever_fields()
    assert field in fields, f"{knob.value} names no field of the {section} models"


def test_chunk_size_knobs_are_chunk_lengths() -> None:
    assert {k.value for k in CHUNK_SIZE_KNOBS} == {
        "chunker.size",
        "chunker.max_chars",
        "chunker.max_sentences",
    }


def test_every_fix_names_its_keys() -> None:
    assert set(FIX_CONFIG_KEYS) == set(FIXES)
    assert FIX_CONFIG_KEYS["chunk-overlap"] == (Knob.CHUNK_OVERLAP,)
    assert Knob.FUSED_STAGES in FIX_CONFIG_KEYS["hybrid-fusion"]


def test_a_dumped_stage_config_flattens_to_knob_paths() -> None:
    stage = StageConfig.model_validate(
        {"name": "s", "retriever": {"kind": "bm25"}, "chunker": {"kind": "chars", "size": 300}}
    )
    flat = flatten_stage_config(stage.model_dump(mode="json"))
    assert "name" not in flat
    assert flat[Knob.CHUNK_SIZE] == 300
    assert flat[Knob.CHUNK_OVERLAP] == 200
    assert flat[Knob.RETRIEVER_KIND] == "bm25"


def test_the_applied_fix_is_inferred_from_the_knob_that_moved() -> None:
    def config(**chunker: object) -> dict[str, object]:
        return {"name": "x", "retriever": {"kind": "bm25"}, "chunker": {"kind": "chars", **chunker}}

    a = config(size=300, overlap=0)
    assert infer_applied_fix(a, config(size=300, overlap=50), FIXES) == ["chunk-overlap"]
    assert infer_applied_fix(a, config(size=600, overlap=0), FIXES) == ["larger-chunks"]
    assert infer_applied_fix(a, config(size=150, overlap=0), FIXES) == ["smaller-chunks"]
    assert infer_applied_fix(a, config(size=600, overlap=50), FIXES) == ["larger-chunks"]
    assert infer_applied_fix(a, a, FIXES) == []
