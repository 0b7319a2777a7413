"""`grk eval run --html PAGE`: the page is a member of the same output set as report and items.

Faults are injected at the final renames: a rename that fails puts the old set back byte for
byte; a SIGKILL between two renames leaves a journal, and the next reader of the report
(``load_report``) completes the new set, so a new report is never read beside an old page.
"""

from __future__ import annotations

import errno
import importlib.resources
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.judgments import EvalReport, load_report

NAMES = ("run.json", "run.items.jsonl", "run.html")

_KILLER = """
import os, signal, sys
from pathlib import Path

_target = os.environ["GRK_TEST_KILL_AT"]
_real = os.replace


def _replace(src, dst, *args, **kwargs):
    if Path(os.fspath(dst)).name == _target and ".grk-" in os.fspath(src):
        os.kill(os.getpid(), signal.SIGKILL)  # killed just before this member's rename
    return _real(src, dst, *args, **kwargs)


os.replace = _replace
from groundkit.cli import main

sys.argv = ["grk", *sys.argv[1:]]
main()
"""


@pytest.fixture(scope="module")
def demo_data() -> Iterator[tuple[Path, Path]]:
    root = importlib.resources.files("groundkit.harness") / "demo_data"
    with importlib.resources.as_file(root) as folder:
        yield folder / "corpus", folder / "judgments.jsonl"


def _args(demo: tuple[Path, Path], out: Path, chunker: str) -> list[str]:
    corpus, judgments = demo
    return [
        "eval", "run", "--corpus", os.fspath(corpus), "--judgments", os.fspath(judgments),
        "--report", os.fspath(out / NAMES[0]), "--items", os.fspath(out / NAMES[1]),
        "--html", os.fspath(out / NAMES[2]), "--chunker", chunker, "--resamples", "20",
    ]  # fmt: skip


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.fixture
def old_set(demo_data: tuple[Path, Path], tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(cli, _args(demo_data, out, "chars:777:100"))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == sorted(NAMES)
    assert _chunk_size(load_report(out / NAMES[0])) == 777
    return out


def _chunk_size(report: EvalReport) -> Any:
    return getattr(report.stages[0].chunker, "size", None)


@pytest.mark.parametrize("failing", NAMES)
def test_a_failed_rename_puts_the_old_set_back(
    failing: str,
    old_set: Path,
    demo_data: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _files(old_set)
    real = os.replace

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if Path(os.fspath(dst)).name == failing and ".grk-" in os.fspath(src):
            # As os.replace reports it: the source (the temporary) first.
            raise OSError(errno.EIO, "Input/output error", os.fspath(src), os.fspath(dst))
        real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    result = CliRunner().invoke(cli, _args(demo_data, old_set, "chars:555:100"))
    monkeypatch.undo()
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith("error: "), result.output
    assert f"{failing}:" in line  # the output's own name, not its temporary's
    assert ".grk-" not in line
    assert "earlier outputs are unchanged" in line
    assert _files(old_set) == before  # the old report, items and page, no journal, no link


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
@pytest.mark.parametrize("killed_at", NAMES)
def test_a_kill_between_renames_completes_the_new_set(
    killed_at: str, old_set: Path, demo_data: tuple[Path, Path], tmp_path: Path
) -> None:
    old = _files(old_set)
    driver = tmp_path / "killer.py"
    driver.write_text(_KILLER, encoding="utf-8")
    env = {**os.environ, "GRK_TEST_KILL_AT": killed_at, "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, os.fspath(driver), *_args(demo_data, old_set, "chars:555:100")],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    # What the killed writer left: each member's new content, renamed or still a temporary.
    new: dict[str, bytes] = {}
    for name in NAMES:
        temporaries = [p for p in old_set.iterdir() if p.name.startswith(f".{name}.grk-")]
        temporaries = [p for p in temporaries if p.name.endswith(".tmp")]
        if temporaries:
            assert len(temporaries) == 1
            new[name] = temporaries[0].read_bytes()
        else:
            new[name] = (old_set / name).read_bytes()
        assert new[name] != old[name], name
    assert any(p.name.startswith(".grk-set-") for p in old_set.iterdir())  # the journal
    # The next reader of the report finishes the set before reading it.
    report = load_report(old_set / NAMES[0])
    assert _files(old_set) == new  # the whole new set; no journal, temporary or link left
    assert _chunk_size(report) == 555
