"""``record_measurement``'s side keywords (path, stage, config of A and B) stay keywords."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from groundkit.diagnosis import MeasuredSides, record_measurement


def test_sides_are_the_six_documented_keywords() -> None:
    assert MeasuredSides.__optional_keys__ == {
        f"{what}_{side}" for what in ("path", "stage", "config") for side in "ab"
    }


def test_misspelt_side_keyword_is_refused_and_nothing_written(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    typo: dict[str, Any] = {"stage_c": "bm25"}
    with pytest.raises(TypeError, match=r"^record_measurement\(\) got an unexpected keyword"):
        record_measurement(record, {}, {}, None, **typo)
    assert not record.exists()


def test_sides_given_by_name_are_accepted(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    outcome = record_measurement(
        record, {}, {}, None, path_a="a.jsonl", stage_a="bm25", config_a={}, config_b={}
    )
    assert outcome.status == "no-prediction"
    assert not record.exists()
