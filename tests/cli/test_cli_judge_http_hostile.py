"""The chat client against hostile and broken endpoints on loopback: each is a failed call
(:class:`ModelEndpointError`) naming its cause, within the deadline, never another exception
and never the key in a message."""

from __future__ import annotations

import gc
import gzip
import json
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from io import BufferedIOBase

import pytest
from tests.cli._loopback import OK_HEAD as HEAD
from tests.cli._loopback import Script, ScriptedServer, chunked, drip, hold, reply

from groundkit.cli._errors import InputError
from groundkit.cli.judges._http import (
    MAX_RESPONSE_BYTES,
    ChatClient,
    EndpointTimeoutError,
    ModelEndpointError,
    client_from_options,
)

KEY = "sk-hostile-0123456789"
COMPLETION = {
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"}}],
    "usage": {"total_tokens": 7},
}


def _json(data: object, *extra: tuple[str, str], status: str = "200 OK") -> Script:
    body = json.dumps(data).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    return reply(status, [*headers, *extra], body)


def _client(
    server: ScriptedServer, timeout: float = 5.0, run_deadline: float | None = None
) -> ChatClient:
    return ChatClient(
        server.base_url, "m", api_key=KEY, timeout=timeout, retries=0, run_deadline=run_deadline
    )


def _fails(script: Script, timeout: float = 5.0) -> tuple[ModelEndpointError, float]:
    """The error one call gets from a server running ``script``, and the seconds it took."""
    with ScriptedServer(script) as server, _client(server, timeout) as chat:
        start = time.monotonic()
        with pytest.raises(ModelEndpointError) as raised:
            chat("hi")
        took = time.monotonic() - start
        assert server.requests == 1
    message = str(raised.value)
    assert KEY not in message
    assert "\n" not in message
    assert "\r" not in message
    return raised.value, took


@pytest.mark.parametrize(
    "script",
    [
        drip(HEAD + b"Content-Length: 100000\r\n\r\n"),  # the body, a byte at a time
        drip(HEAD + b"X-Drip: ", byte=b"a"),  # the headers, a byte at a time
        drip(b"HTTP/1.1 2", byte=b"0"),  # the status line, a byte at a time
        hold(HEAD + b"Content-Length: 100\r\n\r\n{"),  # part of the body, then silence
    ],
    ids=["body", "headers", "status-line", "stall"],
)
def test_a_drip_is_cut_at_the_deadline(script: Script) -> None:
    # Every read gets a byte within 0.2 s, so a per-read timeout of 1 s would never fire: the
    # deadline covers the call as a whole.
    error, took = _fails(script, timeout=1.0)
    assert isinstance(error, EndpointTimeoutError)
    assert "timed out after 1 s" in str(error)
    assert 0.9 <= took <= 5.0


@pytest.mark.parametrize(
    "script",
    [
        hold(HEAD + b"Content-Length: %d\r\n\r\n{" % (10 * 1024 * 1024)),
        chunked(2 * MAX_RESPONSE_BYTES),
    ],
    ids=["content-length", "chunked"],
)
def test_a_reply_over_the_cap_is_refused(script: Script) -> None:
    error, took = _fails(script, timeout=30.0)
    assert "over the 4 MiB cap" in str(error)
    assert took < 15.0  # the declared length is refused before any wait for the body


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (reply("abc", [], b""), "broken HTTP reply"),
        (lambda out, _: out.write(b"SPDY/9 200 OK\r\n\r\n"), "broken HTTP reply"),
        (lambda out, _: out.write(b"\x00\xff garbage\r\n\r\n"), "broken HTTP reply"),
        (reply("200 OK", [("Content-Length", "100")], b'{"choices"'), "broken HTTP reply"),
        (reply("200 OK", [("Content-Length", "12x")], b"{}"), "broken HTTP reply"),
        (reply("200 OK", [("Transfer-Encoding", "chunked")], b"zz\r\n{}\r\n"), "broken HTTP"),
        (reply("200 OK", [("X-Pad", "a" * 1000)] * 200, b""), "broken HTTP reply"),
        (lambda out, _: None, "broken HTTP reply"),  # closed without a word
    ],
    ids=[
        "status-line",
        "protocol",
        "binary",
        "short-body",
        "bad-length",
        "bad-chunk",
        "200KiB-headers",
        "no-reply",
    ],
)
def test_a_broken_http_reply_is_a_failed_call(script: Script, message: str) -> None:
    error, _ = _fails(script)
    assert message in str(error)
    assert not isinstance(error, EndpointTimeoutError)


