"""The judge clients the CLI builds from ``--judge``: an endpoint, recorded answers, a function.

``--judge http`` asks an OpenAI-compatible endpoint (``--model``, ``--base-url``) through
:class:`~groundkit.cli.judges._http.ChatClient`: retries with backoff on 429/5xx, timeouts and
transport faults there, concurrency bounded by the judge, ``--timeout`` a deadline for each
call as a whole and ``--judge-deadline`` one for the whole run. A timeout, an HTTP error, a
broken or oversized reply, or one that is not a chat completion fails that call only (it is
listed); an endpoint nothing answers at stops the run with exit 2, since no judgment could be
made. ``--judge recorded:FILE`` replays recorded answers; ``--judge python:MODULE:FUNCTION`` (or
``python:FILE.py:FUNCTION``, found as a ``callable`` stage's target is, the current folder
included) calls ``FUNCTION(query, passage)`` in a thread of its own with ``--timeout`` as each
call's deadline: a call that runs past it fails (it is listed) and is abandoned.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundkit.cli._errors import InputError
from groundkit.cli.judges._cache_dir import judge_cache_dir
from groundkit.cli.judges._http import (
    ChatClient,
    EndpointUnreachableError,
    ModelEndpointError,
    client_from_options,
)
from groundkit.cli.judges._options import judge_options
from groundkit.evalset import (
    EvalSetError,
    JudgeClient,
    RecordedJudge,
    RelevanceJudge,
    callable_judge,
)
from groundkit.evalset.judge import JudgeCallError, JudgeReply, JudgeRequest, JudgeUsage

__all__ = [
    "JudgeChoice",
    "JudgeSettings",
    "build_judge",
    "build_judge_client",
    "choose_client",
    "http_judge",
    "judge_options",
    "usage_line",
]

JudgeChoice = tuple[JudgeClient, str, ChatClient | None]
"""The client, the name it is cached under, and the HTTP client when there is one."""


def http_judge(chat: ChatClient) -> JudgeClient:
    """A judge client over ``chat`` (failed calls become :class:`JudgeCallError`)."""

    def client(request: JudgeRequest) -> JudgeReply:
        try:
            text, tokens = chat.complete(request.prompt)
        except EndpointUnreachableError as error:
            raise InputError(str(error)) from None
        except ModelEndpointError as error:
            raise JudgeCallError(str(error)) from None
        return JudgeReply(text, tokens)

    return client


def build_judge_client(
    spec: str,
    *,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    timeout: float,
    retries: int,
    deadline: float | None = None,
    concurrency: int = 4,
) -> JudgeChoice:
    """The client named by ``--judge``.

    Args:
        spec: ``--judge``: ``http``, ``recorded:FILE``, ``python:MODULE:FUNCTION`` or
            ``python:FILE.py:FUNCTION``.
        model: ``--model`` (``http`` only).
        base_url: ``--base-url`` (``http`` only).
        api_key_env: ``--api-key-env``.
        timeout: ``--timeout``: seconds for each call (``http``: connect to last byte; a
            Python function: its call).
        retries: ``--retries``.
        deadline: ``--judge-deadline``: seconds for all the calls of the run (default: none).
        concurrency: ``--concurrency``: the connections kept open for reuse.

    Raises:
        InputError: An unknown spec, a missing option, an unreadable recorded file or a
            function that cannot be imported.
    """
    if spec == "http":
        chat = client_from_options(
            model,
            base_url,
            api_key_env,
            timeout=timeout,
            required=True,
            retries=retries,
            run_deadline=deadline,
            connections=concurrency,
        )
        assert chat is not None  # required=True raises instead
        return http_judge(chat), f"http:{chat.model}", chat
    if model is not None or base_url is not None:
        raise InputError("--model and --base-url go with --judge http only")
    if spec.startswith("recorded:"):
        path = Path(spec.removeprefix("recorded:"))
        try:
            recorded = RecordedJudge.from_file(path)
        except EvalSetError as error:
            raise InputError(str(error)) from None
        return recorded, f"recorded:{path.name}", None
    if spec.startswith("python:"):
        target = spec.removeprefix("python:")
        return callable_judge(_import(target), timeout=timeout), f"python:{target}", None
    raise InputError(
        f"--judge {spec!r}: give http, recorded:FILE, python:MODULE:FUNCTION or "
        "python:FILE.py:FUNCTION"
    )


def _import(target: str) -> Callable[[str, str], object]:
    """The judge function of ``--judge python:TARGET``, loaded as a ``callable`` stage's is.

    Raises:
        InputError: The target is malformed, does not import, or names no function.
    """
    # The harness's loader (a light module): one rule for every Python target of groundkit.
    from groundkit.harness.retrievers._external import TargetError, import_target

    shown = f"--judge python:{target}"
    where, _, name = target.rpartition(":")
    if not where or not name:
        raise InputError(f"{shown}: give python:MODULE:FUNCTION or python:FILE.py:FUNCTION")
    try:
        function = import_target(target)
    except TargetError as error:
        if error.problem == "import failed":
            raise InputError(f"{shown}: cannot import {error.where}: {error.reason}") from error
        raise InputError(f"{shown}: {error.message}") from error
    if not callable(function):
        raise InputError(f"{shown}: {where} has no function {name!r}")
    return function  # type: ignore[no-any-return]


@dataclass(frozen=True)
class JudgeSettings:
    """The shared judge options of a command, as given."""

    spec: str
    model: str | None
    base_url: str | None
    api_key_env: str | None
    timeout: float
    retries: int
    repeats: int
    concurrency: int
    min_success: float | None = None
    deadline: float | None = None

    @classmethod
    def pop(cls, options: dict[str, Any]) -> JudgeSettings:
        """Take the judge options out of a command's keyword arguments."""
        return cls(
            spec=options.pop("judge_spec"),
            model=options.pop("model"),
            base_url=options.pop("base_url"),
            api_key_env=options.pop("api_key_env"),
            timeout=options.pop("timeout"),
            retries=options.pop("retries"),
            repeats=options.pop("repeats"),
            concurrency=options.pop("concurrency"),
            min_success=options.pop("min_success"),
            deadline=options.pop("judge_deadline"),
        )

    def judge(self, cache: Path) -> RelevanceJudge:
        """The judge these settings name, cached in ``cache`` (see :func:`build_judge`)."""
        return build_judge(self, cache)[0]

    def default_cache(self) -> Path:
        """The judge's own cache, shared by every command that asks this judge.

        One file per judge in :func:`judge_cache_dir`: ``http`` by model name, a recorded
        judge by its file's content, a Python judge by its target and its function's source
        (a changed function starts a new cache, so no answer of the old code is replayed).
        The entries are keyed by model, prompt version, query and passage, as in any cache.

        Raises:
            InputError: The folder cannot be created.
        """
        spec = self.spec
        if spec == "http":
            name, salt = f"http:{self.model or ''}", ""
        elif spec.startswith("recorded:"):
            name, salt = spec, _content_digest(Path(spec.removeprefix("recorded:")))
        else:
            name, salt = spec, _source_digest(spec.removeprefix("python:"))
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[:60] or "judge"
        digest = hashlib.sha256(f"{name}\0{salt}".encode()).hexdigest()[:12]
        folder = judge_cache_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(
                f"cannot create the judges' cache folder {folder}: {error.strerror or error} "
                "(give --cache FILE, or set GROUNDKIT_JUDGE_CACHE_DIR)"
            ) from None
        return folder / f"{slug}-{digest}.jsonl"


