"""Report schema 1.3: each stage's ``cost`` (time, latency, model use, memory, priced USD)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError
from tests.core_judgments.test_core_report import _report_data

from groundkit.judgments import SCHEMA_VERSION
from groundkit.judgments.report import (
    COST_FIGURES,
    StageCost,
    StagePrice,
    check_report,
    parse_report,
    report_json_schema,
)

COST: dict[str, Any] = {
    "index_seconds": 0.25,
    "search_seconds": 1.5,
    "latency_basis": "per_query",
    "latency_p50": 0.01,
    "latency_p95": 0.02,
    "latency_p99": 0.05,
    "queries": 1,
    "embedding_calls": 12,
    "characters_indexed": 400,
    "chunks_indexed": 3,
    "peak_memory_bytes": 4096,
    "memory_method": "rss_peak_reset",
    "price": {"usd_per_call": 0.001},
    "usd": 0.012,
}


def _with_cost(cost: Any, version: str = SCHEMA_VERSION) -> dict[str, Any]:
    data = _report_data()
    data["schema_version"] = version
    data["stages"][1]["cost"] = cost
    return data


def test_schema_is_1_3_or_later_and_a_costed_report_round_trips() -> None:
    assert tuple(int(part) for part in SCHEMA_VERSION.split(".")) >= (1, 3)
    report = parse_report(_with_cost(COST))
    cost = report.stage("dense").cost
    assert cost is not None
    assert cost.latency_p95 == 0.02
    assert cost.usd == 0.012
    assert report.stage("bm25").cost is None
    assert check_report(report.model_dump(mode="json")) == []


@pytest.mark.parametrize("version", ["1.0", "1.1", "1.2"])
def test_older_reports_without_cost_still_read(version: str) -> None:
    data = _report_data()
    data["schema_version"] = version
    report = parse_report(data)
    assert all(stage.cost is None for stage in report.stages)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"index_seconds": -0.1}, "index_seconds"),
        ({"tokens": -1}, "tokens"),
        ({"peak_memory_bytes": -5}, "peak_memory_bytes"),
        ({"usd": -0.5}, "usd"),
        ({"latency_p50": 0.03}, "rise"),  # p50 0.03 > p95 0.02
        ({"latency_p99": 0.015}, "rise"),  # p99 under p95
        ({"latency_p99": None}, "go together"),
        ({"latency_basis": None}, "latency_basis"),
        ({"memory_method": None}, "go together"),
        ({"price": None}, "price"),  # a USD figure without the user's price is invented
        ({"search_seconds": float("nan")}, "search_seconds"),
    ],
)
def test_invalid_cost_figures_are_refused(change: dict[str, Any], field: str) -> None:
    cost = {**copy.deepcopy(COST), **change}
    problems = check_report(_with_cost(cost))
    assert problems, f"{change} was accepted"
    assert any(field in problem for problem in problems), problems


def test_quantiles_equal_are_accepted_and_unmeasured_is_none() -> None:
    flat = StageCost(latency_basis="batch", latency_p50=0.1, latency_p95=0.1, latency_p99=0.1)
    assert flat.figure("latency_p99") == 0.1
    empty = StageCost()
    assert all(empty.figure(name) is None for name in COST_FIGURES)


def test_a_price_names_at_least_one_rate() -> None:
    with pytest.raises(ValidationError, match="at least one"):
        StagePrice()
    with pytest.raises(ValidationError):
        StagePrice(usd_per_query=-1.0)
    assert StagePrice(usd_per_million_tokens=0.02).usd_per_million_tokens == 0.02


def test_the_schema_describes_cost() -> None:
    schema = report_json_schema()
    assert "StageCost" in schema["$defs"]
    properties = schema["$defs"]["StageCost"]["properties"]
    assert set(COST_FIGURES) <= set(properties)