def test_a_hundred_and_one_headers_are_read() -> None:
    # urllib stopped at 100 headers with an exception of its own (exit 70); httpx reads them.
    headers = [(f"X-H{i}", "v") for i in range(150)]
    body = json.dumps(COMPLETION).encode()
    script = reply("200 OK", [*headers, ("Content-Length", str(len(body)))], body)
    with ScriptedServer(script) as server, _client(server) as chat:
        assert chat.complete("hi") == ("fine", 7)


NESTED = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (reply("200 OK", [("Content-Length", str(len(NESTED)))], NESTED), "nested too deeply"),
        (reply("200 OK", [("Content-Length", "4")], b"\xff\xfe{}"), "not UTF-8 text"),
        (reply("200 OK", [("Content-Length", "5000")], b"9" * 5000), "not JSON"),
        (reply("200 OK", [("Content-Length", "6")], b"{nope}"), "not JSON"),
        (_json([1, 2]), "not a JSON object"),
        (_json({"usage": {}}), "no list of choices"),
        (_json({"choices": {"0": {}}}), "no list of choices"),
        (_json({"choices": []}), "no choice"),
        (_json({"choices": ["text"]}), "the first choice has no message"),
        (_json({"choices": [{"message": None}]}), "the first choice has no message"),
        (_json({"choices": [{"message": {"content": None}}]}), "a reply without text"),
        (_json({"choices": [{"message": {"content": 5}}]}), "a reply without text"),
        (
            reply(
                "200 OK",
                [("Content-Encoding", "gzip"), ("Content-Length", "999")],
                gzip.compress(json.dumps(COMPLETION).encode()).ljust(999, b"\0"),
            ),
            "gzip-encoded reply",
        ),
    ],
    ids=[
        "nested-100000",
        "not-utf8",
        "huge-int",
        "not-json",
        "a-list",
        "no-choices",
        "choices-object",
        "choices-empty",
        "choice-text",
        "message-null",
        "content-null",
        "content-int",
        "gzip",
    ],
)
def test_a_reply_that_is_not_a_chat_completion_is_a_failed_call(
    script: Script, message: str
) -> None:
    error, _ = _fails(script)
    assert message in str(error)


@pytest.mark.parametrize(
    ("tokens", "counted"),
    [(-5, 0), (True, 0), (1.5, 0), (10**13, 0), ("100", 0), (None, 0), (10**12, 10**12), (42, 42)],
)
def test_only_a_plain_token_count_is_counted(tokens: object, counted: int) -> None:
    data = {**COMPLETION, "usage": {"total_tokens": tokens}}
    with ScriptedServer(_json(data)) as server, _client(server) as chat:
        assert chat.complete("hi") == ("fine", counted)
        assert chat.tokens == counted


def test_an_error_reply_is_shown_short_on_one_line_without_the_key() -> None:
    said = {"error": {"message": f"bad key {KEY}\x1b[31m\r\nX-Injected: 1 " + "x" * 5000}}
    error, _ = _fails(_json(said, status="401 Unauthorized"))
    text = str(error)
    assert "answered HTTP 401: bad key [key]?[31m X-Injected: 1 xxx" in text
    assert "\x1b" not in text
    assert len(text) < 400
    nested, _ = _fails(
        reply("500 Oops", [("Content-Length", str(len(NESTED)))], NESTED)
    )  # an error body nested too deeply for json: shown as text, cut short
    assert "answered HTTP 500: [[[[" in str(nested)


