"""Progress where nobody watches a terminal: plain lines in a log, one per phase, and at most
one every 30 s while a long phase runs."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from groundkit.cli._errors import InputError
from groundkit.cli.console import _report
from groundkit.cli.console._report import ProgressDisplay


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _default_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default display (the suite turns it off for the other tests)."""
    monkeypatch.delenv("GROUNDKIT_PROGRESS", raising=False)


def test_a_log_gets_one_line_per_phase_and_one_every_30_s(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(_report.time, "monotonic", clock)
    log = io.StringIO()  # not a terminal
    with ProgressDisplay(file=log) as display:
        assert display.lines
        assert not display.enabled
        display("load", 0, 2)
        display("load", 2, 2)
        display("load", 2, 2)  # said once
        for done in range(1001):  # a long phase: 1,000 steps, a tenth of a second each
            display("bm25: retrieve", done, 1000)
            clock.now += 0.1
    lines = log.getvalue().splitlines()
    assert lines[0] == "[    0.0 s] load: done in 0.0 s"
    progress = [line for line in lines if " of 1,000 after " in line]
    assert len(progress) == 3  # after 30, 60 and 90 s; not one per step
    assert progress[0].endswith("bm25: retrieve: 300 of 1,000 after 30 s")
    assert lines[-1].endswith("bm25: retrieve: done in 100.0 s")
    assert len(lines) == 5


def test_no_progress_and_a_terminal_write_no_lines() -> None:
    log = io.StringIO()
    with ProgressDisplay(file=log, enabled=False) as display:
        display("load", 1, 1)
    assert log.getvalue() == ""
    assert not ProgressDisplay(file=log, enabled=True).lines  # forced bars, not lines


@pytest.mark.parametrize(
    ("value", "lines", "bars"),
    [("lines", True, False), ("off", False, False), ("bars", False, True), ("AUTO", True, False)],
)
def test_the_environment_chooses_the_display(
    monkeypatch: pytest.MonkeyPatch, value: str, lines: bool, bars: bool
) -> None:
    monkeypatch.setenv("GROUNDKIT_PROGRESS", value)
    display = ProgressDisplay(file=io.StringIO())
    assert (display.lines, display.enabled) == (lines, bars)
    assert not ProgressDisplay(file=io.StringIO(), enabled=False).lines  # the flag wins


def test_a_bad_environment_value_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUNDKIT_PROGRESS", "loud")
    with pytest.raises(InputError, match="GROUNDKIT_PROGRESS='loud': expected one of auto"):
        ProgressDisplay(file=io.StringIO())


def test_a_run_with_stderr_in_a_file_leaves_a_line_per_phase(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with log.open("w") as stderr:
        done = subprocess.run(
            [sys.executable, "-m", "groundkit.cli", "eval", "demo", "--no-dense", "--no-html"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            timeout=600,
            check=False,
        )
    text = log.read_text("utf-8")
    assert done.returncode == 0, text
    for phase in ("load", "resolve", "bm25: index", "bm25: retrieve", "bm25-document: score"):
        assert f"] {phase}: done in " in text
    assert "\x1b[" not in text  # no terminal codes in a log
