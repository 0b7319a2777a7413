"""The relevance judge: (query, passage) → grade 0–3 and a short reason, by majority of repeats.

Any client works: a function from a :class:`JudgeRequest` to the model's reply text (or a
:class:`JudgeReply` with its token count). The CLI wraps an OpenAI-compatible endpoint;
:class:`RecordedJudge` replays recorded answers; :func:`callable_judge` wraps any Python
function of ``(query, passage)``. Every finished call is cached on disk
(:class:`~groundkit.evalset.judge._cache.JudgeCache`), so a rerun makes only missing calls.

A call that fails (the client raises :class:`JudgeCallError`, or the reply carries no grade)
counts neither way and is listed; any other exception stops the run (an unreachable endpoint
is not a judgment). A client may also have an ``abandon()`` method: when the run is
interrupted (Ctrl-C, SIGTERM), it is called so that the calls in flight stop being waited for.
The majority of the repeats that answered is their *lower median*: for any threshold t it is
≥ t exactly when more than half of the answers are ≥ t.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset.judge._cache import CachedCall, JudgeCache, call_key, passage_hash
from groundkit.evalset.judge._deadline import (
    WAIT_SLICE,
    CallAbandonedError,
    CallTimeoutError,
    call_with_deadline,
)
from groundkit.evalset.judge._prompt import PROMPT_VERSION, Grade, JudgeReplyError
from groundkit.evalset.judge._prompt import judge_prompt as _prompt
from groundkit.evalset.judge._prompt import parse_reply as _parse
from groundkit.judgments import RunFailure

__all__ = [
    "RELEVANT_GRADE",
    "Grade",
    "JudgeCallError",
    "JudgeClient",
    "JudgeReply",
    "JudgeRequest",
    "JudgeRun",
    "JudgeUsage",
    "JudgingFailedError",
    "PairVerdict",
    "RelevanceJudge",
    "callable_judge",
    "majority_grade",
]

RELEVANT_GRADE = 2
"""The lowest grade counted as relevant: the passage at least partly answers."""


class JudgeCallError(EvalSetError):
    """One judge call failed (a timeout, an HTTP error, a malformed reply): it is listed."""


@dataclass(frozen=True)
class JudgeRequest:
    """What a client is asked: the prompt, and the pair and repeat it is about."""

    query: str
    passage: str
    prompt: str
    repeat: int


@dataclass(frozen=True)
class JudgeReply:
    """A client's reply text and the tokens it cost (0 when unknown)."""

    text: str
    tokens: int = 0


JudgeClient = Callable[[JudgeRequest], "str | JudgeReply"]
"""A judge client: request in, reply text (or :class:`JudgeReply`) out."""


class PairVerdict(BaseModel):
    """The judge's decision on one (query, passage) pair.

    Attributes:
        query: The question.
        passage_hash: SHA-256 of the passage.
        grades: The grade of every repeat that answered, in repeat order.
        reasons: Their reasons.
        failures: Why each failed repeat failed.
        majority: The majority grade (lower median), ``None`` when no repeat answered.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str
    passage_hash: str
    grades: list[int] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    majority: int | None = None

    def relevant(self, threshold: int = RELEVANT_GRADE) -> bool | None:
        """Whether the majority is at least ``threshold`` (``None``: undecided)."""
        return None if self.majority is None else self.majority >= threshold


class JudgeUsage(BaseModel):
    """What judging cost.

    Attributes:
        calls: Calls made to the client in this run (cached ones excluded).
        cached: Calls answered from the cache.
        failed: Calls that failed (counted neither way).
        tokens: Tokens reported by the client for the calls made.
        seconds: Wall-clock seconds of the run.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: int = 0
    cached: int = 0
    failed: int = 0
    tokens: int = 0
    seconds: float = 0.0


