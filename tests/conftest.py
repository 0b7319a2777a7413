"""Shared fixtures for the whole test suite."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

# Haystack reads this when it is imported: the tests make no network call, telemetry included.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
# Commands run by the tests (CliRunner mixes standard error into the output they check) show
# no progress unless a test asks for it: the plain progress lines are tested on their own.
os.environ.setdefault("GROUNDKIT_PROGRESS", "off")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"


@pytest.fixture(autouse=True)
def _own_judge_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Each test's judges cache in a folder of their own (the default is the user's cache,
    shared by every command: a test must not see another test's answers)."""
    folder = tmp_path_factory.mktemp("judge-cache")
    monkeypatch.setenv("GROUNDKIT_JUDGE_CACHE_DIR", str(folder))
    return folder


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


# --- the hostile suite's tally (tests/integration/hostile) ---------------------------------
# Each case appends its outcome to <folder>/<worker>.jsonl; the controller makes one folder per
# session (workers inherit it through the environment) and prints the totals at the end.


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as from a terminal; give this session (and its workers) a fresh tally folder.

    A shell without job control starts a background job with Ctrl-C ignored, and every
    process started from it inherits that (``grk`` then leaves it ignored, as under
    ``nohup``). The tests of Ctrl-C speak for a command started from a terminal, so this
    process handles it again, and the commands it starts get the default disposition back.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(config, "workerinput") or os.environ.get("GROUNDKIT_HOSTILE_TALLY"):
        return
    folder = (
        REPO_ROOT / "test-artifacts" / "hostile" / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    )
    os.environ["GROUNDKIT_HOSTILE_TALLY"] = str(folder)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the hostile suite's totals: cases, clean refusals, tracebacks, losses."""
    folder = Path(os.environ.get("GROUNDKIT_HOSTILE_TALLY", "/nonexistent"))
    counts: dict[str, int] = {}
    areas: dict[str, int] = {}
    for file in folder.glob("*.jsonl"):
        for line in file.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            counts[entry["outcome"]] = counts.get(entry["outcome"], 0) + 1
            areas[entry["suite"]] = areas.get(entry["suite"], 0) + 1
    total = sum(counts.values())
    if not total:
        return
    parts = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
    by_area = ", ".join(f"{name} {count}" for name, count in sorted(areas.items()))
    terminalreporter.write_line(f"hostile suite: {total} cases ({parts}); by area: {by_area}")
    summary = {"cases": total, "outcomes": counts, "areas": areas}
    (folder / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