def test_the_run_deadline_stops_later_calls_at_once() -> None:
    # The first call answers; the second hangs past the run deadline and fails then; the third
    # is not sent at all.
    def script(out: BufferedIOBase, stopping: threading.Event) -> None:
        if server.requests == 1:
            _json(COMPLETION)(out, stopping)
        else:
            hold(HEAD + b"Content-Length: 100\r\n\r\n")(out, stopping)

    with ScriptedServer(script) as server, _client(server, 30.0, run_deadline=1.0) as chat:
        start = time.monotonic()
        assert chat("first") == "fine"
        with pytest.raises(ModelEndpointError, match="run deadline of 1 s passed during"):
            chat("second")
        assert time.monotonic() - start <= 5.0
        start = time.monotonic()
        with pytest.raises(ModelEndpointError, match="run deadline of 1 s passed before"):
            chat("third")
        assert time.monotonic() - start < 1.0
        assert server.requests == 2


def test_the_run_deadline_is_not_waited_out_by_a_retry_delay() -> None:
    with ScriptedServer(_json({"error": "busy"}, status="503 Busy")) as server:
        chat = ChatClient(server.base_url, "m", retries=5, retry_delay=10.0, run_deadline=2.0)
        start = time.monotonic()
        with chat, pytest.raises(ModelEndpointError, match="run deadline of 2 s passed before"):
            chat("hi")
        assert time.monotonic() - start < 5.0
        assert server.requests == 1


def test_a_timeout_is_retried_and_each_attempt_has_its_deadline() -> None:
    with ScriptedServer(drip(HEAD + b"Content-Length: 100000\r\n\r\n")) as server:
        chat = ChatClient(server.base_url, "m", timeout=0.5, retries=2, retry_delay=0.01)
        start = time.monotonic()
        with chat, pytest.raises(EndpointTimeoutError, match=r"timed out after 0\.5 s"):
            chat("hi")
        assert time.monotonic() - start <= 6.0
        assert server.requests == 3


def test_the_environment_gets_neither_request_nor_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy named by the environment would see the request and its key: it is not used.
    with ScriptedServer(_json(COMPLETION)) as proxy, ScriptedServer(_json(COMPLETION)) as home:
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, proxy.origin)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with _client(home) as chat:
            assert chat("hi") == "fine"
        assert proxy.requests == 0
        assert home.requests == 1
        assert home.headers[0]["Authorization"] == f"Bearer {KEY}"
        assert home.headers[0]["Accept-Encoding"] == "identity"


@pytest.mark.parametrize("key", ["sk-a\nb", "sk a", "sk-\x01", "sk-é"])
def test_a_key_that_cannot_be_sent_is_refused_without_showing_it(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRK_TEST_KEY", key)
    with pytest.raises(InputError, match="--api-key-env GRK_TEST_KEY: the API key") as raised:
        client_from_options("m", "http://127.0.0.1:9/v1", "GRK_TEST_KEY")
    assert key not in str(raised.value)


def test_one_client_from_many_threads_counts_and_closes_cleanly() -> None:
    with ScriptedServer(_json(COMPLETION)) as server, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        chat = _client(server)
        with ThreadPoolExecutor(max_workers=8) as pool:
            replies = list(pool.map(chat.complete, [f"q{i}" for i in range(40)]))
        assert replies == [("fine", 7)] * 40
        assert chat.requests == 40
        assert chat.tokens == 7 * 40
        chat.close()
        chat.close()  # twice is fine
        dropped = _client(server)  # never closed: collected, it closes its connections
        assert dropped("hi") == "fine"
        del dropped
        gc.collect()
    assert not [w for w in seen if issubclass(w.category, ResourceWarning)]
