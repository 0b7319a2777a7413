"""A client for OpenAI-compatible chat endpoints, over httpx.

It POSTs ``{"model", "messages", "temperature"}`` as JSON to ``{base_url}/chat/completions`` and
returns the first choice's message text. Any server speaking that protocol works: a hosted API,
a local llama.cpp / vLLM / Ollama server. The evalset library only sees a ``prompt -> reply``
callable, so it never depends on this module.

What an endpoint, hostile or broken, cannot do:

* **Take the key elsewhere.** A redirect is never followed (``follow_redirects=False``): a 3xx
  is an error naming only the origin it pointed to, and nothing is sent there. The client
  ignores the environment (``trust_env=False``): no proxy from ``HTTP(S)_PROXY``/``ALL_PROXY``
  and no ``~/.netrc`` entry sees the request or its key (certificates are checked against
  certifi's bundle: ``SSL_CERT_FILE`` is ignored too). A base URL with credentials
  (``user:password@``), whitespace or control characters is refused; no message shows
  credentials, a query, a redirect's path or the key.
* **Hold a call forever.** Each call has one deadline, ``timeout`` seconds for connecting,
  sending, the headers and the whole body: every socket operation waits at most the time left
  (:class:`_Deadlines`) and the body is checked between chunks, so a server dripping a byte at
  a time fails the call with :class:`EndpointTimeoutError`. ``run_deadline`` bounds all the
  calls of one client together.
* **Exhaust memory.** A body over :data:`MAX_RESPONSE_BYTES`, declared or streamed, fails the
  call; the body is never decompressed (``Accept-Encoding: identity``).
* **Crash the run.** A malformed status line, a short body, a bad chunked encoding, oversized
  headers, JSON nested too deeply, a body not UTF-8 or not a chat completion: a failed call
  naming its cause (:class:`ModelEndpointError`), never an internal error. A token count that
  is not a plain integer in ``[0, 10**12]`` counts 0.

Why httpx, not urllib: see the comment on the dependency in ``packages/cli/pyproject.toml``.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import urllib.parse
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Self

import httpcore
import httpx

from groundkit.cli._errors import InputError, StageFailedError

__all__ = [
    "MAX_RESPONSE_BYTES",
    "MAX_TOKENS",
    "ChatClient",
    "EndpointTimeoutError",
    "EndpointUnreachableError",
    "ModelEndpointError",
    "client_from_options",
]

MAX_RESPONSE_BYTES = 4 * 1024 * 1024
"""The largest reply body read (4 MiB; a chat completion is a few KiB): a longer one fails."""

MAX_TOKENS = 10**12
"""The largest ``usage.total_tokens`` counted; anything else not a plain integer >= 0 counts 0."""

_ERROR_BODY_BYTES = 64 * 1024  # what is read of an error reply, for its message
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_SHOWN_BODY = 200
_KEEPALIVE = 16  # connections kept open for reuse by default
_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    # A compressed reply would be decompressed past the size cap before it is counted.
    "Accept-Encoding": "identity",
}


class ModelEndpointError(StageFailedError):
    """The model endpoint could not be reached or answered with an error (exit code 1)."""


class EndpointUnreachableError(ModelEndpointError):
    """Nothing answered at the endpoint (refused, no such host), after the retries."""


class EndpointTimeoutError(ModelEndpointError):
    """The endpoint did not answer within the timeout, after the retries."""


class _RetryableError(Exception):
    """A failed attempt worth another one; ``error`` is raised when none is left."""

    def __init__(self, error: ModelEndpointError) -> None:
        super().__init__(str(error))
        self.error = error


def _printable(text: str) -> str:
    """``text`` on one line, other control characters (terminal escapes) shown as ``?``."""
    return "".join(c if c.isprintable() else "?" for c in " ".join(text.split()))


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, without credentials, path or query."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "an unparsable URL"
    return _printable(f"{parts.scheme or '?'}://{host}{port}")


def _checked_base_url(base_url: str) -> str:
    """The base URL, refused when it is not a plain http(s) URL (credentials never shown)."""
    shown = _origin(base_url)
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in base_url):
        raise InputError(f"--base-url for {shown} contains whitespace or a control character")
    try:
        parsed = urllib.parse.urlsplit(base_url)
        _ = parsed.port  # a non-numeric port raises here
    except ValueError:
        raise InputError(f"--base-url is not a valid URL ({shown})") from None
    if parsed.scheme not in {"http", "https"} or not parsed.hostname:
        example = "e.g. http://127.0.0.1:8080/v1"
        raise InputError(f"--base-url {shown} is not an http(s) URL ({example})")
    if parsed.username is not None or parsed.password is not None:
        raise InputError(
            f"--base-url {shown}: credentials in the URL (user:password@) are not sent; "
            "give the key in an environment variable named by --api-key-env"
        )
    try:
        httpx.URL(base_url)
    except httpx.InvalidURL:
        raise InputError(f"--base-url is not a valid URL ({shown})") from None
    return base_url


class _Deadlines(httpcore.NetworkBackend):
    """httpcore's sockets, each operation bounded by the deadline of the calling thread's call.

    httpx applies its read timeout to each socket read, so a server sending a byte just
    before each timeout would hold a call forever, in the headers as in the body. Here every
    connect, read and write waits at most the time left to the call (:meth:`until`), and
    raises httpcore's timeout of that operation once none is left. The deadline is per thread:
    a sync httpx call does its I/O in the thread that makes it. (No Unix socket is used.)
    """

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()
        self._local = threading.local()

    @contextmanager
    def until(self, deadline: float) -> Iterator[None]:
        """Bound the I/O of this thread by ``deadline`` (``time.monotonic()``) in the block."""
        previous = getattr(self._local, "deadline", None)
        self._local.deadline = deadline
        try:
            yield
        finally:
            self._local.deadline = previous

    def bound(self, timeout: float | None, expired: type[Exception]) -> float | None:
        """``timeout`` cut to the time left; ``expired`` raised when none is left."""
        deadline: float | None = getattr(self._local, "deadline", None)
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise expired("the call's deadline passed")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        """A TCP connection, made within the time left."""
        timeout = self.bound(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _BoundedStream(stream, self)


class _BoundedStream(httpcore.NetworkStream):
    """A connection whose reads and writes wait at most the time left to the call."""

    def __init__(self, inner: httpcore.NetworkStream, deadlines: _Deadlines) -> None:
        self._inner = inner
        self._deadlines = deadlines

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Read within the time left."""
        return self._inner.read(max_bytes, self._deadlines.bound(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Write within the time left."""
        self._inner.write(buffer, self._deadlines.bound(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        """Close the connection."""
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        """The TLS handshake, within the time left."""
        timeout = self._deadlines.bound(timeout, httpcore.ConnectTimeout)
        return _BoundedStream(
            self._inner.start_tls(ssl_context, server_hostname, timeout), self._deadlines
        )

    def get_extra_info(self, info: str) -> Any:
        """As the wrapped stream."""
        return self._inner.get_extra_info(info)


class _BoundedTransport(httpx.HTTPTransport):
    """httpx's transport over a connection pool whose sockets keep the call's deadline.

    The pool bounds no calls in flight (``max_connections=None``): the caller does (the judge's
    ``--concurrency``), and a smaller pool would make calls queue for a connection, spending
    their deadline waiting. ``keepalive`` connections (the judge passes its concurrency) stay
    open for reuse. httpx takes no network backend, so the pool it built is replaced (httpx
    keeps it in ``_pool`` from 0.18 to 0.28; ``httpx<1`` is required).
    """

    def __init__(self, deadlines: _Deadlines, keepalive: int) -> None:
        ssl_context = httpx.create_ssl_context(trust_env=False)
        super().__init__(verify=ssl_context, trust_env=False, retries=0)
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=None,
            max_keepalive_connections=keepalive,
            keepalive_expiry=5.0,
            network_backend=deadlines,
        )


class ChatClient:
    """Ask a chat model one prompt at a time.

    Args:
        base_url: Endpoint root, e.g. ``http://127.0.0.1:8080/v1``.
        model: Model name sent with each request.
        api_key: Sent as ``Authorization: Bearer <key>`` when given.
        timeout: Seconds for each attempt of a call, from connecting to the reply's last byte.
        retries: Extra attempts after a timeout, a transport fault or HTTP 429/5xx.
        retry_delay: Seconds before the first retry (doubled each time).
        run_deadline: Seconds for all the calls of this client, counted from its first call;
            a call after that fails at once, one in flight fails then (default: no limit).
        connections: Connections kept open for reuse (size it to the calls in flight).

    Attributes:
        requests: Number of requests sent so far (retries included).
        tokens: Tokens the server reported (``usage.total_tokens``) for the replies so far.

    One client may be called from several threads at once: the counters are locked and one
    ``httpx.Client`` (thread-safe) is shared, so connections are reused across calls (a TLS
    handshake per call would be wasted). It is made on the first call; :meth:`close` (or the
    ``with`` block, or the client's garbage collection) closes it.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        retries: int = 2,
        retry_delay: float = 1.0,
        run_deadline: float | None = None,
        connections: int = _KEEPALIVE,
    ) -> None:
        base_url = _checked_base_url(base_url)
        if not model.strip():
            raise InputError("--model is empty")
        if not (math.isfinite(timeout) and timeout > 0):
            raise InputError(f"--timeout must be positive, got {timeout}")
        if run_deadline is not None and not (math.isfinite(run_deadline) and run_deadline > 0):
            raise InputError(f"--judge-deadline must be positive, got {run_deadline}")
        if api_key is not None and not all(0x20 < ord(c) < 0x7F for c in api_key):
            raise InputError("the API key contains whitespace, a control or a non-ASCII character")
        self.url = base_url.rstrip("/") + "/chat/completions"
        # What messages print: the origin and path, never a query (it may carry a key).
        self.shown = _origin(self.url) + _printable(urllib.parse.urlsplit(self.url).path)
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.retry_delay = retry_delay
        self.run_deadline = run_deadline
        self.connections = max(1, connections)
        self.requests = 0
        self.tokens = 0
        self._lock = threading.Lock()
        self._deadlines = _Deadlines()
        self._http: httpx.Client | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._run_started: float | None = None

    def __call__(self, prompt: str) -> str:
        """Send ``prompt`` as one user message; return the reply text.

        Raises:
            ModelEndpointError: As :meth:`complete`.
        """
        return self.complete(prompt)[0]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections (a later call opens new ones)."""
        with self._lock:
            finalizer, self._finalizer, self._http = self._finalizer, None, None
        if finalizer is not None:
            finalizer()

    def complete(self, prompt: str) -> tuple[str, int]:
        """Send ``prompt`` as one user message; return the reply text and its token count.

        Retries (with a doubling delay) follow a timeout, a transport fault (refused or broken
        connection, malformed response) or HTTP 429/5xx.

        Raises:
            ModelEndpointError: Unreachable endpoint, HTTP error, timeout, run deadline passed,
                a reply too large or not a chat completion (the message names the URL and what
                went wrong).
        """
        request = {"model": self.model, "messages": [{"role": "user", "content": prompt}]}
        body = json.dumps({**request, "temperature": 0}).encode("utf-8")
        headers = dict(_HEADERS)
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        run_end = self._run_end()
        delay = self.retry_delay
        for attempt in range(self.retries + 1):
            try:
                return self._attempt(body, headers, run_end)
            except _RetryableError as failure:
                if attempt == self.retries:
                    raise failure.error from None
            if run_end is not None and time.monotonic() + delay >= run_end:
                raise self._run_over("before the retry")
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _run_end(self) -> float | None:
        if self.run_deadline is None:
            return None
        with self._lock:
            if self._run_started is None:
                self._run_started = time.monotonic()
            return self._run_started + self.run_deadline

    def _run_over(self, when: str) -> ModelEndpointError:
        deadline = f"the run deadline of {self.run_deadline:g} s"
        return ModelEndpointError(f"model endpoint {self.shown}: {deadline} passed {when}")

    def _attempt(
        self, body: bytes, headers: dict[str, str], run_end: float | None
    ) -> tuple[str, int]:
        """One request: the reply, or a :class:`_RetryableError` or final error."""
        now = time.monotonic()
        if run_end is not None and now >= run_end:
            raise self._run_over("before this call: not sent")
        deadline = now + self.timeout if run_end is None else min(now + self.timeout, run_end)
        with self._lock:
            self.requests += 1
        try:
            status, payload, location = self._exchange(body, headers, deadline)
        except httpx.TimeoutException:
            if run_end is not None and deadline >= run_end:
                raise self._run_over("during the call") from None
            message = f"model endpoint {self.shown} timed out after {self.timeout:g} s"
            raise _RetryableError(EndpointTimeoutError(message)) from None
        except httpx.ConnectError as error:
            message = f"cannot reach model endpoint {self.shown}: {self._said(error)}"
            raise _RetryableError(EndpointUnreachableError(message)) from None
        except httpx.TransportError as error:  # a malformed reply, a connection broken off
            message = f"model endpoint {self.shown} sent a broken HTTP reply: {self._said(error)}"
            raise _RetryableError(ModelEndpointError(message)) from None
        except httpx.HTTPError as error:
            message = f"model endpoint {self.shown} failed: {self._said(error)}"
            raise ModelEndpointError(message) from None
        if 300 <= status < 400:
            raise ModelEndpointError(_redirect_message(self.url, self.shown, status, location))
        if not 200 <= status < 300:
            detail = self._said(_server_message(payload))
            failure = ModelEndpointError(
                f"model endpoint {self.shown} answered HTTP {status}"
                + (f": {detail}" if detail else "")
            )
            if status in _RETRY_STATUSES:
                raise _RetryableError(failure)
            raise failure
        return self._content(payload)

    def _session(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                client = httpx.Client(
                    transport=_BoundedTransport(self._deadlines, self.connections),
                    follow_redirects=False,
                    trust_env=False,
                )
                self._http = client
                self._finalizer = weakref.finalize(self, client.close)
            return self._http

    def _exchange(
        self, body: bytes, headers: dict[str, str], deadline: float
    ) -> tuple[int, bytes, str | None]:
        """Status, body (capped) and ``Location`` of one request finished by ``deadline``."""
        client = self._session()
        with self._deadlines.until(deadline):
            left = max(deadline - time.monotonic(), 0.001)
            with client.stream(
                "POST", self.url, content=body, headers=headers, timeout=httpx.Timeout(left)
            ) as response:
                status = response.status_code
                if 300 <= status < 400:
                    return status, b"", response.headers.get("Location")
                ok = 200 <= status < 300
                limit = MAX_RESPONSE_BYTES if ok else _ERROR_BODY_BYTES
                return status, self._read_body(response, deadline, limit, strict=ok), None

    def _read_body(
        self, response: httpx.Response, deadline: float, limit: int, *, strict: bool
    ) -> bytes:
        """The body, checked against the deadline between chunks and capped at ``limit``.

        Past ``limit`` a strict read fails the call; any other read keeps the first ``limit``
        bytes (the start of an error reply is enough for its message).
        """
        too_large = ModelEndpointError(
            f"model endpoint {self.shown} sent a reply over the {limit // 1024 // 1024} MiB "
            "cap on a reply's size"
        )
        declared = response.headers.get("Content-Length")
        if strict and declared is not None and declared.strip().isdigit() and int(declared) > limit:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_raw():
            size += len(chunk)
            if size > limit:
                if strict:
                    raise too_large
                chunks.append(chunk[: len(chunk) - (size - limit)])
                break
            chunks.append(chunk)
            if time.monotonic() >= deadline:
                raise httpx.ReadTimeout("the call's deadline passed between two chunks")
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if strict and encoding not in {"", "identity"}:
            raise ModelEndpointError(
                f"model endpoint {self.shown} sent a {self._said(encoding)}-encoded reply; "
                "identity was asked (groundkit does not decompress replies)"
            )
        return b"".join(chunks)

    def _said(self, what: object) -> str:
        """What a server or a library said, safe to print: one line, short, no key in it."""
        text = str(what) or type(what).__name__
        if self.api_key:
            text = text.replace(self.api_key, "[key]")
        return _printable(text)[:_SHOWN_BODY]

    def _content(self, payload: bytes) -> tuple[str, int]:
        reason: str | None
        try:
            data: Any = json.loads(payload.decode("utf-8"))
        except UnicodeDecodeError:
            reason = "not UTF-8 text"
        except RecursionError:
            reason = "JSON nested too deeply"
        except ValueError as error:  # JSONDecodeError; an integer too long to convert
            reason = f"not JSON: {error}"
        else:
            reason = _not_chat(data)
        if reason is not None:
            shown = self._said(payload.decode("utf-8", errors="replace"))
            raise ModelEndpointError(
                f"model endpoint {self.shown} sent a reply that is not a chat completion "
                f"({self._said(reason)}): {shown!r}"
            )
        content = data["choices"][0]["message"].get("content")
        if not isinstance(content, str):
            raise ModelEndpointError(f"model endpoint {self.shown} sent a reply without text")
        usage = data.get("usage")
        tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
        count = tokens if type(tokens) is int and 0 <= tokens <= MAX_TOKENS else 0
        with self._lock:
            self.tokens += count
        return content, count


def _not_chat(data: Any) -> str | None:
    """Why ``data`` is not a chat completion with a first message (``None``: it is one)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    choices = data.get("choices")
    if not isinstance(choices, list):
        return "no list of choices"
    if not choices:
        return "no choice"
    if not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
        return "the first choice has no message"
    return None


def _server_message(body: bytes) -> str:
    """What an error reply says: its JSON's ``error.message`` or ``error``, else its text."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        error = json.loads(text).get("error")
    except (ValueError, RecursionError, AttributeError):  # not JSON, or not an object
        return text
    if isinstance(error, dict):
        error = error.get("message")
    return error if isinstance(error, str) else text


def _redirect_message(url: str, shown: str, status: int, location: str | None) -> str:
    try:
        target = _origin(urllib.parse.urljoin(url, location)) if location else "nowhere given"
    except ValueError:
        target = "an unparsable URL"
    return (
        f"model endpoint {shown} answered HTTP {status}, a redirect to {target}: groundkit "
        "does not follow redirects (the request and its key stay with the URL given); give "
        "the final URL as --base-url"
    )


def client_from_options(
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    *,
    timeout: float = 120.0,
    required: bool = False,
    retries: int = 2,
    run_deadline: float | None = None,
    connections: int = _KEEPALIVE,
) -> ChatClient | None:
    """Build a client from the ``--model/--base-url/--api-key-env`` options (or ``None``).

    Args:
        model: ``--model``.
        base_url: ``--base-url``.
        api_key_env: ``--api-key-env``: the environment variable holding the key.
        timeout: Seconds per attempt of a call (see :class:`ChatClient`).
        required: Whether a missing model is an error rather than ``None``.
        retries: Extra attempts after a timeout, a transport fault or HTTP 429/5xx.
        run_deadline: Seconds for all the calls of the client (default: no limit).
        connections: Connections kept open for reuse.

    Raises:
        InputError: Only one of model and base URL given, a model required but missing, the
            API key variable not set, or a base URL or key that cannot be sent safely.
    """
    if model is None and base_url is None:
        if required:
            raise InputError("--model and --base-url are required")
        return None
    if model is None or base_url is None:
        raise InputError("--model and --base-url go together: give both")
    api_key = None
    if api_key_env is not None:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise InputError(f"--api-key-env {api_key_env}: that environment variable is not set")
    try:
        return ChatClient(
            base_url,
            model,
            api_key=api_key,
            timeout=timeout,
            retries=retries,
            run_deadline=run_deadline,
            connections=connections,
        )
    except InputError as error:
        if api_key_env is not None and "API key" in str(error):
            raise InputError(f"--api-key-env {api_key_env}: {error}") from None
        raise