class JudgeRun(BaseModel):
    """The verdicts of one run (in the order of the pairs) and its cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdicts: list[PairVerdict]
    usage: JudgeUsage


def majority_grade(grades: Sequence[int]) -> int | None:
    """The lower median of ``grades`` (``None`` when empty): the grade a majority reaches."""
    if not grades:
        return None
    ordered = sorted(grades)
    return ordered[(len(ordered) - 1) // 2]


class _Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = self.cached = self.failed = self.tokens = 0


class JudgingFailedError(RunFailure):
    """The judge decided too few pairs for its result to mean anything (exit 1 on the CLI).

    Every call failing (a wrong key, a model that is down, replies without a grade) would
    otherwise still produce an adjudicated report, a card or a pool estimate made of nothing.
    """


class RelevanceJudge:
    """Grade (query, passage) pairs with a client, cached, by majority of repeats.

    Args:
        client: The judge client.
        model: Model name (part of the cache key; name the recorded set or function too).
        cache: The cache file (``None``: in memory only).
        repeats: Calls per pair (>= 1); the majority of those that answer decides.
        concurrency: Calls in flight at once (>= 1).
        prompt_version: Version of the prompt's wording (part of the cache key).
        min_decided: Share of the distinct pairs of a run the judge must decide (a majority
            grade reached), else :meth:`judge` raises :class:`JudgingFailedError`; ``None``
            (the default): at least one pair; ``0``: no requirement.

    Raises:
        EvalSetError: A bad setting, or a cache file that is not a judge cache.
    """

    def __init__(
        self,
        client: JudgeClient,
        *,
        model: str,
        cache: Path | None = None,
        repeats: int = 3,
        concurrency: int = 4,
        prompt_version: str = PROMPT_VERSION,
        min_decided: float | None = None,
    ) -> None:
        if min_decided is not None and not (
            math.isfinite(min_decided) and 0.0 <= min_decided <= 1.0
        ):
            raise EvalSetError(f"min_decided must be a share in [0, 1], got {min_decided!r}")
        if repeats < 1:
            raise EvalSetError(f"repeats must be at least 1, got {repeats}")
        if concurrency < 1:
            raise EvalSetError(f"concurrency must be at least 1, got {concurrency}")
        if not model.strip():
            raise EvalSetError("the judge's model name is empty")
        self.client = client
        self.model = model
        self.repeats = repeats
        self.concurrency = concurrency
        self.prompt_version = prompt_version
        self.cache = JudgeCache(cache)
        self.min_decided = min_decided

    def judge(self, pairs: Sequence[tuple[str, str]]) -> JudgeRun:
        """Grade every ``(query, passage)`` pair; identical pairs are judged once.

        Raises:
            JudgingFailedError: Fewer pairs decided than ``min_decided`` asks (none at all, by
                default); the answers received stay cached.
            Exception: Whatever the client raises other than :class:`JudgeCallError` (the
                calls finished until then stay cached).
        """
        started = time.perf_counter()
        counter = _Counter()
        keys = [call_key(self.model, self.prompt_version, q, passage_hash(p)) for q, p in pairs]
        unique = dict(zip(keys, pairs, strict=True))
        failures: dict[tuple[str, int], str] = {}
        todo = []
        for key in unique:
            for repeat in range(self.repeats):
                if self.cache.get(key, repeat) is None:
                    todo.append((key, repeat))
                else:
                    counter.cached += 1
        self._run(todo, unique, failures, counter)
        by_key = {key: self._verdict(key, unique[key], failures) for key in unique}
        self._require_decisions(by_key, failures)
        verdicts = [by_key[key] for key in keys]
        usage = JudgeUsage(
            calls=counter.calls,
            cached=counter.cached,
            failed=counter.failed,
            tokens=counter.tokens,
            seconds=round(time.perf_counter() - started, 3),
        )
        return JudgeRun(verdicts=verdicts, usage=usage)

    def _run(
        self,
        todo: Sequence[tuple[str, int]],
        pairs: dict[str, tuple[str, str]],
        failures: dict[tuple[str, int], str],
        counter: _Counter,
    ) -> None:
        if not todo:
            return
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        try:
            futures = [
                pool.submit(self._call, key, repeat, pairs[key], failures, counter)
                for key, repeat in todo
            ]
            pending: set[Future[None]] = set(futures)
            while pending:  # in slices: a signal the kernel gave a worker thread is handled
                done, pending = wait(pending, timeout=WAIT_SLICE, return_when=FIRST_EXCEPTION)
                for future in done:
                    error = future.exception()
                    if error is not None:
                        raise error
        except Exception:  # the client's own error: the calls in flight end (and are cached)
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        except BaseException:  # Ctrl-C or SIGTERM: wait for no call still in flight
            pool.shutdown(wait=False, cancel_futures=True)
            abandon = getattr(self.client, "abandon", None)
            if callable(abandon):
                abandon()
            raise
        pool.shutdown(wait=True)

    def _call(
        self,
        key: str,
        repeat: int,
        pair: tuple[str, str],
        failures: dict[tuple[str, int], str],
        counter: _Counter,
    ) -> None:
        query, passage = pair
        request = JudgeRequest(query, passage, _prompt(query, passage), repeat)
        with counter.lock:
            counter.calls += 1
        try:
            reply = self.client(request)
            answer = reply if isinstance(reply, JudgeReply) else JudgeReply(str(reply))
            with counter.lock:
                counter.tokens += answer.tokens
            grade, reason = _parse(answer.text)
        except (JudgeCallError, JudgeReplyError) as error:
            with counter.lock:
                counter.failed += 1
                failures[(key, repeat)] = str(error)
            return
        self.cache.put(key, repeat, (int(grade), reason, answer.tokens))

    def _require_decisions(
        self, verdicts: Mapping[str, PairVerdict], failures: Mapping[tuple[str, int], str]
    ) -> None:
        pairs = len(verdicts)
        if pairs == 0:
            return
        share = self.min_decided
        needed = 1 if share is None else math.ceil(share * pairs - 1e-9)
        decided = sum(1 for verdict in verdicts.values() if verdict.majority is not None)
        if decided >= needed:
            return
        causes = Counter(failures.values())
        commonest = ""
        if causes:
            text, count = causes.most_common(1)[0]
            commonest = f"; commonest failure ({count} of {causes.total()} failed calls): {text}"
        raise JudgingFailedError(
            f"the judge decided {decided} of {pairs} pairs, {needed} needed{commonest}"[:600]
            + "; the answers received are cached"
        )

    def _verdict(
        self, key: str, pair: tuple[str, str], failures: dict[tuple[str, int], str]
    ) -> PairVerdict:
        answered: list[CachedCall] = []
        failed: list[str] = []
        for repeat in range(self.repeats):
            call = self.cache.get(key, repeat)
            if call is not None:
                answered.append(call)
            else:
                failed.append(failures.get((key, repeat), "no answer"))
        grades = [grade for grade, _, _ in answered]
        return PairVerdict(
            query=pair[0],
            passage_hash=passage_hash(pair[1]),
            grades=grades,
            reasons=[reason for _, reason, _ in answered],
            failures=failed,
            majority=majority_grade(grades),
        )


def _reply_json(grade: object, reason: str) -> str:
    return json.dumps({"grade": grade, "reason": reason})


def callable_judge(
    function: Callable[[str, str], object], *, timeout: float | None = None
) -> JudgeClient:
    """Wrap ``function(query, passage)`` returning a grade, ``(grade, reason)`` or reply text.

    A grade outside 0–3, any other return value, an exception or ``sys.exit`` in the function
    makes that call fail (it is listed); the run goes on. So does a call that runs past
    ``timeout``: Python cannot stop it, so it is abandoned (its thread may run on until the
    process exits, and its answer is discarded).

    Each call runs in a daemon thread of its own, so that a function that hangs neither
    outlives the deadline nor keeps the process from stopping on Ctrl-C or SIGTERM. When a
    :class:`RelevanceJudge` run is interrupted, it calls the client's ``abandon()``: the calls
    in flight stop being waited for, and the client refuses any later call (build a new one
    to judge again).

    Args:
        function: The judge function.
        timeout: Seconds a call may take (``None``: no limit).

    Raises:
        EvalSetError: ``timeout`` is not a positive number of seconds.
    """
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise EvalSetError(f"the judge's timeout must be positive seconds, got {timeout!r}")
    return _FunctionJudge(function, timeout)


class _FunctionJudge:
    """The client :func:`callable_judge` returns."""

    def __init__(self, function: Callable[[str, str], object], timeout: float | None) -> None:
        self.function = function
        self.timeout = timeout
        self._cancel = threading.Event()

    def abandon(self) -> None:
        """Stop waiting for the calls in flight, and refuse later ones (both raise).

        For good: a call that a worker thread had taken up just before, but had not started,
        must not start waiting afterwards (the interrupted run would wait for it to end).
        """
        self._cancel.set()

    def __call__(self, request: JudgeRequest) -> str:
        if self._cancel.is_set():
            raise CallAbandonedError("the judge function was abandoned (the run was interrupted)")
        try:
            value = call_with_deadline(
                self.function,
                request.query,
                request.passage,
                timeout=self.timeout,
                what="judge function",
                cancel=self._cancel,
            )
        except CallTimeoutError as error:
            raise JudgeCallError(f"judge function timed out after {error.seconds:g} s") from None
        except CallAbandonedError:
            raise  # the run was interrupted: not a failed call
        except (Exception, SystemExit) as error:  # the user's code: this call failed, listed
            what = (
                f"called sys.exit({error.code!r})"
                if isinstance(error, SystemExit)
                else f"raised {type(error).__name__}: {error}"
            )
            raise JudgeCallError(f"judge function {what}"[:300]) from error
        if isinstance(value, str):
            return value
        if isinstance(value, tuple) and len(value) == 2:
            grade, reason = value
            return _reply_json(grade, str(reason))
        if isinstance(value, int) and not isinstance(value, bool):
            return _reply_json(value, "")
        raise JudgeCallError(f"judge function returned {type(value).__name__}, not a grade")
