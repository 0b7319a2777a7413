"""The prediction benchmark's shipped figures: consistent, and the docs page shows them."""

from __future__ import annotations

from pathlib import Path

from groundkit.diagnosis import BENCHMARK_FIGURES, FIXES
from groundkit.diagnosis.predictions._benchmark import benchmark_table

_PAGE = Path(__file__).resolve().parents[2] / "docs" / "pages" / "guides" / "diagnosis.md"


def test_docs_show_the_shipped_figures() -> None:
    assert benchmark_table() in _PAGE.read_text(encoding="utf-8")


def test_figures_are_consistent() -> None:
    assert len(BENCHMARK_FIGURES.collections) >= 4
    for figure in BENCHMARK_FIGURES.figures:
        assert figure.fix in FIXES
        assert 0 <= figure.inside <= figure.total
    inside, total = BENCHMARK_FIGURES.share("exact")
    assert total > 0
    assert inside / total >= 0.8  # the target for exactly replayable fixes
    assert BENCHMARK_FIGURES.spearman >= 0.7
    line = " ".join(BENCHMARK_FIGURES.lines())
    assert f"{inside}/{total}" in line
    assert f"Spearman {BENCHMARK_FIGURES.spearman:.2f}" in line
