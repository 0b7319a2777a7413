# ruff: noqa: E501 - scenario builders read best one command per line
"""Faults: SIGKILL, SIGTERM and SIGINT at random points of every command that writes.

Each try starts from a complete *old* set of outputs, runs the command (a real subprocess)
towards a different *new* set, and sends the signal after a random delay between 10% and 110%
of an uninterrupted run's duration (so some tries land in the write phase, some after it).
Afterwards every output must be the old set or the new set, whole — never a mix, never a torn
file — and every input unchanged; SIGINT and SIGTERM must exit 130/143 without a traceback.
Then the same command is run again: it must succeed, produce the new set, and leave no
temporary behind.

The default run makes one try per command (the signals in turn); ``-m benchmark_suite`` makes
20 per command and signal (``GROUNDKIT_FAULT_TRIES`` changes that number).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.integration.hostile.conftest import FAST, Tally, make_dataset, snapshot
from tests.integration.hostile.test_hostile_beir import DOCS, write_dataset

from groundkit.judgments.files import recover_folder

SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT}
EXPECTED_EXIT = {"SIGKILL": {-9}, "SIGTERM": {143, -15}, "SIGINT": {130, -2}}
_DURATIONS: dict[str, float] = {}


def _grk(args: list[str | Path], cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "groundkit.cli", *map(os.fspath, args)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def _finish(args: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    process = _grk(args, cwd)
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@dataclass
class Scenario:
    """One writing command: how to build the old state, the new command, and judge a state."""

    root: Path
    args: list[str | Path]
    inputs: list[Path]
    outputs: list[Path]
    classify: Callable[[], str]  # "old", "new" or a description of what is wrong
    folders: list[Path] = field(default_factory=list)  # where no temporary may remain


def _visible(path: Path) -> object:
    """A path's state without the temporaries a killed writer leaves (the next run removes
    them, which the retry checks), so that they are not mistaken for a changed output."""
    state = snapshot(path)
    if isinstance(state, tuple) and state[0] == "dir":
        return ("dir", {k: v for k, v in state[1].items() if ".grk-" not in k})
    return state


def _temporaries(folders: list[Path]) -> list[str]:
    found: list[str] = []
    for folder in folders:
        if folder.is_dir():
            found += [e.name for e in folder.iterdir() if ".grk-" in e.name]
    return found


def _marker_generation(paths: list[Path], old: str, new: str) -> str:
    seen: set[str] = set()
    for path in paths:
        if not path.is_file():
            return f"{path.name} missing"
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".json":
            try:
                json.loads(text)
            except ValueError:
                return f"{path.name} torn"
        elif path.suffix == ".html" and not text.rstrip().endswith("</html>"):
            return f"{path.name} torn"
        elif path.suffix == ".jsonl":
            try:
                [json.loads(line) for line in text.splitlines()]
            except ValueError:
                return f"{path.name} torn"
        is_old, is_new = bool(re.search(old, text)), bool(re.search(new, text))
        seen.add("old" if is_old and not is_new else "new" if is_new and not is_old else "?")
    return seen.pop() if len(seen) == 1 else f"mixed {sorted(seen)}"


def _size(size: int) -> str:
    return rf'(?:"size": ?|size=){size}(?!\d)'  # reports are compact JSON since 2.0


def _eval_run(root: Path) -> Scenario:
    data = make_dataset(root / "data")
    out = root / "out"
    out.mkdir()
    report, items, html = out / "r.json", out / "r.items.jsonl", out / "r.html"
    base = ["eval", "run", "--corpus", data.corpus, "--judgments", data.judgments,
            "--report", report, "--items", items, "--html", html, *FAST]  # fmt: skip
    done = _finish([*base, "--chunker", "chars:777:100"], root)
    assert done.returncode == 0, done.stderr
    return Scenario(
        root,
        [*base, "--chunker", "chars:555:100"],
        [data.corpus, data.judgments],
        [report, items, html],
        # The chunk size as the files record it, never a bare "777" that a timing may hold.
        lambda: _marker_generation([report, items, html], _size(777), _size(555)),
        [out],
    )


def _report_html(root: Path) -> Scenario:
    data = make_dataset(root / "data")
    out = root / "out"
    out.mkdir()
    reports = {}
    for size in ("777", "555"):
        path = out / f"r{size}.json"
        done = _finish(["eval", "run", "--corpus", data.corpus, "--judgments", data.judgments,
                        "--report", path, "--no-items", "--chunker", f"chars:{size}:100", *FAST], root)  # fmt: skip
        assert done.returncode == 0, done.stderr
        reports[size] = path
    page = out / "page.html"
    assert _finish(["eval", "report", reports["777"], "--html", page], root).returncode == 0
    return Scenario(
        root,
        ["eval", "report", reports["555"], "--html", page],
        [data.corpus, data.judgments, *reports.values()],
        [page],
        lambda: _marker_generation([page], _size(777), _size(555)),
        [out],
    )


def _bytes_generation(paths: list[Path], old: list[bytes | None], new: list[bytes | None]) -> str:
    now = [p.read_bytes() if p.is_file() else None for p in paths]
    if now == old:
        return "old"
    if now == new:
        return "new"
    return "mixed or torn"


def _filter(root: Path, command: str) -> Scenario:
    data = make_dataset(root / "data")
    out = root / "out"
    out.mkdir()
    kept, rejected = out / "kept.jsonl", out / "rejected.jsonl"
    extra = ["--rejected", rejected] if command == "filter" else []
    outputs = [kept, rejected] if command == "filter" else [kept]
    args: list[str | Path] = ["evalset", command, data.judgments, "-o", kept, *extra]
    reference = root / "reference"
    reference.mkdir()
    ref_out = [reference / p.name for p in outputs]
    ref_args: list[str | Path] = ["evalset", command, data.judgments, "-o", ref_out[0]]
    if command == "filter":
        ref_args += ["--rejected", ref_out[1]]
    assert _finish(ref_args, root).returncode == 0
    new = [p.read_bytes() for p in ref_out]
    old_kept = b'{"query_id": "old-set", "query": "An old question?", "gold": [], "category": "unanswerable"}\n'
    kept.write_bytes(old_kept)
    if command == "filter":
        rejected.write_bytes(b'{"filter": "too-short", "query_id": "old-set", "reason": "old"}\n')
    old = [p.read_bytes() for p in outputs]
    return Scenario(
        root, args, [data.judgments, data.corpus], outputs,
        lambda: _bytes_generation(outputs, old, new), [out],
    )  # fmt: skip


def _beir(root: Path) -> Scenario:
    first = write_dataset(root / "beir-old")
    docs = [
        *DOCS,
        *({"_id": f"n{i}", "text": f"Document number {i} about trains."} for i in range(400)),
    ]
    second = write_dataset(root / "beir-new", corpus="".join(json.dumps(d) + "\n" for d in docs))
    out = root / "adapted"
    assert _finish(["beir", "adapt", first, out], root).returncode == 0
    old = _visible(out)
    reference = root / "reference"
    assert _finish(["beir", "adapt", second, reference], root).returncode == 0
    new = _visible(reference)

    def classify() -> str:
        now = _visible(out)
        return "old" if now == old else "new" if now == new else "mixed or torn"

    return Scenario(
        root, ["beir", "adapt", second, out], [first, second], [out], classify, [root, out]
    )


def _beir_fresh(root: Path) -> Scenario:
    docs = [*DOCS, *({"_id": f"n{i}", "text": f"Document {i}."} for i in range(400))]
    source = write_dataset(root / "beir", corpus="".join(json.dumps(d) + "\n" for d in docs))
    reference = root / "reference"
    assert _finish(["beir", "adapt", source, reference], root).returncode == 0
    new = _visible(reference)
    out = root / "fresh"

    def classify() -> str:
        now = _visible(out)
        return "old" if now is None else "new" if now == new else "mixed or torn"

    return Scenario(root, ["beir", "adapt", source, out], [source], [out], classify, [root])


def _diagnose(root: Path) -> Scenario:
    data = make_dataset(root / "data")
    report = root / "r.json"
    assert _finish(["eval", "run", "--corpus", data.corpus, "--judgments", data.judgments,
                    "--report", report, "--no-items", *FAST], root).returncode == 0  # fmt: skip
    record = root / "record.jsonl"
    assert _finish(["eval", "diagnose", report, "--track-record", record], root).returncode == 0
    old = record.read_bytes()

    def classify() -> str:
        # Appends: the old lines, then whole prediction lines (the retry adds one more).
        now = record.read_bytes()
        if now == old:
            return "old"
        if not now.startswith(old) or not now.endswith(b"\n"):
            return "torn"
        added = now[len(old) :].splitlines()
        try:
            whole = all(json.loads(line).get("record") == "prediction" for line in added)
        except ValueError:
            return "torn"
        return "new" if whole else "torn"

    return Scenario(
        root, ["eval", "diagnose", report, "--track-record", record], [report], [record],
        classify, [root],
    )  # fmt: skip


SCENARIOS: dict[str, Callable[[Path], Scenario]] = {
    "eval run": _eval_run,
    "eval report --html": _report_html,
    "evalset filter": lambda root: _filter(root, "filter"),
    "evalset classify": lambda root: _filter(root, "classify"),
    "beir adapt (replace)": _beir,
    "beir adapt (new folder)": _beir_fresh,
    "eval diagnose --track-record": _diagnose,
}


def _duration(name: str, scenario: Scenario) -> float:
    if name not in _DURATIONS:
        trial = scenario.root.parent / f"{scenario.root.name}-timing"
        copy = SCENARIOS[name](trial)
        started = time.perf_counter()
        done = _finish(copy.args, trial)
        _DURATIONS[name] = time.perf_counter() - started
        assert done.returncode == 0, done.stderr
        shutil.rmtree(trial, ignore_errors=True)
    return _DURATIONS[name]


def _save(scenario: Scenario) -> Callable[[], None]:
    """Keep a copy of the old outputs; the returned function puts them back."""
    backup = scenario.root / ".old-outputs"
    backup.mkdir()
    saved: list[tuple[Path, Path]] = []
    for number, path in enumerate(scenario.outputs):
        copy = backup / str(number)
        if path.is_dir():
            shutil.copytree(path, copy, symlinks=True)
        elif path.exists():
            shutil.copy2(path, copy)
        saved.append((path, copy))

    def restore() -> None:
        for path, copy in saved:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
            if copy.is_dir():
                shutil.copytree(copy, path, symlinks=True)
            elif copy.exists():
                shutil.copy2(copy, path)

    return restore


def _one_try(name: str, signame: str, seed: int, scenario: Scenario, tally: Tally) -> None:
    inputs_before = {p: snapshot(p) for p in scenario.inputs}
    assert scenario.classify() == "old"
    duration = _duration(name, scenario)
    delay = random.Random(f"{name}/{signame}/{seed}").uniform(0.1, 1.1) * duration
    process = _grk(scenario.args, scenario.root)
    time.sleep(delay)
    if process.poll() is None:
        process.send_signal(SIGNALS[signame])
    _, stderr = process.communicate(timeout=300)
    state = scenario.classify()
    if state not in ("old", "new") and signame == "SIGKILL":
        # Killed between two renames: the journal lets the next writer finish the set, which
        # is what any later groundkit command writing there does first.
        for folder in scenario.folders:
            recover_folder(folder)
        if scenario.classify() == "new":
            state = "new set, completed from the journal"
            tally.record("faults", "killed mid-rename, completed from the journal")
    inputs_after = {p: snapshot(p) for p in scenario.inputs}
    traceback = "Traceback" in stderr and signame != "SIGKILL"
    starting = traceback and signame == "SIGINT" and " in main\n" not in stderr
    if starting:
        # Ctrl-C while the interpreter itself is still starting (before ``grk``'s first line
        # runs): Python prints its own KeyboardInterrupt traceback and nothing can catch it.
        # Counted apart, and the state must still be the old one.
        tally.record("faults", "interrupted while Python was starting")
        traceback = False
        assert state == "old", state
    lost = state not in ("old", "new", "new set, completed from the journal")
    lost = lost or inputs_after != inputs_before
    if traceback:
        tally.record("faults", "traceback")
    elif lost:
        tally.record("faults", "loss")
    elif state in ("old", "new") and not starting:
        tally.record("faults", f"left the {state} set")
    assert not traceback, stderr
    assert not lost, f"{name}, {signame} after {delay:.2f} s: {state}; stderr: {stderr[-500:]}"
    assert process.returncode == 0 or process.returncode in EXPECTED_EXIT[signame], (
        process.returncode,
        stderr[-500:],
    )
    if process.returncode > 0:
        assert stderr.count("\n") == 1, stderr
        assert stderr.startswith("error: "), stderr
    # The retry finishes the job and leaves nothing behind.
    again = _finish(scenario.args, scenario.root)
    assert again.returncode == 0, again.stderr
    assert scenario.classify() == "new"
    assert not _temporaries(scenario.folders), _temporaries(scenario.folders)
    assert {p: snapshot(p) for p in scenario.inputs} == inputs_before


# The default run: each command once, the three signals in turn.
ROTATION = {name: sorted(SIGNALS)[n % len(SIGNALS)] for n, name in enumerate(sorted(SCENARIOS))}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_signal_leaves_old_or_new_set(name: str, tmp_path: Path, tally: Tally) -> None:
    scenario = SCENARIOS[name](tmp_path / "try")
    _one_try(name, ROTATION[name], 0, scenario, tally)


@pytest.mark.benchmark_suite
@pytest.mark.parametrize("signame", sorted(SIGNALS))
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_signal_twenty_tries(name: str, signame: str, tmp_path: Path, tally: Tally) -> None:
    scenario = SCENARIOS[name](tmp_path / "tries")
    restore = _save(scenario)
    for seed in range(int(os.environ.get("GROUNDKIT_FAULT_TRIES", "20"))):
        _one_try(name, signame, seed, scenario, tally)
        restore()
