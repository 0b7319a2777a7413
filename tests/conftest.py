"""Shared fixtures for the whole test suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Haystack reads this when it is imported: the tests make no network call, telemetry included.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

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
