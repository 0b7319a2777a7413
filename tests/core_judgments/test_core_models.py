"""The judgment data contract: ids, gold quotes, the unanswerable rule, meta, errors."""

from __future__ import annotations

import pickle
import re
from typing import Any

import pytest
from pydantic import ValidationError

from groundkit.judgments import GoldQuote, Judgment, JudgmentError, ReportError, UnsafePathError
from groundkit.judgments.gold import format_validation_error, validate_doc_id, validate_query_id

# Errors --------------------------------------------------------------------------------------


def test_error_renders_all_parts_on_one_line() -> None:
    error = JudgmentError("bad\nthing", path="judgments.jsonl", line=3, item_id="q-1")
    assert str(error) == "judgments.jsonl:3: q-1: bad\\nthing"
    assert (error.message, error.path, error.line, error.item_id) == (
        "bad\nthing",
        "judgments.jsonl",
        3,
        "q-1",
    )


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, "oops"),
        ({"path": "a.jsonl"}, "a.jsonl: oops"),
        ({"item_id": "q-1"}, "q-1: oops"),
        ({"line": 4}, "line 4: oops"),
        ({"path": "a.jsonl", "item_id": "q\r1"}, "a.jsonl: q\\r1: oops"),
    ],
)
def test_error_omits_unknown_parts(kwargs: dict[str, Any], expected: str) -> None:
    assert str(JudgmentError("oops", **kwargs)) == expected


def test_error_hierarchy_and_pickling() -> None:
    assert issubclass(JudgmentError, ValueError)
    assert issubclass(UnsafePathError, JudgmentError)
    assert issubclass(ReportError, JudgmentError)
    error = ReportError("bad version", path="r.json", line=1, item_id="x")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ReportError
    assert (copy.message, copy.path, copy.line, copy.item_id) == ("bad version", "r.json", 1, "x")
    assert str(copy) == str(error)


# Ids -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("good", ["q1", "leave-policy", "a-b-c", "0", "x" * 200])
def test_valid_query_ids(good: str) -> None:
    assert validate_query_id(good) == good


@pytest.mark.parametrize(
    "bad", ["", "Q1", "a_b", "a--b", "-a", "a-", "a b", "a\n", "é", "x" * 201, "a.b"]
)
def test_invalid_query_ids(bad: str) -> None:
    with pytest.raises(JudgmentError, match="query id"):
        validate_query_id(bad)


@pytest.mark.parametrize(
    "good", ["handbook.txt", "policies/leave.md", ".hidden", "a b/c d.txt", "ünï/çødé", "..a"]
)
def test_valid_doc_ids(good: str) -> None:
    assert validate_doc_id(good) == good


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("", "empty"),
        ("/etc/passwd", "absolute"),
        ("../secret", "'..'"),
        ("a/../b", "'..'"),
        ("a/./b", "'.'"),
        ("a//b", "empty"),
        ("a/", "empty"),
        (".", "'.'"),
        ("a\\b", "backslash"),
        ("a\x00b", "control"),
        ("a\nb", "control"),
        ("a\x1bb", "control"),
    ],
)
def test_invalid_doc_ids(bad: str, reason: str) -> None:
    with pytest.raises(JudgmentError, match=reason):
        validate_doc_id(bad)


def test_validators_refuse_non_strings() -> None:
    with pytest.raises(JudgmentError, match="string"):
        validate_query_id(3)  # type: ignore[arg-type]
    with pytest.raises(JudgmentError, match="string"):
        validate_doc_id(None)  # type: ignore[arg-type]


# Models --------------------------------------------------------------------------------------


def _gold(**overrides: Any) -> GoldQuote:
    return GoldQuote(**({"doc": "a.txt", "quote": "some text"} | overrides))


def test_judgment_defaults_and_answerable() -> None:
    judgment = Judgment(query_id="q-1", query="Why?", gold=[_gold()])
    assert judgment.category == "normal"
    assert judgment.gold == (_gold(),)
    assert judgment.answerable
    assert judgment.answer is None
    assert judgment.qtype is None
    assert judgment.meta == {}
    unanswerable = Judgment(query_id="q-2", query="Why not?", category="unanswerable")
    assert not unanswerable.answerable


def test_models_are_frozen_and_hashable() -> None:
    judgment = Judgment(query_id="q-1", query="Why?", gold=[_gold()], meta={"k": [1, 2]})
    with pytest.raises(ValidationError):
        judgment.query = "other"  # type: ignore[misc]
    twin = Judgment(query_id="q-1", query="Why?", gold=[_gold()], meta={"k": [1, 2]})
    assert hash(judgment) == hash(twin)
    assert len({judgment, twin}) == 1


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"category": "normal", "gold": []}, "without gold must have category 'unanswerable'"),
        ({"category": "unanswerable", "gold": [_gold()]}, "must have no gold"),
        ({"query": "   "}, "query is empty"),
        ({"query_id": "Bad Id"}, "not lowercase kebab-case"),
        ({"gold": [_gold(), _gold()]}, "repeats an earlier quote"),
        ({"gold": [{"doc": "../x", "quote": "q"}]}, r"gold\.0\.doc: document id"),
        ({"gold": [{"doc": "a", "quote": " \n"}]}, "quote is empty"),
        ({"gold": [{"doc": "a", "quote": "q", "grade": 0}]}, r"gold\.0\.grade"),
        ({"gold": [{"doc": "a", "quote": "q", "grade": True}]}, r"gold\.0\.grade"),
        ({"gold": [{"doc": "a", "quote": "q", "grade": "2"}]}, r"gold\.0\.grade"),
        ({"gold": [{"doc": "a", "quote": "q", "page": 2}]}, r"unknown field 'gold\.0\.page'"),
        ({"meta": {"x": float("nan")}}, "JSON cannot represent"),
        ({"meta": {"x": {1: 2}}}, "non-string key"),
        ({"meta": {"x": {1, 2}}}, "not JSON"),
        ({"category": " normal"}, "surrounding spaces"),
        ({"qtype": ""}, "non-empty"),
        ({"tags": ["a"]}, "unknown field 'tags'"),
        ({"query": 5}, "query: Input should be a valid string"),
    ],
)
def test_judgment_contract_violations(fields: dict[str, Any], message: str) -> None:
    data = {"query_id": "q-1", "query": "Why?", "gold": [_gold()]} | fields
    with pytest.raises(ValidationError) as caught:
        Judgment.model_validate(data)
    rendered = format_validation_error(caught.value)
    assert "\n" not in rendered
    assert re.search(message, rendered), rendered


def test_missing_fields_are_named() -> None:
    with pytest.raises(ValidationError) as caught:
        Judgment.model_validate({"query_id": "q-1"})
    assert format_validation_error(caught.value) == "missing required field 'query'"


def test_meta_is_copied_to_plain_json() -> None:
    source: dict[str, Any] = {"pages": (1, 2), "nested": {"ok": [True, None, 1.5, "s"]}}
    judgment = Judgment(query_id="q", query="x", category="unanswerable", meta=source)
    source["nested"]["ok"].append("mutated")
    assert judgment.meta == {"pages": [1, 2], "nested": {"ok": [True, None, 1.5, "s"]}}
