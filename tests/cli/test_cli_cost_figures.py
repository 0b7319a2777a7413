"""Cost figures that mean what they say: building a retriever and loading a model are figures
of their own, an index read from the embedding cache says so, and a batch-attributed latency is
one column, not three equal quantiles."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from groundkit.cli.console._cost_view import cost_cell, cost_columns, render_cost_table
from groundkit.harness.run import _cost as cost_module
from groundkit.harness.run._cost import CostMeter
from groundkit.judgments.report import StageCost


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(cost_module.time, "perf_counter", fake)
    return fake


def test_setup_and_model_load_are_apart_from_index_and_search(clock: _Clock) -> None:
    meter = CostMeter()
    with meter.setting_up():
        clock.now += 2.0  # a framework factory building its store
    with meter.indexing():
        meter.observe("load model", 0, 1)
        clock.now += 3.0
        meter.observe("load model", 1, 1)
        meter.observe("index", 0, 1)  # other phases are not timed here
        clock.now += 0.5
    meter.observe("load model", 0, 1)  # a second model, loaded on first search
    clock.now += 1.0
    meter.observe("load model", 1, 1)
    meter.searched(1.4, None, 4)  # the search's wall time, its model load included
    cost = meter.record(object(), 4)
    assert cost.setup_seconds == pytest.approx(2.0)
    assert cost.model_load_seconds == pytest.approx(4.0)
    assert cost.index_seconds == pytest.approx(0.5)
    assert cost.search_seconds == pytest.approx(0.4)
    assert cost.latency_p50 == pytest.approx(0.1)


def test_a_cache_count_from_the_usage_hook_is_recorded() -> None:
    class Retriever:
        def usage(self) -> dict[str, Any]:
            return {"embedding_calls": 3, "cached_passages": 5, "bogus": 1}

    meter = CostMeter()
    meter.passages(["a"] * 5)
    cost = meter.record(Retriever(), 3)
    assert (cost.embedding_calls, cost.cached_passages, cost.chunks_indexed) == (3, 5, 5)


def test_more_cached_than_indexed_is_refused() -> None:
    with pytest.raises(ValueError, match="cached_passages"):
        StageCost(chunks_indexed=2, cached_passages=3)


def _cost(**fields: Any) -> StageCost:
    base: dict[str, Any] = {"index_seconds": 0.0031, "latency_basis": "batch"}
    base.update(latency_p50=0.002, latency_p95=0.002, latency_p99=0.002)
    return StageCost.model_validate({**base, **fields})


def test_batch_latencies_are_one_column_and_cached_indexes_say_so() -> None:
    cached = _cost(chunks_indexed=295, cached_passages=295)
    partly = _cost(chunks_indexed=295, cached_passages=200)
    columns = cost_columns([cached, partly])
    titles = [title for _, title in columns]
    assert "per query (batch)" in titles
    assert "p95/query" not in titles
    assert "USD" in titles  # unpriced is worth seeing
    assert "model load" not in titles  # no stage measured it
    assert cost_cell(cached, "index_seconds") == "3.1 ms (cached)"
    assert cost_cell(partly, "index_seconds") == "3.1 ms (200 cached)"


def test_timed_stages_keep_their_quantiles_and_batch_rows_show_a_dash() -> None:
    timed = _cost(
        latency_basis="per_query", latency_p50=0.001, latency_p95=0.004, latency_p99=0.009
    )
    batch = _cost()
    titles = [title for _, title in cost_columns([timed, batch])]
    assert titles[titles.index("p50/query") :][:3] == ["p50/query", "p95/query", "p99/query"]
    assert cost_cell(batch, "latency_p95") == "—"
    assert cost_cell(batch, "latency_p50") == "2.0 ms"
    assert cost_cell(timed, "latency_p99") == "9.0 ms"


def test_an_old_report_without_the_new_figures_shows_no_empty_columns() -> None:
    old = _cost(chunks_indexed=10)
    assert old.setup_seconds is None
    titles = [title for _, title in cost_columns([old])]
    assert "setup" not in titles
    assert "model load" not in titles


def test_the_console_table_shows_the_new_figures() -> None:
    class Stage:
        name = "dense"
        cost = _cost(
            setup_seconds=0.2, model_load_seconds=12.8, chunks_indexed=5, cached_passages=5
        )

    stream = io.StringIO()
    render_cost_table(Console(file=stream, width=200, no_color=True), [Stage()])  # type: ignore[list-item]
    text = stream.getvalue()
    for expected in ("setup", "model load", "12.80 s", "(cached)", "per query (batch)"):
        assert expected in text
