"""Deadlines for LangChain, LlamaIndex and Haystack stages: real ``grk`` subprocesses.

A framework stage runs the user's objects as a ``callable`` stage does: the stage is built (the
framework imported, the user's factory called) and searched on its worker thread, each call
with ``timeout`` and the stage's calls together with ``stage_timeout``. A factory or a search
that hangs fails the stage at its deadline (the report is written, exit 1); SIGTERM with a
search in flight stops ``grk`` within 2 s, exit 143, the old report kept byte for byte.
"""

from __future__ import annotations

import signal
import textwrap
from pathlib import Path

import pytest
from tests.cli.test_cli_user_code_deadlines import (
    RUN,
    STOPPED_WITHIN,
    _calls,
    _config,
    _finish,
    _signal_in_flight,
    _state,
    failed_at_deadline,
    old_report,
    workspace,
)

from groundkit.judgments import load_report

pytest.importorskip("langchain_core", reason="the langchain extra is not installed")

__all__ = ["old_report", "workspace"]  # the fixtures, used by name

FRAMEWORK = textwrap.dedent(
    """
    import sys
    import time
    from pathlib import Path

    from langchain_core.retrievers import BaseRetriever


    def _in_flight():
        with Path(__file__).with_name("calls.log").open("a") as log:
            log.write("call\\n")
        Path(__file__).with_name("in-flight").write_text("yes")


    class Hanging(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager=None):
            _in_flight()
            time.sleep(3600)
            return []


    def hanging_retriever():
        return Hanging()


    def hanging_factory():
        _in_flight()
        time.sleep(3600)


    def exiting_factory():
        sys.exit(0)
    """
)


def _framework(folder: Path) -> None:
    (folder / "fw.py").write_text(FRAMEWORK, encoding="utf-8")


@pytest.mark.parametrize("kind", ["langchain", "llamaindex", "haystack"])
def test_a_hanging_factory_fails_the_stage_at_its_timeout(workspace: Path, kind: str) -> None:
    pytest.importorskip({"llamaindex": "llama_index.core", "haystack": "haystack"}.get(kind, "os"))
    _framework(workspace)
    # Building the stage imports the framework too (Haystack takes seconds): a timeout that
    # leaves room for it, and the factory is known to have been entered.
    _config(workspace, f'kind = "{kind}", target = "fw.py:hanging_factory", timeout = 20')
    failed_at_deadline(
        workspace, "building the stage (its factory) did not return within timeout = 20 s"
    )
    assert _calls(workspace) == 1


def test_a_hanging_search_fails_the_stage_at_its_timeout(workspace: Path) -> None:
    _framework(workspace)
    _config(workspace, 'kind = "langchain", target = "fw.py:hanging_retriever", timeout = 1')
    failed_at_deadline(workspace, "search() did not return within timeout = 1 s (a batch of ")
    assert _calls(workspace) == 1  # the first query's call hung; no other was made


def test_stage_timeout_bounds_a_framework_stage(workspace: Path) -> None:
    _framework(workspace)
    settings = 'target = "fw.py:hanging_retriever", timeout = 30, stage_timeout = 1'
    _config(workspace, f'kind = "langchain", {settings}')
    failed_at_deadline(workspace, "the stage's calls ran past stage_timeout = 1 s (in search()")


def test_sys_exit_in_a_factory_is_a_stage_failure(workspace: Path) -> None:
    _framework(workspace)
    _config(workspace, 'kind = "langchain", target = "fw.py:exiting_factory"')
    done = _finish(RUN, workspace)
    assert done.returncode == 1, done.stderr
    assert "error: stage 'hang': " in done.stderr
    assert "Traceback" not in done.stderr
    assert load_report(workspace / "report.json").stage("hang").error is not None


def test_sigterm_stops_a_hanging_framework_search(workspace: Path) -> None:
    _framework(workspace)
    _config(workspace, 'kind = "langchain", target = "fw.py:hanging_retriever"')
    before = _state(workspace)
    took, done = _signal_in_flight(RUN, workspace, signal.SIGTERM)
    assert done.returncode == 143, done.stderr
    assert took < STOPPED_WITHIN
    last = done.stderr.strip().splitlines()[-1]
    assert last == "error: terminated (SIGTERM); the outputs are as they were"
    after = _state(workspace)
    for made in ("calls.log", "in-flight", "fw.py"):
        after.pop(made)
    before.pop("fw.py", None)
    assert after == before  # the old report byte for byte
