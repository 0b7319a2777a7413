"""Shared fixtures for the whole test suite."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The checkout's root folder."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data` beside the checkout; skips the test cleanly when it is absent."""
    data = SHARED_DIR / "data"
    if not data.is_dir():
        pytest.skip(f"shared data not available at {data} (it sits beside the checkout in CI)")
    return data


@pytest.fixture(scope="session")
def scifact_dir(shared_data: Path) -> Path:
    """BEIR SciFact in BEIR's own layout, from ../shared (skips when absent)."""
    path = shared_data / "beir" / "scifact"
    if not (path / "corpus.jsonl").is_file():
        pytest.skip(f"BEIR SciFact not available at {path}")
    return path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``benchmark_suite`` run only when asked for (``-m benchmark_suite``)."""
    if "benchmark_suite" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="benchmark_suite: run with -m benchmark_suite")
    for item in items:
        if "benchmark_suite" in item.keywords:
            item.add_marker(skip)
