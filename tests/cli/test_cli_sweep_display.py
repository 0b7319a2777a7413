"""The sweep's arms bar is a ProgressDisplay with the sweep's columns; its log lines as before."""

from __future__ import annotations

import io
import sys

import pytest
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from groundkit.cli.commands._eval_sweep import SweepDisplay
from groundkit.cli.console._report import ProgressDisplay
from groundkit.harness.sweep import SweepEvent

_EVENTS = [
    SweepEvent(arm="a", status="running", done=0, total=3),
    SweepEvent(arm="a", status="done", done=1, total=3, seconds=2.25, eta=130.0),
    SweepEvent(arm="b", status="skipped", done=2, total=3, eta=65.0),
    SweepEvent(arm="c", status="failed", done=3, total=3, seconds=0.5, eta=0.0),
]

_LOG = (
    "[1/3] arm a: done in 2.2 s\n"
    "[2/3] arm b: skipped (outputs complete, same config)\n"
    "[3/3] arm c: failed in 0.5 s\n"
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_follows_the_arms_with_the_sweep_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROUNDKIT_PROGRESS", raising=False)  # the default display
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    display = SweepDisplay()
    assert display.enabled  # a terminal: drawn
    with display:
        bars = display._bars
        assert isinstance(bars, ProgressDisplay)
        progress = bars._progress
        assert progress is not None
        columns = progress.columns
        assert [type(c) for c in columns] == [
            TextColumn,
            BarColumn,
            MofNCompleteColumn,
            TimeElapsedColumn,
            TextColumn,
            TextColumn,
        ]
        texts = [c.text_format for c in columns if isinstance(c, TextColumn)]
        assert texts == ["arms", "ETA {task.fields[eta]}", "{task.fields[arm]}"]
        seen = []
        for event in _EVENTS:
            display(event)
            (task,) = progress.tasks
            seen.append((task.completed, task.total, task.fields["eta"], task.fields["arm"]))
    assert seen == [(0, 3, "–", "a"), (1, 3, "2:10", "a"), (2, 3, "1:05", "b"), (3, 3, "0:00", "c")]
    assert bars._progress is None  # stopped on leaving
    assert _LOG in err.getvalue()


def test_off_the_terminal_only_the_log_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    display = SweepDisplay()
    assert not display.enabled
    with display:
        for event in _EVENTS:
            display(event)
        assert display._bars._progress is None
    assert err.getvalue() == _LOG


def test_forced_off_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with SweepDisplay(enabled=False) as display:
        display(_EVENTS[1])
        assert display._bars._progress is None
    assert err.getvalue() == "[1/3] arm a: done in 2.2 s\n"