def _content_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""  # reading it fails later with its own message


def _source_digest(target: str) -> str:
    """The judge function's source, hashed ("" when it cannot be read: the target alone)."""
    try:
        function = _import(target)
        return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()
    except (InputError, OSError, TypeError):
        return ""


def choose_client(settings: JudgeSettings) -> JudgeChoice:
    """The client of the options (no call is made).

    Raises:
        InputError: See :func:`build_judge_client`.
    """
    return build_judge_client(
        settings.spec,
        model=settings.model,
        base_url=settings.base_url,
        api_key_env=settings.api_key_env,
        timeout=settings.timeout,
        retries=settings.retries,
        deadline=settings.deadline,
        concurrency=settings.concurrency,
    )


def build_judge(
    settings: JudgeSettings, cache: Path, choice: JudgeChoice | None = None
) -> tuple[RelevanceJudge, str, str]:
    """The judge of the options, its name (cache and card key) and its model name.

    Args:
        settings: The options.
        cache: The judge's cache file.
        choice: The client already chosen by :func:`choose_client` (default: choose it).

    Raises:
        InputError: See :func:`build_judge_client`; a cache that is not a judge cache.
    """
    client, name, chat = choose_client(settings) if choice is None else choice
    try:
        judge = RelevanceJudge(
            client,
            model=name,
            cache=cache,
            repeats=settings.repeats,
            concurrency=settings.concurrency,
            min_decided=settings.min_success,
        )
    except EvalSetError as error:
        raise InputError(str(error)) from None
    return judge, name, chat.model if chat is not None else name


def usage_line(usage: JudgeUsage) -> str:
    """Calls, tokens and seconds of a judging run, as every judging command prints them."""
    return (
        f"calls {usage.calls} (cached {usage.cached}, failed {usage.failed}), tokens "
        f"{usage.tokens}, seconds {usage.seconds:.2f}"
    )
