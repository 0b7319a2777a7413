"""The calibration item and the adjudication line share one judged-span model; their files
read and write exactly as before."""

from __future__ import annotations

import json
from typing import Any

import pytest

from groundkit.evalset.judge import CalibrationItem, CandidateLine
from groundkit.evalset.judge._span import JudgedSpan

# As older versions wrote them (key order included).
CARD_ITEM = (
    '{"stratum": "positive", "query_id": "q1", "stage": "bm25", "rank": 2, "doc": "a.md", '
    '"start": 0, "end": 9, "passage_sha256": "ab12", "grades": [2, 3], "majority": 3, '
    '"judged_relevant": true, "failures": []}'
)
LIST_LINE = (
    '{"query_id": "q1", "query": "Where?", "stage": "bm25", "rank": 1, "doc": "a.md", '
    '"start": 3, "end": 7, "passage_sha256": "cd34", "grades": [1], "majority": null, '
    '"possibly_missing_from_gold": true}'
)


def test_both_are_judged_spans() -> None:
    assert issubclass(CalibrationItem, JudgedSpan)
    assert issubclass(CandidateLine, JudgedSpan)
    shared = set(JudgedSpan.model_fields)
    assert shared <= set(CalibrationItem.model_fields) & set(CandidateLine.model_fields)


@pytest.mark.parametrize(
    ("model", "text"), [(CalibrationItem, CARD_ITEM), (CandidateLine, LIST_LINE)]
)
def test_stored_json_reads_and_writes_unchanged(model: Any, text: str) -> None:
    item = model.model_validate_json(text)
    assert json.dumps(item.model_dump(mode="json")) == text
    assert list(json.loads(item.model_dump_json())) == list(json.loads(text))


def test_constraints_and_extra_fields_as_before() -> None:
    card = json.loads(CARD_ITEM)
    minimal = {k: v for k, v in card.items() if k not in ("grades", "majority", "failures")}
    assert CalibrationItem.model_validate(minimal).grades == []
    with pytest.raises(ValueError, match="extra"):
        CalibrationItem.model_validate(card | {"query": "x"})
    line = json.loads(LIST_LINE)
    assert CandidateLine.model_validate(line | {"extra": 1}).key == ("q1", "a.md", 3, 7)
    for required in ("majority", "grades", "query"):
        with pytest.raises(ValueError, match=required):
            CandidateLine.model_validate({k: v for k, v in line.items() if k != required})
    with pytest.raises(ValueError, match="rank"):
        CandidateLine.model_validate(line | {"rank": 0})
