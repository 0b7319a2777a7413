"""A minimal client for OpenAI-compatible chat endpoints (standard library only).

It POSTs ``{"model", "messages", "temperature"}`` as JSON to ``{base_url}/chat/completions`` and
returns the first choice's message text. Any server speaking that protocol works: a hosted API,
a local llama.cpp / vLLM / Ollama server. The evalset library only sees a ``prompt -> reply``
callable, so it never depends on this module.

The key never leaves the origin it was given for: a redirect is not followed (urllib would
re-send the request, ``Authorization`` included, to wherever ``Location`` points, turning the
POST into a GET); it is an error naming only the origin it pointed to. A base URL carrying
credentials (``user:password@``) or whitespace is refused, and no URL is printed with them.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from groundkit.cli._errors import InputError, StageFailedError

__all__ = [
    "ChatClient",
    "EndpointTimeoutError",
    "EndpointUnreachableError",
    "ModelEndpointError",
    "client_from_options",
]

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_SHOWN_BODY = 200


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Hand every 3xx back as an ``HTTPError`` instead of following it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# No redirect handler that follows, no proxy handler reading credentials from a URL.
_OPENER = urllib.request.build_opener(_RefuseRedirects())


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, without credentials, path or query."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "an unparsable URL"
    return f"{parts.scheme or '?'}://{host}{port}"


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
        raise InputError(
            f"--base-url {shown} is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)"
        )
    if parsed.username is not None or parsed.password is not None:
        raise InputError(
            f"--base-url {shown}: credentials in the URL (user:password@) are not sent; "
            "give the key in an environment variable named by --api-key-env"
        )
    return base_url


class ModelEndpointError(StageFailedError):
    """The model endpoint could not be reached or answered with an error (exit code 1)."""


class EndpointUnreachableError(ModelEndpointError):
    """Nothing answered at the endpoint (refused, no such host), after the retries."""


class EndpointTimeoutError(ModelEndpointError):
    """The endpoint did not answer within the timeout, after the retries."""


def _server_message(body: bytes) -> str:
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return " ".join(text.split())[:_SHOWN_BODY]
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return " ".join(error["message"].split())[:_SHOWN_BODY]
        if isinstance(error, str):
            return " ".join(error.split())[:_SHOWN_BODY]
    return " ".join(text.split())[:_SHOWN_BODY]


class ChatClient:
    """Ask a chat model one prompt at a time.

    Args:
        base_url: Endpoint root, e.g. ``http://127.0.0.1:8080/v1``.
        model: Model name sent with each request.
        api_key: Sent as ``Authorization: Bearer <key>`` when given.
        timeout: Seconds to wait for each reply.
        retries: Extra attempts after a timeout, a refused connection or HTTP 429/5xx.
        retry_delay: Seconds before the first retry (doubled each time).

    Attributes:
        requests: Number of requests sent so far (retries included).
        tokens: Tokens the server reported (``usage.total_tokens``) for the replies so far.

    One client may be called from several threads at once (the counters are locked).
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
    ) -> None:
        base_url = _checked_base_url(base_url)
        if not model.strip():
            raise InputError("--model is empty")
        if timeout <= 0:
            raise InputError(f"--timeout must be positive, got {timeout}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        # What messages print: the origin and path, never a query (it may carry a key).
        self.shown = _origin(self.url) + urllib.parse.urlsplit(self.url).path
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.retry_delay = retry_delay
        self.requests = 0
        self.tokens = 0
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        """Send ``prompt`` as one user message; return the reply text.

        Raises:
            ModelEndpointError: As :meth:`complete`.
        """
        return self.complete(prompt)[0]

    def complete(self, prompt: str) -> tuple[str, int]:
        """Send ``prompt`` as one user message; return the reply text and its token count.

        Retries (with a doubling delay) follow a timeout, a refused connection or HTTP 429/5xx.

        Raises:
            ModelEndpointError: Unreachable endpoint, HTTP error, timeout, or a reply that is not
                a chat completion (the message names the URL and what went wrong).
        """
        body = json.dumps(
            {
                "model": self.model,
                "messages": [{"role": "user", "content": prompt}],
                "temperature": 0,
            }
        ).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        delay = self.retry_delay
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            with self._lock:
                self.requests += 1
            try:
                with _OPENER.open(request, timeout=self.timeout) as response:
                    payload = response.read()
            except urllib.error.HTTPError as error:
                if 300 <= error.code < 400:
                    message = _redirect_message(self.url, self.shown, error)
                    raise ModelEndpointError(message) from None
                detail = _server_message(error.read())
                if error.code in _RETRY_STATUSES and not last:
                    time.sleep(delay)
                    delay *= 2
                    continue
                raise ModelEndpointError(
                    f"model endpoint {self.shown} answered HTTP {error.code}"
                    + (f": {detail}" if detail else "")
                ) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                reason = getattr(error, "reason", error)
                if not last:
                    time.sleep(delay)
                    delay *= 2
                    continue
                if isinstance(reason, TimeoutError):
                    raise EndpointTimeoutError(
                        f"model endpoint {self.shown} timed out after {self.timeout:g} s"
                    ) from None
                raise EndpointUnreachableError(
                    f"cannot reach model endpoint {self.shown}: {reason}"
                ) from None
            return self._content(payload)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _content(self, payload: bytes) -> tuple[str, int]:
        try:
            data: Any = json.loads(payload.decode("utf-8"))
            content = data["choices"][0]["message"]["content"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, IndexError, TypeError):
            shown = " ".join(payload.decode("utf-8", errors="replace").split())[:_SHOWN_BODY]
            raise ModelEndpointError(
                f"model endpoint {self.shown} sent a reply that is not a chat completion: {shown!r}"
            ) from None
        if not isinstance(content, str):
            raise ModelEndpointError(f"model endpoint {self.shown} sent a reply without text")
        usage = data.get("usage") if isinstance(data, dict) else None
        tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
        count = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0
        with self._lock:
            self.tokens += count
        return content, count


def _redirect_message(url: str, shown: str, error: urllib.error.HTTPError) -> str:
    location = error.headers.get("Location") if error.headers is not None else None
    target = _origin(urllib.parse.urljoin(url, location)) if location else "nowhere given"
    return (
        f"model endpoint {shown} answered HTTP {error.code}, a redirect to {target}: groundkit "
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
) -> ChatClient | None:
    """Build a client from the ``--model/--base-url/--api-key-env`` options (or ``None``).

    Raises:
        InputError: Only one of model and base URL given, a model required but missing, or the
            API key variable not set.
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
    return ChatClient(base_url, model, api_key=api_key, timeout=timeout)
