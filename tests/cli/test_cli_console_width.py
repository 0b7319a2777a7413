"""The console view fits the terminal: at 80, 100 and 120 columns no stage name, interval or p
is cut, and no line is wider than the terminal (tables too wide fold into column groups)."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from tests.cli._chromium import Browser, chromium

from groundkit.cli.console._fit import fold_table, print_table
from groundkit.cli.console._report import render_report
from groundkit.judgments import EvalReport, load_report

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_INTERVAL = re.compile(r"\[[+-]?\d+\.\d{3}, [+-]?\d+\.\d{3}\]")
_WIDTHS = (80, 100, 120)


def _run_in_terminal(args: list[str], cwd: Path, columns: int) -> tuple[int, str]:
    """Run ``args`` with standard output and error on a pseudo-terminal ``columns`` wide."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=side, stderr=side, env=env
    )
    os.close(side)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    code = process.wait(timeout=600)
    return code, _ANSI.sub("", b"".join(chunks).decode("utf-8", errors="replace"))


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """``grk eval demo`` once, in an 80-column pseudo-terminal: its output and its folder."""
    folder = tmp_path_factory.mktemp("demo80")
    grk = [sys.executable, "-m", "groundkit.cli", "eval", "demo", "--no-progress"]
    code, output = _run_in_terminal(grk, folder, 80)
    assert code == 0, output
    return output, folder / "groundkit-demo"


@pytest.fixture(scope="module")
def demo_run(demo_folder: tuple[str, Path]) -> tuple[str, EvalReport]:
    """The demo's console output and its report."""
    output, folder = demo_folder
    return output, load_report(folder / "report.json")


def _check_view(text: str, report: EvalReport, width: int) -> None:
    lines = text.splitlines()
    wide = [line for line in lines if len(line.rstrip()) > width]
    assert not wide, f"lines wider than {width}: {wide[:3]}"
    assert "…" not in text, "a cell was cut"
    for stage in report.stages:
        # Each stage name stands whole in a table cell (not merely as a prefix of a longer one).
        cell = re.compile(r"[│┃]\s" + re.escape(stage.name) + r"(\s|$)")
        assert any(cell.search(line) for line in lines), f"stage {stage.name} is cut or missing"
    metrics = list(report.run.headline_metrics)
    aggregates = sum(1 for s in report.stages for m in metrics if m in s.aggregates)
    comparisons = sum(1 for s in report.stages for c in s.comparisons if c.metric in metrics)
    assert len(_INTERVAL.findall(text)) >= aggregates + comparisons
    assert text.count(" adj ") >= sum(
        1
        for s in report.stages
        for c in s.comparisons
        if c.metric in metrics and c.role == "decision"
    )


def test_the_demo_in_an_80_column_terminal_keeps_every_label(
    demo_run: tuple[str, EvalReport],
) -> None:
    output, report = demo_run
    _check_view(output, report, 80)
    assert "cost and latency per stage" in output
    assert "(continued)" in output  # the wide tables were folded, not cut
    best = max(report.stages, key=lambda s: s.aggregates["recall@10"].mean)
    assert f"bottom line: best on recall@10: {best.name} " in " ".join(output.split())
    assert "adjusted over the family" in " ".join(output.split())  # the p legend


@pytest.mark.parametrize("width", _WIDTHS)
def test_the_report_view_fits_each_width(demo_run: tuple[str, EvalReport], width: int) -> None:
    _, report = demo_run
    stream = io.StringIO()
    console = Console(file=stream, width=width, no_color=True, highlight=False, markup=False)
    render_report(console, report, report_path="r.json", items_path="i.jsonl")
    _check_view(stream.getvalue(), report, width)


def test_a_table_that_fits_is_printed_as_built() -> None:
    table = Table(title="t")
    table.add_column("stage", no_wrap=True)
    table.add_column("a", no_wrap=True)
    table.add_row("bm25", "0.5")
    console = Console(file=io.StringIO(), width=80)
    assert fold_table(console, table) == [table]


def test_a_wide_table_folds_into_groups_that_repeat_the_key_column() -> None:
    table = Table(title="wide", caption="the caption")
    table.add_column("stage", no_wrap=True)
    for index in range(8):
        table.add_column(f"metric{index}", no_wrap=True)
    table.add_row("a-long-stage-name", *[f"[0.{index}00, 0.{index}99]" for index in range(8)])
    stream = io.StringIO()
    console = Console(file=stream, width=60, no_color=True)
    parts = fold_table(console, table)
    groups = [part for part in parts if isinstance(part, Table)]
    assert len(groups) > 1
    assert all(group.columns[0].header == "stage" for group in groups)
    shown = [column.header for group in groups for column in group.columns[1:]]
    assert shown == [f"metric{index}" for index in range(8)]  # every column once, in order
    print_table(console, table)
    text = stream.getvalue()
    assert "…" not in text
    assert all(len(line) <= 60 for line in text.splitlines())
    assert text.count("a-long-stage-name") == len(groups)
    assert text.count("the caption") == 1


@pytest.mark.browser
@pytest.mark.parametrize("width", [1000, 1400])
def test_the_demo_page_cuts_no_table_at_1000_or_1400_pixels(
    demo_folder: tuple[str, Path], width: int, tmp_path: Path
) -> None:
    binary = chromium()
    if binary is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    browser = Browser(binary, tmp_path / "profile", width=width)
    try:
        loaded = browser.load(demo_folder[1] / "report.html")
    finally:
        browser.close()
    assert loaded.errors == []
    assert loaded.facts["cut_tables"] == []  # every shown table fits its card
    assert loaded.facts["scroll_width"] <= width
