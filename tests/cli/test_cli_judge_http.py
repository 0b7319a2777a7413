"""The relevance judge against a real OpenAI-compatible HTTP server on loopback."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests.cli._loopback import LoopbackServer

from groundkit.cli._errors import InputError, StageFailedError
from groundkit.cli.judges._clients import build_judge_client, http_judge
from groundkit.cli.judges._http import ChatClient
from groundkit.evalset import RelevanceJudge


class JudgeServer(LoopbackServer):
    """Grades passages by a word in them; misbehaves on purpose for some passages.

    ``busy`` passages get 429 then 503 before an answer, ``slow`` ones get no answer before
    the server stops, ``broken`` ones get a body that is not a chat completion.
    """

    def __init__(self, delay: float = 0.05) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.statuses: list[int] = []
        self.busy_seen: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests += 1
                status, payload = server.answer(body["messages"][0]["content"], delay)
                with server.lock:
                    server.statuses.append(status)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout case)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(Handler)

    def answer(self, prompt: str, delay: float) -> tuple[int, Any]:
        passage = prompt.split("Passage:\n", 1)[1].split("\n\nReply with", 1)[0]
        if "busy" in passage:
            with self.lock:
                seen = self.busy_seen[passage] = self.busy_seen.get(passage, 0) + 1
            if seen == 1:
                return 429, {"error": {"message": "slow down"}}
            if seen == 2:
                return 503, {"error": "overloaded"}
        if "slow" in passage:
            self.stopping.wait(30)  # past any client's timeout
        if "broken" in passage:
            return 200, b'{"choices": []}'
        time.sleep(delay)
        grade = 3 if "answer" in passage else 0
        content = json.dumps({"grade": grade, "reason": "by word"})
        return 200, {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100},
        }


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def test_retries_failures_tokens_and_cache(server: JudgeServer, tmp_path: Path) -> None:
    chat = ChatClient(server.base_url, "judge-m", timeout=0.5, retries=2, retry_delay=0.01)
    cache = tmp_path / "judge.jsonl"
    judge = RelevanceJudge(http_judge(chat), model="judge-m", cache=cache, repeats=3, concurrency=2)
    pairs = [("q", f"passage {i} answer") for i in range(6)]
    pairs += [("q", "a busy answer"), ("q", "a slow answer"), ("q", "a broken answer")]
    pairs += [("q", "nothing here")]
    run = judge.judge(pairs)
    by_passage = {p: v for (_, p), v in zip(pairs, run.verdicts, strict=True)}
    assert by_passage["passage 0 answer"].majority == 3
    assert by_passage["nothing here"].majority == 0
    busy = by_passage["a busy answer"]
    assert busy.grades == [3, 3, 3]  # 429 then 503 were retried
    assert 429 in server.statuses
    assert 503 in server.statuses
    slow, broken = by_passage["a slow answer"], by_passage["a broken answer"]
    assert slow.majority is None
    assert len(slow.failures) == 3
    assert all("timed out" in f for f in slow.failures)
    assert broken.majority is None
    assert all("not a chat completion" in f for f in broken.failures)
    assert run.usage.failed == 6
    assert run.usage.calls == 30
    assert run.usage.tokens == 100 * 24
    assert chat.tokens == 100 * 24
    requests = server.requests
    rerun = RelevanceJudge(http_judge(chat), model="judge-m", cache=cache, concurrency=2)
    again = rerun.judge(pairs[:7] + pairs[9:])  # everything that answered
    assert server.requests == requests  # no new call for cached judgments
    assert again.usage.calls == 0
    assert again.usage.cached == 24


class HoldingServer(LoopbackServer):
    """Counts the requests in flight, holding the first ``bound`` until they all are.

    Each of the first ``bound`` requests waits until ``bound`` are in flight (``reached``
    stays true unless a generous wait runs out), then up to ``linger`` seconds more for one
    over the bound: a client that allows more calls in flight has every chance to show it.
    A request leaves the count before its reply is sent, so the client's next request can
    never overlap it in the count. ``most``: the most in flight at once.
    """

    def __init__(self, bound: int, linger: float = 0.3) -> None:
        self.changed = threading.Condition()
        self.arrivals = 0
        self.in_flight = 0
        self.most = 0
        self.reached = True
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                with server.changed:
                    arrival = server.arrivals
                    server.arrivals += 1
                    server.in_flight += 1
                    server.most = max(server.most, server.in_flight)
                    server.changed.notify_all()
                    if arrival < bound:
                        if not server.changed.wait_for(lambda: server.in_flight >= bound, 60):
                            server.reached = False
                        server.changed.wait_for(lambda: server.in_flight > bound, linger)
                    server.in_flight -= 1
                    server.changed.notify_all()
                content = json.dumps({"grade": 3, "reason": "held"})
                data = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(Handler)


@pytest.mark.parametrize("bound", [1, 2, 3])
def test_calls_in_flight_reach_the_bound_and_never_pass_it(bound: int, tmp_path: Path) -> None:
    # Counted, not raced: the server holds the first calls until the bound is reached, and
    # lingers for one more; a correct client never sends it, whatever the load.
    with HoldingServer(bound) as held:
        chat = ChatClient(held.base_url, "m", timeout=120, retries=0)
        judge = RelevanceJudge(
            http_judge(chat), model="m", cache=tmp_path / "c.jsonl", repeats=2, concurrency=bound
        )
        run = judge.judge([("q", f"passage {i}") for i in range(2 * bound + 1)])
        chat.close()
    assert held.most <= bound  # never passed
    assert held.reached  # and reached
    assert held.most == bound
    assert run.usage.failed == 0
    assert held.arrivals == run.usage.calls == 2 * (2 * bound + 1)


def test_unreachable_endpoint_stops_with_an_input_error(tmp_path: Path) -> None:
    closed = JudgeServer()
    url = closed.base_url
    closed.httpd.server_close()
    chat = ChatClient(url, "m", retries=0)
    judge = RelevanceJudge(http_judge(chat), model="m", cache=tmp_path / "c.jsonl")
    with pytest.raises(InputError, match="cannot reach model endpoint"):
        judge.judge([("q", "p")])
    assert not (tmp_path / "c.jsonl").exists()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bogus", "give http, recorded:FILE"),
        ("http", "--model and --base-url are required"),
        ("recorded:/nonexistent/answers.jsonl", "cannot read recorded answers"),
        ("python:no_such_module_x:f", "cannot import no_such_module_x"),
        ("python:json:no_such_function", "has no function"),
    ],
)
def test_bad_judge_specs(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        build_judge_client(
            spec, model=None, base_url=None, api_key_env=None, timeout=5.0, retries=0
        )


class _Recorder(LoopbackServer):
    """A loopback server that records every request it gets, and answers with ``reply``."""

    def __init__(self, reply: tuple[int, dict[str, str]]) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                recorder.seen.append((self.command, self.path, dict(self.headers)))
                status, headers = reply
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self.do_POST()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(Handler)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_the_key_stays_home(status: int) -> None:
    # The judge endpoint redirects to another origin: nothing is sent there, the key least of
    # all, and the error names where the redirect pointed without its path or query.
    with _Recorder((200, {})) as elsewhere:
        target = f"{elsewhere.origin}/steal?token=abc"
        with _Recorder((status, {"Location": target})) as judge:
            chat = ChatClient(f"{judge.origin}/v1", "m", api_key="sk-secret", retries=0)
            with pytest.raises(StageFailedError) as raised:
                chat("hi")
        assert elsewhere.seen == []
    assert [(method, path) for method, path, _ in judge.seen] == [("POST", "/v1/chat/completions")]
    message = str(raised.value)
    assert f"HTTP {status}, a redirect to {elsewhere.origin}" in message
    assert "does not follow redirects" in message
    assert "sk-secret" not in message
    assert "token" not in message
    assert "steal" not in message


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://user:hunter2@127.0.0.1:9/v1", "credentials in the URL"),
        ("http://:sk-key@127.0.0.1:9/v1", "credentials in the URL"),
        ("http://127.0.0.1:9/v1 x", "whitespace or a control character"),
        ("http://127.0.0.1:9/v1\r\nX-Injected: 1", "whitespace or a control character"),
        ("http://127.0.0.1:port/v1", "not a valid URL"),
        ("ftp://127.0.0.1/v1", "not an http(s) URL"),
        ("http:///v1", "not an http(s) URL"),
    ],
)
def test_a_base_url_that_cannot_be_sent_safely_is_refused(url: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)) as raised:
        ChatClient(url, "m")
    text = str(raised.value)
    assert "hunter2" not in text
    assert "sk-key" not in text
    assert "\n" not in text
    assert "\r" not in text
