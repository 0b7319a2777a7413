"""Idle BLAS threads sleep in ``grk``, and the programs a run starts keep the user's environment.

``grk`` sets ``OPENBLAS_THREAD_TIMEOUT`` before numpy is loaded (a sixth of a SciFact run's
processor time was OpenBLAS threads spinning), unless the user set it; a ``--command`` stage's
program gets the environment without it. Checked in a real ``grk`` process: a callable stage
(run inside it) and a command stage (a program it starts) each record what they see.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from tests.cli._process import grk_process

from groundkit.harness import _blas

FACT = "Parental leave lasts sixteen weeks at full pay for every new parent."
# A callable stage: runs inside the grk process.
INSIDE = """
import os, pathlib

def search(query):
    pathlib.Path("inside.json").write_text(repr(os.environ.get("OPENBLAS_THREAD_TIMEOUT")))
    return [{"doc": "leave.md", "text": "Parental leave lasts sixteen weeks"}]
"""
# A command stage: a program the run starts.
OUTSIDE = """
import json, os, pathlib, sys

pathlib.Path("outside.json").write_text(repr(os.environ.get("OPENBLAS_THREAD_TIMEOUT")))
for line in sys.stdin:
    query = json.loads(line)
    hit = {"doc": "leave.md", "text": "Parental leave lasts sixteen weeks"}
    print(json.dumps({"query_id": query["query_id"], "hits": [hit]}))
"""


def _workspace(folder: Path) -> None:
    (folder / "corpus").mkdir()
    (folder / "corpus" / "leave.md").write_text(FACT + "\n", encoding="utf-8")
    line = {
        "query_id": "q-leave",
        "query": "How long is leave?",
        "gold": [{"doc": "leave.md", "quote": FACT}],
    }
    (folder / "judgments.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    (folder / "inside_mod.py").write_text(INSIDE, encoding="utf-8")
    (folder / "outside.py").write_text(OUTSIDE, encoding="utf-8")


def _seen(folder: Path, env: dict[str, str]) -> tuple[str, str]:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(folder / 'outside.py'))}"
    result = grk_process(
        folder,
        "eval",
        "run",
        "--corpus",
        "corpus",
        "--judgments",
        "judgments.jsonl",
        "--resamples",
        "50",
        "--stage",
        "inside=callable:inside_mod.py:search",
        "--command",
        f"outside={command}",
        env={**env, "PYTHONPATH": str(folder)},
    )
    assert result.returncode == 0, result.stderr
    return (
        (folder / "inside.json").read_text(encoding="utf-8"),
        (folder / "outside.json").read_text(encoding="utf-8"),
    )


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != _blas.SPIN_VARIABLE}
    return {**env, "COLUMNS": "200", "NO_COLOR": "1"}


def test_grk_shortens_the_spin_and_its_programs_do_not_inherit_it(tmp_path: Path) -> None:
    _workspace(tmp_path)
    inside, outside = _seen(tmp_path, _environment())
    assert inside == repr(_blas.SPIN_EXPONENT)  # set in the grk process
    assert outside == "None"  # a program it starts gets the user's environment


def test_the_users_own_setting_stands_everywhere(tmp_path: Path) -> None:
    _workspace(tmp_path)
    inside, outside = _seen(tmp_path, {**_environment(), _blas.SPIN_VARIABLE: "7"})
    assert (inside, outside) == ("'7'", "'7'")


def test_a_process_with_numpy_loaded_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    # This process (pytest's) has numpy loaded: a caller's environment is not changed.
    monkeypatch.delenv(_blas.SPIN_VARIABLE, raising=False)
    monkeypatch.setattr(_blas, "_added", [])
    assert "numpy" in sys.modules
    assert _blas.shorten_blas_spin() is False
    assert _blas.SPIN_VARIABLE not in os.environ
    assert _blas.child_environment() is None  # inherited unchanged


def test_the_child_environment_leaves_out_only_what_was_added(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_blas, "_added", [_blas.SPIN_VARIABLE])
    monkeypatch.setenv(_blas.SPIN_VARIABLE, _blas.SPIN_EXPONENT)
    monkeypatch.setenv("GRK_TEST_KEEP", "yes")
    child = _blas.child_environment()
    assert child is not None
    assert _blas.SPIN_VARIABLE not in child
    assert child["GRK_TEST_KEEP"] == "yes"
    assert os.environ[_blas.SPIN_VARIABLE] == _blas.SPIN_EXPONENT  # this process keeps it
    # Changed since (by the user's code in the run): passed on as it is now.
    monkeypatch.setenv(_blas.SPIN_VARIABLE, "9")
    child = _blas.child_environment()
    assert child is not None
    assert child[_blas.SPIN_VARIABLE] == "9"
