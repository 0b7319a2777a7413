"""`grk eval report` and `grk eval export` do their work once (issue 25, item 8).

Their speed is measured by ``tests/benchmarks/bench_cli_report_speed.py`` (against the run that
made the report); these are its causes, checked without a clock: the two commands load none of
the run's machinery (nor matplotlib: the page draws its plots itself), the page asks the
statistics engine for one interval per distinct column of a recall curve, and the cyclic
collector stays mostly idle while a command reads a report.
Diagnosing every stage once per recorded ranking is checked in ``tests/diagnosis_fixes``.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.cli.test_cli_html_report import build
from tests.cli.test_cli_startup import loaded_by

import groundkit.cli.html._data as curve_data
from groundkit.cli._collector import YOUNG_OBJECTS, few_collections
from groundkit.stats import MeanInterval, mean_interval

# What a run needs and a command reading its report does not: the pipeline, the retrievers
# and the items comparison (which imports the run command).
RUN_MACHINERY = (
    "groundkit.cli.run._run",
    "groundkit.cli.compare._items_command",
    "groundkit.cli.compare._report",
    "groundkit.harness.run._pipeline",
    "bm25s",
    "Stemmer",
    "torch",
)


def _loaded(*names: str, modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_the_report_page_loads_no_run_machinery(two_stage_report: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    code, modules = loaded_by("eval", "report", str(two_stage_report), "--html", str(page))
    assert code == 0
    assert page.is_file()
    assert "groundkit.cli.html._plots" in modules  # the probe sees what the command loaded
    assert _loaded(*RUN_MACHINERY, modules=modules) == []
    # The plots are written as SVG directly: no plotting library (about half a second).
    assert _loaded("matplotlib", "groundkit.cli.html._sweep", modules=modules) == []


def test_export_loads_no_run_machinery_and_no_plotting(
    two_stage_report: Path, tmp_path: Path
) -> None:
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.trec"
    code, modules = loaded_by(
        "eval", "export", str(two_stage_report), "--stage", "whole", "--run", str(run),
        "--qrels", str(qrels),
    )  # fmt: skip
    assert code == 0
    assert run.is_file()
    assert qrels.is_file()
    assert "groundkit.harness.analysis._verify" in modules  # its verdicts were checked
    assert _loaded(*RUN_MACHINERY, "matplotlib", "groundkit.cli.html", modules=modules) == []


def test_each_distinct_curve_column_gets_one_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    report = build(count=40, depth=60).report
    asked: list[bytes] = []

    def counted(scores: Any, **settings: Any) -> MeanInterval:
        asked.append(np.ascontiguousarray(scores).tobytes())
        return mean_interval(scores, **settings)

    monkeypatch.setattr(curve_data, "mean_interval", counted)
    curves = curve_data.recall_curves(report)
    assert asked
    assert len(asked) == len(set(asked))  # never the same scores twice
    points = sum(len(c.x) for c in [*curves.rank, *curves.budget])
    assert len(asked) < points  # neighbouring cutoffs do share their scores here

    # The same numbers as asking the engine afresh at every point.
    def afresh(bands: Any, column: Any) -> MeanInterval:
        result: MeanInterval = curve_data.mean_interval(
            column, confidence_level=bands._level, seed=bands._seed
        )
        return result

    distinct = len(asked)
    monkeypatch.setattr(curve_data._Bands, "_interval", afresh)
    fresh = curve_data.recall_curves(report)
    assert len(asked) == distinct + points
    pairs = [
        *zip(curves.rank, fresh.rank, strict=True),
        *zip(curves.budget, fresh.budget, strict=True),
    ]
    for shared, alone in pairs:
        assert shared.stage == alone.stage
        for field in ("x", "mean", "low", "high"):
            assert getattr(shared, field).tobytes() == getattr(alone, field).tobytes()


def test_the_collector_is_held_idle_then_restored() -> None:
    before = gc.get_threshold()
    inside: list[tuple[int, ...]] = []

    def failing_command() -> None:
        with few_collections():
            inside.append(gc.get_threshold())
            raise RuntimeError("the command failed")

    with pytest.raises(RuntimeError, match="failed"):
        failing_command()
    assert inside[0][0] >= YOUNG_OBJECTS
    assert inside[0][1:] == before[1:]
    assert gc.get_threshold() == before
