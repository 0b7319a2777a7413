"""Retrievers outside the harness: running a command (subprocess), importing a Python target."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from groundkit.evalset.judge import wait_slices
from groundkit.harness._blas import child_environment
from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness.retrievers._builtin import CommandRetriever
from groundkit.harness.retrievers._predictions import read_predictions_jsonl

__all__ = ["TargetError", "import_target", "load_target", "run_command"]

_TAIL_LINES = 5
_TAIL_CHARS = 600


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    lines = text.splitlines()[-_TAIL_LINES:]
    return "\n".join(lines)[-_TAIL_CHARS:]


def _substitute(argv: Sequence[str], queries_path: str, output_path: str) -> list[str]:
    return [arg.replace("{in}", queries_path).replace("{out}", output_path) for arg in argv]


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    # The command may have started children of its own: end the whole process group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()


def _communicate(
    process: subprocess.Popen[bytes], payload: bytes | None, timeout: float | None
) -> tuple[bytes, bytes]:
    """``process.communicate`` in slices (:func:`wait_slices`) until ``timeout`` has passed.

    The kernel may hand Ctrl-C or SIGTERM to another thread than the main one; a single long
    ``communicate`` would then run Python's handler only when the command ends. Calling it
    again after a slice's timeout is what ``subprocess`` allows (the input is sent once).

    Raises:
        subprocess.TimeoutExpired: ``timeout`` seconds passed (the command is still running).
    """
    for length in wait_slices(timeout):
        try:
            return process.communicate(input=payload, timeout=length)
        except subprocess.TimeoutExpired:
            payload = None  # sent (or being sent) by the first call
    assert timeout is not None  # only a finite wait runs out of slices
    raise subprocess.TimeoutExpired(process.args, timeout)


def run_command(
    config: CommandRetriever,
    *,
    stage: str,
    queries: Sequence[tuple[str, str]],
    known_queries: Mapping[str, bool],
) -> dict[str, tuple[int, Any]]:
    """Run a command retriever and read its predictions.

    The command runs without a shell, in its own process group (killed whole on timeout),
    with ``{in}``/``{out}`` substituted (see :class:`CommandRetriever`).

    Args:
        config: The command settings.
        stage: Stage name, for messages.
        queries: ``(query_id, query)`` pairs to send.
        known_queries: Every judged query id, mapped to whether it is answerable.

    Returns:
        ``{query_id: (line, raw hits)}`` as in :func:`read_predictions_jsonl`.

    Raises:
        StageFailed: The program is missing, exits non-zero, times out, writes nothing or
            writes something that is not predictions.
    """
    payload = "".join(
        json.dumps({"query_id": qid, "query": text}, ensure_ascii=False) + "\n"
        for qid, text in queries
    ).encode("utf-8")
    uses_in = any("{in}" in arg for arg in config.argv)
    uses_out = any("{out}" in arg for arg in config.argv)
    with tempfile.TemporaryDirectory(prefix="groundkit-command-") as tmp:
        queries_path = Path(tmp) / "queries.jsonl"
        output_path = Path(tmp) / "predictions.jsonl"
        queries_path.write_bytes(payload)
        argv = _substitute(config.argv, str(queries_path), str(output_path))
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL if uses_in else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=config.cwd,
                env=child_environment(),
                start_new_session=True,
            )
        except OSError as error:
            raise StageFailed(
                stage, f"cannot start {argv[0]!r}: {error.strerror or error}"
            ) from None
        try:
            stdout, stderr = _communicate(process, None if uses_in else payload, config.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            _, stderr = process.communicate()
            raise StageFailed(
                stage,
                f"the command timed out after {config.timeout:g} s",
                stderr_tail=_tail(stderr),
            ) from None
        except BaseException:
            _kill_group(process)
            process.wait()
            raise
        if process.returncode != 0:
            raise StageFailed(
                stage,
                f"the command exited with status {process.returncode}",
                stderr_tail=_tail(stderr),
            )
        if not uses_out:
            output_path.write_bytes(stdout)
        if not output_path.is_file() or not output_path.read_bytes().strip():
            where = "to {out}" if uses_out else "to standard output"
            raise StageFailed(
                stage,
                f"the command exited 0 but wrote no predictions {where}",
                stderr_tail=_tail(stderr),
            )
        # Garbage on the command's output is the command failing, like a non-zero exit: the
        # command kind turns the reader's error into a failed stage (exit 1, report written).
        return read_predictions_jsonl(
            output_path,
            stage=stage,
            known_queries=known_queries,
            label=f"<output of stage {stage}>",
        )


class TargetError(HarnessError):
    """A ``"module:name"`` or ``"file.py:name"`` target that cannot be loaded.

    Its message names no stage: :func:`load_target` adds the stage, other callers (the CLI's
    ``--judge python:``) a prefix of their own.

    Attributes:
        where: The module or file, as given.
        problem: ``"format"``, ``"file not found"``, ``"import failed"`` or ``"no such name"``.
        reason: For ``"import failed"``, the exception that stopped the import, as text.
    """

    where: str = ""
    problem: str = ""
    reason: str = ""


def _target_error(message: str, where: str, problem: str, reason: str = "") -> TargetError:
    error = TargetError(message)
    error.where, error.problem, error.reason = where, problem, reason
    return error


def import_target(target: str) -> Any:
    """Import the object named ``"package.module:name"`` or ``"path/to/file.py:name"``.

    The one rule of every Python target groundkit loads (a ``callable`` stage, a framework
    adapter, a rerank scoring function, ``--judge python:``). A module is imported as usual
    and, when it is not found so, from the current folder (``grk`` is a console script, whose
    ``sys.path`` lacks it; the folder is added at the end, so nothing installed is shadowed). A
    file (relative to the current folder) is imported under a private module name derived from
    its path.

    Raises:
        TargetError: The module or file cannot be imported, or has no such name (the user's
            exception is kept as the cause, for ``--debug``).
    """
    where, _, name = target.rpartition(":")
    if not where or not name:
        raise _target_error(f"{target!r} is not MODULE:NAME or FILE.py:NAME", target, "format")
    try:
        module = _import_file(where) if where.endswith(".py") else _import_module(where)
    except TargetError:
        raise
    except (Exception, SystemExit) as error:  # importing runs the user's module
        hint = " (is it installed, or on PYTHONPATH?)" if isinstance(error, ImportError) else ""
        reason = f"{type(error).__name__}: {error}{hint}"
        raise _target_error(
            f"cannot import {where!r}: {reason}", where, "import failed", reason
        ) from error
    if not hasattr(module, name):
        raise _target_error(f"{where!r} has no function {name!r}", where, "no such name")
    return getattr(module, name)


def _import_file(where: str) -> ModuleType:
    file = Path(where)
    if not file.is_file():
        raise _target_error(f"target file not found: {where}", where, "file not found")
    digest = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:12]
    module_name = f"_groundkit_callable_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise _target_error(f"cannot import {where}", where, "import failed")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _import_module(where: str) -> ModuleType:
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as error:
        here = str(Path.cwd())
        if error.name != where.partition(".")[0] or "" in sys.path or here in sys.path:
            raise
    sys.path.append(here)  # the user's module beside where grk runs, as ``python -m`` finds it
    importlib.invalidate_caches()
    return importlib.import_module(where)


def load_target(target: str, *, stage: str) -> Any:
    """:func:`import_target` for a stage: its errors name the stage.

    Raises:
        HarnessError: The module or file cannot be imported, or has no such name (the user's
            exception is kept as the cause, for ``--debug``).
    """
    try:
        return import_target(target)
    except TargetError as error:
        raise HarnessError(f"stage {stage!r}: {error.message}") from error.__cause__
