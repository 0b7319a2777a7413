"""Deadlines for calls into the user's code (``callable`` stages and the frameworks).

Every call of a stage runs on the stage's one worker thread (:class:`UserCodeThread`): the
objects a factory made are used on the thread that made them, a call past its deadline fails
the stage (Python cannot stop it: it is abandoned), and Ctrl-C or SIGTERM stop the run while
it hangs.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

from groundkit.evalset.judge import CallTimeoutError, UserCodeThread
from groundkit.harness._errors import StageFailed
from groundkit.harness.retrievers._builtin import TargetSettings
from groundkit.harness.retrievers._protocol import Query, Retriever, StageContext

__all__ = [
    "DeadlineFailed",
    "DeadlineRetriever",
    "Deadlines",
    "build_with_deadlines",
    "for_queries",
]


class DeadlineFailed(StageFailed):
    """A call of a callable stage ran past a deadline (a stage failure, not the user's error)."""


class Deadlines:
    """A callable stage's deadlines: ``timeout`` for each call, ``stage_timeout`` for all.

    Every call runs on the stage's one worker thread (the factory's objects are used on the
    thread that made them). ``stage_timeout`` counts the seconds spent in the stage's budgeted
    calls (the factory, ``search``, ``passages``), not the harness's own work between them;
    the evidence hooks the harness calls later, while scoring, have ``timeout`` only.

    Args:
        stage: The stage name.
        settings: The stage's settings (``timeout``, ``stage_timeout``).
    """

    def __init__(self, stage: str, settings: TargetSettings) -> None:
        self.stage = stage
        self.timeout = float(settings.timeout)
        limit = settings.stage_timeout
        self.stage_timeout = None if limit is None else float(limit)
        self.spent = 0.0
        self.thread = UserCodeThread(f"groundkit-stage-{stage}")

    def call(
        self,
        function: Callable[..., Any],
        *args: Any,
        what: str,
        where: str = "",
        budgeted: bool = True,
    ) -> Any:
        """``function(*args)`` on the stage's thread; what it raises propagates unchanged.

        Args:
            function: The user's code.
            *args: Its arguments.
            what: The call, for the message (``"the callable"``).
            where: What it was called for, for the message (``" (query 'q1')"``).
            budgeted: The call counts towards ``stage_timeout``.

        Raises:
            StageFailed: The call ran past ``timeout`` or the stage's ``stage_timeout`` (it is
                abandoned: Python cannot stop it, and its result is discarded), or the stage's
                ``stage_timeout`` was spent before it (it is not made).
        """
        left = None
        if budgeted and self.stage_timeout is not None:
            left = self.stage_timeout - self.spent
            if left <= 0:
                raise DeadlineFailed(self.stage, self._past_stage_timeout(what, where))
        per_call = left is None or self.timeout <= left
        start = time.monotonic()
        try:
            return self.thread.call(
                function, *args, timeout=self.timeout if per_call else left, what=what
            )
        except CallTimeoutError:
            if per_call:
                message = f"{what} did not return within timeout = {self.timeout:g} s{where}"
            else:
                message = self._past_stage_timeout(what, where)
            raise DeadlineFailed(self.stage, message) from None
        finally:
            if budgeted:
                self.spent += time.monotonic() - start

    def _past_stage_timeout(self, what: str, where: str) -> str:
        return (
            f"the stage's calls ran past stage_timeout = {self.stage_timeout:g} s "
            f"(in {what}{where})"
        )


def for_queries(queries: Sequence[Any]) -> str:
    """The queries a call was for, as a message names them."""
    if len(queries) == 1:
        first = queries[0]
        return f" (query {getattr(first, 'query_id', first)!r})"
    return f" (a batch of {len(queries)} queries)"


class DeadlineRetriever:
    """A user's retriever object whose methods run on the stage's thread, with the deadlines.

    ``search`` and ``passages`` count towards ``stage_timeout``; the other methods (the
    evidence hooks, ``usage``, ``run_info``) have ``timeout`` only. Other attributes
    (``searches_each_query``, ``encoder_max_tokens``) are the object's own. What a method
    raises propagates unchanged (the harness names it).
    """

    def __init__(self, retriever: Any, deadlines: Deadlines) -> None:
        self._retriever = retriever
        self._deadlines = deadlines

    def search(self, queries: Sequence[Query], depth: int) -> Any:
        return self._deadlines.call(
            self._retriever.search, queries, depth, what="search()", where=for_queries(queries)
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in {"_retriever", "_deadlines"}:
            raise AttributeError(name)  # copy and pickle probes; not set yet
        value = getattr(self._retriever, name)
        if not inspect.isroutine(value):
            return value
        deadlines, budgeted = self._deadlines, name == "passages"

        def on_stage_thread(*args: Any, **kwargs: Any) -> Any:
            bound = functools.partial(value, *args, **kwargs)
            return deadlines.call(bound, what=f"{name}()", budgeted=budgeted)

        return on_stage_thread


def build_with_deadlines(
    build: Callable[[Any, StageContext], Retriever], settings: TargetSettings, context: StageContext
) -> Retriever:
    """A framework stage built and searched on its worker thread, with the deadlines.

    ``build`` (the adapter: it imports the framework and calls the user's factory) runs as one
    call with ``timeout``; the adapter's ``search`` and hooks then run as a callable object's
    do (:class:`DeadlineRetriever`). What they raise propagates unchanged.
    """
    deadlines = Deadlines(context.stage, settings)
    built = deadlines.call(build, settings, context, what="building the stage (its factory)")
    guarded: Retriever = DeadlineRetriever(built, deadlines)
    return guarded
