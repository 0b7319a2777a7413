"""The hostile-input and fault suite: shared data, state snapshots and the case tally.

Every case runs a real `grk` command (through ``click.testing`` or a subprocess) and checks:
the exit code, a one-line ``error: ...`` message naming the place (file, line or id), no
traceback, and the state before and after of every input and output (nothing lost, nothing
mixed, no temporary left behind). Each case is also tallied (refused cleanly, accepted,
traceback, loss) into ``test-artifacts/hostile/``; the session prints the totals.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli

DOCUMENTS = {
    "refunds.md": "Refunds\n\nThe refund window is thirty days.\n\nAsk the front desk.\n",
    "leave.md": "Leave\n\nEveryone gets twenty-five days of annual leave.\n",
    "travel.md": "Travel\n\nTrain tickets are booked through the travel desk.\n",
    "pay.md": "Pay\n\nSalaries are paid on the last working day of the month.\n",
}
JUDGMENTS = [
    {
        "query_id": "refund-window",
        "query": "How long is the refund window?",
        "gold": [{"doc": "refunds.md", "quote": "The refund window is thirty days."}],
    },
    {
        "query_id": "annual-leave",
        "query": "How many days of annual leave?",
        "gold": [{"doc": "leave.md", "quote": "Everyone gets twenty-five days of annual leave."}],
    },
    {
        "query_id": "train-tickets",
        "query": "Who books train tickets?",
        "gold": [
            {"doc": "travel.md", "quote": "Train tickets are booked through the travel desk."}
        ],
    },
    {
        "query_id": "pay-day",
        "query": "When are salaries paid?",
        "gold": [
            {"doc": "pay.md", "quote": "Salaries are paid on the last working day", "grade": 2}
        ],
    },
]
FAST = ("--resamples", "20")


def jsonl(records: Iterable[Any]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


@dataclass
class Dataset:
    """A small corpus folder and judgments file under one root."""

    root: Path
    corpus: Path
    judgments: Path


def make_dataset(root: Path) -> Dataset:
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    for name, text in DOCUMENTS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    judgments = root / "judgments.jsonl"
    judgments.write_text(jsonl(JUDGMENTS), encoding="utf-8")
    return Dataset(root, corpus, judgments)


@pytest.fixture
def dataset(tmp_path: Path) -> Dataset:
    return make_dataset(tmp_path / "data")


@pytest.fixture(scope="session")
def old_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run's outputs (report, items, HTML), made once: copy them in as 'old'."""
    root = tmp_path_factory.mktemp("old-run")
    data = make_dataset(root / "data")
    out = root / "out"
    out.mkdir()
    result = CliRunner().invoke(
        cli,
        [
            "eval", "run", "--corpus", str(data.corpus), "--judgments", str(data.judgments),
            "--report", str(out / "run.json"), "--html", str(out / "run.html"), *FAST,
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


# --- state --------------------------------------------------------------------------------

State = dict[str, Any]


def snapshot(path: Path) -> Any:
    """A path's full state: bytes of a file, every entry of a folder, a link's target."""
    try:
        path.lstat()
    except FileNotFoundError:
        return None
    except OSError as error:  # a name too long, a folder in the way...
        return ("unreachable", error.errno)
    if path.is_symlink():
        return ("link", str(path.readlink()))
    if not path.exists():
        return None
    if path.is_file():
        return ("file", path.read_bytes())
    if not path.is_dir():
        return ("special", path.stat().st_mode)
    entries: dict[str, Any] = {}
    for folder, dirnames, filenames in os.walk(path):
        for name in sorted(dirnames + filenames):
            item = Path(folder) / name
            key = item.relative_to(path).as_posix()
            if item.is_symlink():
                entries[key] = ("link", str(item.readlink()))
            elif item.is_dir():
                entries[key] = ("dir",)
            elif item.is_file():
                entries[key] = ("file", item.read_bytes())
            else:
                entries[key] = ("special",)
    return ("dir", entries)


def states(paths: Iterable[Path]) -> dict[Path, Any]:
    return {path: snapshot(path) for path in paths}


# --- the tally ----------------------------------------------------------------------------


class Tally:
    """Counts this worker's cases into the session's tally folder (see tests/conftest.py)."""

    def __init__(self, worker: str) -> None:
        folder = os.environ.get("GROUNDKIT_HOSTILE_TALLY")
        self.path = None if folder is None else Path(folder) / f"{worker}.jsonl"

    def record(self, suite: str, outcome: str) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"suite": suite, "outcome": outcome}) + "\n")


@pytest.fixture(scope="session")
def tally(request: pytest.FixtureRequest) -> Tally:
    # The xdist worker's id, or "main" when the suite runs in one process.
    worker = getattr(request.config, "workerinput", {}).get("workerid", "main")
    return Tally(worker)


# --- running a case -------------------------------------------------------------------------


def grk(*args: str | Path, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, [os.fspath(a) for a in args], input=input)


_UNSAFE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)


def unsafe_characters(text: str) -> list[str]:
    """Control, bidi-override and zero-width characters in ``text`` (as escapes)."""
    return sorted({f"U+{ord(c):04X}" for c in _UNSAFE.findall(text)})


def _traceback(result: Result) -> bool:
    unexpected = result.exception is not None and not isinstance(result.exception, SystemExit)
    return unexpected or "Traceback" in result.output


def _names(folder: Path) -> list[str]:
    return sorted(entry.name for entry in folder.iterdir())


def _folders(paths: Iterable[Path]) -> list[Path]:
    return list(dict.fromkeys(p.parent for p in paths if p.parent.is_dir()))


def check_case(
    tally: Tally,
    suite: str,
    args: Sequence[str | Path],
    *,
    inputs: Sequence[Path] = (),
    outputs: Sequence[Path] = (),
    exit_code: int | Collection[int] = 2,
    place: str | Sequence[str] = (),
    run: Callable[..., Result] = grk,
) -> Result:
    """Run one case and check it; the outcome is tallied before any assertion fails.

    A refusal (exit 2) must leave every input and output exactly as it was and no new entry
    in their folders; a success must leave every input as it was. ``exit_code`` may be a set
    of acceptable codes (a harmless variant may be accepted or refused, but a refusal is still
    one clean line). No output may carry a raw control, bidi or zero-width character: a
    value from a file is shown escaped.
    """
    allowed = {exit_code} if isinstance(exit_code, int) else set(exit_code)
    watched = [*inputs, *outputs]
    before = states(watched)
    listing = {folder: _names(folder) for folder in _folders(watched)}
    result = run(*args)
    after = states(watched)
    code = result.exit_code
    changed = [p for p in inputs if after[p] != before[p]]
    if code != 0:
        changed += [p for p in outputs if after[p] != before[p]]
        changed += [folder for folder, names in listing.items() if _names(folder) != names]
    raw = unsafe_characters(result.output)
    if _traceback(result):
        tally.record(suite, "traceback")
    elif changed:
        tally.record(suite, "loss")
    elif raw:
        tally.record(suite, "raw control character")
    elif code in allowed and code != 0:
        tally.record(suite, "refused cleanly")
    elif code in allowed:
        tally.record(suite, "accepted")
    else:
        tally.record(suite, f"wrong exit {code}")
    assert not _traceback(result), result.output
    assert code in allowed, result.output
    assert not changed, f"changed: {changed}"
    assert not raw, f"raw characters {raw} in {result.output!r}"
    if code != 0:
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, result.output
        assert lines[0].startswith("error: "), lines[0]
        for needle in [place] if isinstance(place, str) else place:
            assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return result
