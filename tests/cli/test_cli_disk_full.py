"""A full disk while a command writes: the file is named, and no empty or torn file stays.

Where the machine lets the test mount one (root), the files live on a real small tmpfs filled
to the last page; elsewhere those cases skip, and the judge cache's append is also checked with
``os.write`` refusing in-process (``ENOSPC``), which needs no privilege.
"""

from __future__ import annotations

import errno
import importlib.resources
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli

_PAGE = 4096
_JUDGE = "def judge(query, passage):\n    return 2\n"


def _grk(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [os.fspath(a) for a in args])


def _one_line(result: Result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in result.output
    return lines[-1]


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def demo_data() -> Iterator[tuple[Path, Path]]:
    root = importlib.resources.files("groundkit.harness") / "demo_data"
    with importlib.resources.as_file(root) as folder:
        yield folder / "corpus", folder / "judgments.jsonl"


@pytest.fixture(scope="module")
def run_report(demo_data: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run's report, items and page (the 'old' outputs)."""
    out = tmp_path_factory.mktemp("run")
    corpus, judgments = demo_data
    result = _grk(
        "eval", "run", "--corpus", corpus, "--judgments", judgments,
        "--report", out / "run.json", "--html", out / "run.html", "--resamples", "20",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out / "run.json"


@pytest.fixture
def judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    """A Python judge that grades every passage 2 (a module name of its own per test)."""
    name = f"fulldiskjudge_{abs(hash(request.node.nodeid))}"
    folder = tmp_path / "judge"
    folder.mkdir()
    (folder / f"{name}.py").write_text(_JUDGE, encoding="utf-8")
    monkeypatch.syspath_prepend(os.fspath(folder))
    return f"python:{name}:judge"


@pytest.fixture
def report(run_report: Path, tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    copy = work / "run.json"
    shutil.copyfile(run_report, copy)
    return copy


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.name != "posix" or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", os.fspath(mount)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip()})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", os.fspath(mount)], check=False, capture_output=True)


def _fill(mount: Path) -> None:
    """Fill the file system to the last byte (a hidden filler file)."""
    descriptor = os.open(mount / ".filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                os.write(descriptor, b"\0" * _PAGE)
            except OSError:
                break
        while True:  # the last partial page too
            try:
                if os.write(descriptor, b"\0") != 1:
                    break
            except OSError:
                break
    finally:
        os.close(descriptor)
    with pytest.raises(OSError, match="No space left") as refused:
        (mount / ".probe").write_bytes(b"x" * _PAGE)
    assert refused.value.errno == errno.ENOSPC
    (mount / ".probe").unlink(missing_ok=True)


# --- a real full disk ---------------------------------------------------------------------


@pytest.mark.parametrize("command", ["calibrate", "adjudicate"])
def test_judge_cache_on_a_full_disk(
    command: str, small_disk: Path, report: Path, judge: str
) -> None:
    cache = small_disk / "cache.jsonl"
    work = report.parent
    _fill(small_disk)
    disk_before, work_before = _tree(small_disk), _tree(work)
    args: list[Any] = ["eval", command, report, "--judge", judge, "--cache", cache]
    if command == "calibrate":
        args += ["--n-pos", "3", "--n-neg", "3"]
    else:
        args += ["--stage", "bm25", "--k", "3", "--out", work / "adj.json"]
        args += ["--list", work / "list.jsonl"]
    result = _grk(*args)
    assert result.exit_code == 2, result.output
    line = _one_line(result)
    assert str(cache) in line
    assert "No space left on device" in line
    assert not cache.exists()  # no 0-byte cache left behind
    assert _tree(small_disk) == disk_before
    assert _tree(work) == work_before  # no card, no adjudicated report, no list


def test_eval_run_on_a_full_disk_keeps_the_old_set(
    small_disk: Path, run_report: Path, demo_data: tuple[Path, Path]
) -> None:
    outputs = [small_disk / "run.json", small_disk / "run.html"]
    for path in outputs:
        shutil.copyfile(run_report.with_name(path.name), path)
    _fill(small_disk)
    before = _tree(small_disk)
    corpus, judgments = demo_data
    result = _grk(
        "eval", "run", "--corpus", corpus, "--judgments", judgments,
        "--report", outputs[0], "--html", outputs[1], "--resamples", "20",
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith("error: ")
    assert any(str(path) in line for path in outputs), line
    assert "No space left on device" in line
    assert "earlier outputs are unchanged" in line
    assert _tree(small_disk) == before  # the old set byte for byte, no temporary
    assert sorted(p.name for p in small_disk.iterdir()) == sorted(before)


# --- os.write refusing, in-process (no privilege needed) ----------------------------------


def _refusing_write(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """``os.write`` to ``target`` fails with ENOSPC (other writes go through)."""
    real_write = os.write

    def write(descriptor: int, data: Any) -> int:
        try:
            name = Path(f"/proc/self/fd/{descriptor}").readlink()
        except OSError:
            name = None
        if name == target:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(descriptor, data)

    # append_line's own os.write (the module's os is the process's os module).
    monkeypatch.setattr(os, "write", write)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
@pytest.mark.parametrize("existing", [False, True])
def test_judge_cache_append_refused_in_process(
    existing: bool, report: Path, judge: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = report.parent
    cache = work / "cache.jsonl"
    if existing:
        cache.write_bytes(b'{"format": "groundkit-judge-cache", "key": "k", "repeat": 0, '
                          b'"grade": 1, "reason": "", "tokens": 0}\n')  # fmt: skip
    before = _tree(work)
    _refusing_write(monkeypatch, cache.resolve())
    result = _grk(
        "eval", "calibrate", report, "--judge", judge, "--cache", cache,
        "--n-pos", "3", "--n-neg", "3",
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    line = _one_line(result)
    assert "cache.jsonl" in line
    assert "No space left on device" in line
    assert _tree(work) == before  # an old cache byte for byte; a new one not created at all
    assert cache.exists() == existing
