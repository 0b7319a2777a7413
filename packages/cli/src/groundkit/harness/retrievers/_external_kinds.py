"""The kinds outside the harness: an external command and a Python retriever (``callable``).

A ``callable`` stage's code runs on a worker thread of its own, each call with a deadline (see
:class:`Deadlines`): a call that hangs fails the stage instead of the run, and Ctrl-C or
SIGTERM stop the run while it hangs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness.retrievers._builtin import (
    CallableRetriever,
    CommandRetriever,
    object_target,
)
from groundkit.harness.retrievers._deadlines import (
    DeadlineFailed,
    DeadlineRetriever,
    Deadlines,
    for_queries,
)
from groundkit.harness.retrievers._external import load_target, run_command
from groundkit.harness.retrievers._protocol import Query, Retriever, StageContext
from groundkit.harness.run._context import PreparedRun, run_context
from groundkit.harness.run._hits import HitNormalizer, PerQueryHits
from groundkit.harness.run._ranking import RankedRun
from groundkit.harness.run._stage_run import user_failure
from groundkit.judgments import JudgmentError

__all__ = ["CallableStage", "CommandStage", "resolve_retriever_object"]

_STDOUT_HINT = (
    "; the command writes its predictions to standard output, so anything else it prints there "
    "(a log line, a progress message) breaks them: print diagnostics to standard error"
)


class CommandStage:
    """An external program: queries in (a file or stdin), predictions out (a file or stdout).

    Args:
        settings: The command settings.
        context: The stage's context.
    """

    def __init__(self, settings: CommandRetriever, context: StageContext) -> None:
        self.settings = settings
        self.context = context

    def search(self, queries: Sequence[Query], depth: int) -> PreparedRun:
        """Run the program once for the batch and read its predictions.

        Raises:
            StageFailed: The program failed, or wrote lines or hits that cannot be read (the
                message names the line and query).
        """
        stage = self.context.stage
        label = f"<output of stage {stage}>"
        try:
            lines = run_command(
                self.settings,
                stage=stage,
                queries=[(q.query_id, q.text) for q in queries],
                known_queries=self.context.known_queries,
            )
            run = run_context(self.context.run)
            normalizer = HitNormalizer(run.corpus, run.doc_codes, stage, depth, path=label)
            per_query: list[PerQueryHits | None] = []
            for query in queries:
                entry = lines.get(query.query_id)
                per_query.append(
                    None
                    if entry is None
                    else normalizer.normalize(query.query_id, entry[1], line=entry[0])
                )
        except StageFailed:
            raise
        except JudgmentError as error:  # HarnessError included: the command's output is bad
            message = error.message.removeprefix(f"stage {stage!r}: ")
            uses_out = any("{out}" in arg for arg in self.settings.argv)
            if "invalid JSON" in message and not uses_out:
                message += _STDOUT_HINT
            if error.line is not None:
                message = f"line {error.line} of its output: {message}"
            raise StageFailed(stage, message) from error
        return PreparedRun(
            RankedRun.from_lists([q.query_id for q in queries], per_query), normalizer.unlocated
        )


def _takes_no_argument(target: Any) -> bool:
    """A class, or a function that can be called without arguments (and takes no ``*args``)."""
    if inspect.isclass(target):
        return True
    try:
        parameters = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.kind is inspect.Parameter.VAR_KEYWORD
        or (p.kind is not inspect.Parameter.VAR_POSITIONAL and p.default is not p.empty)
        for p in parameters
    )


def resolve_retriever_object(
    target: Any,
    *,
    stage: str,
    what: str = "retriever",
    deadlines: Deadlines | None = None,
) -> Any:
    """What a ``target`` stands for: import a name, call a zero-argument factory once.

    Args:
        target: A ``"module:name"`` or ``"file.py:name"`` string, or the object itself.
        stage: The stage name, for messages.
        what: What the target should be, for messages.
        deadlines: The stage's deadlines, for the factory's call (``None``: called directly).

    Raises:
        HarnessError: The name does not import, or names something that is not callable.
        StageFailed: The factory raised, or ran past its deadline.
    """
    named = load_target(target, stage=stage) if isinstance(target, str) else target
    shown = target if isinstance(target, str) else object_target(target)
    if not inspect.isclass(named) and callable(getattr(named, "search", None)):
        return named
    if callable(named) and _takes_no_argument(named):
        try:
            if deadlines is None:
                made = named()
            else:
                made = deadlines.call(named, what=f"the factory {shown!r}")
        except DeadlineFailed:
            raise
        except (Exception, SystemExit) as error:  # user code
            raise user_failure(stage, f"the factory {shown!r}", error) from error
        if callable(getattr(made, "search", None)) or callable(made):
            return made
        named, shown = made, f"what {shown!r} returned"
    if not callable(named):
        raise HarnessError(
            f"stage {stage!r}: {shown!r} is a {type(named).__name__}, not a {what} (expected a "
            "function, an object with search(queries, depth), or a zero-argument factory of one)"
        )
    return named


class _FunctionRetriever:
    """A plain function as a retriever: ``f(query) -> hits``, or ``f(queries)`` in batch."""

    def __init__(
        self, function: Callable[..., Any], *, batch: bool, stage: str, deadlines: Deadlines
    ) -> None:
        self.function = function
        self.batch = batch
        self.stage = stage
        self.deadlines = deadlines
        # One call per query: the harness times each (per-query latency, not a batch's share).
        self.searches_each_query = not batch

    def _call(self, argument: Any, where: str) -> Any:
        try:
            return self.deadlines.call(self.function, argument, what="the callable", where=where)
        except DeadlineFailed:
            raise
        except (Exception, SystemExit) as error:  # user code
            raise user_failure(self.stage, "the callable", error) from error

    def search(self, queries: Sequence[Query], depth: int) -> list[Any]:
        if not self.batch:
            return [self._call(q.text, for_queries([q])) for q in queries]
        results = self._call([q.text for q in queries], for_queries(queries))
        if isinstance(results, str | bytes | Mapping) or not isinstance(results, Sequence):
            raise StageFailed(
                self.stage,
                f"a batch callable must return a list of hit lists, got {type(results).__name__}",
            )
        if len(results) != len(queries):
            raise StageFailed(
                self.stage,
                f"the batch callable returned {len(results)} hit lists for {len(queries)} queries",
            )
        return list(results)


def CallableStage(settings: CallableRetriever, context: StageContext) -> Retriever:  # noqa: N802
    """The retriever a ``callable`` stage names: the user's object, or a function wrapper.

    An object with ``search`` is used with its optional hooks; its ``search`` and
    ``passages``, a factory and a plain function run on the stage's worker thread with the
    settings' deadlines (:class:`Deadlines`).
    """
    deadlines = Deadlines(context.stage, settings)
    found = resolve_retriever_object(settings.target, stage=context.stage, deadlines=deadlines)
    if callable(getattr(found, "search", None)):
        return DeadlineRetriever(found, deadlines)
    return _FunctionRetriever(found, batch=settings.batch, stage=context.stage, deadlines=deadlines)
