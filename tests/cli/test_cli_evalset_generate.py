"""`grk evalset generate` and the model client against a real local HTTP server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.cli._loopback import LoopbackServer

from groundkit.cli import cli
from groundkit.cli.judges._http import ChatClient, ModelEndpointError
from groundkit.judgments import load_judgments

Responder = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


class FakeChatServer(LoopbackServer):
    """An OpenAI-compatible /chat/completions endpoint answering from recorded replies."""

    def __init__(self, responder: Responder) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(length))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                if self.path != "/v1/chat/completions":
                    status, payload = 404, {"error": {"message": f"no route {self.path}"}}
                else:
                    status, payload = responder(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(Handler)


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }


# Recorded replies, keyed by a phrase of the passage (drafting) or of the question (closed book).
DRAFTS = {
    "paid leave": {
        "question": "How many days of paid leave do employees get per year?",
        "quote": "Employees get 25 days of paid leave per year.",
        "answer": "25 days",
    },
    "Managers": {
        "question": "Who approves leave requests in the company?",
        "quote": "Managers approve leave requests.",
        "answer": "managers",
    },
    "Hotels": {
        "question": "What is the hotel cap per night in Berlin?",
        "quote": "Hotels cost at most 150 euros.",
        "answer": "180 euros",
    },  # paraphrased: not in the doc
    "capital": {
        "question": "What is the capital city of France?",
        "quote": "The capital of France is Paris.",
        "answer": "Paris",
    },
}
CLOSED_BOOK = {"capital city of France": "Paris."}


def recorded(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    prompt = body["messages"][0]["content"]
    if "Passage:" in prompt:
        passage = prompt.split("Passage:", 1)[1]
        for phrase, draft in DRAFTS.items():
            if phrase in passage:
                return 200, _completion("```json\n" + json.dumps(draft) + "\n```")
        return 200, _completion("I cannot write a question for this.")
    for phrase, answer in CLOSED_BOOK.items():
        if phrase in prompt:
            return 200, _completion(answer)
    return 200, _completion("I do not know.")


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    with FakeChatServer(recorded) as running:
        yield running


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    (folder / "policies").mkdir(parents=True)
    (folder / "policies" / "leave.md").write_text(
        "Employees get 25 days of paid leave per year.\n\nManagers approve leave requests.\n"
    )
    (folder / "policies" / "travel.md").write_text(
        "Hotels cost at most 180 euros a night in Berlin.\n"
    )
    (folder / "geo.md").write_text("The capital of France is Paris.\n")
    (folder / "empty-ish.md").write_text("Nothing to ask about here at all.\n")
    return folder


def test_generate_end_to_end(
    server: FakeChatServer, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRK_TEST_KEY", "sekret")
    out = tmp_path / "drafts.jsonl"
    rejected = tmp_path / "rejected.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "evalset",
            "generate",
            "--corpus",
            str(corpus),
            "--model",
            "tiny",
            "--base-url",
            server.base_url,
            "--api-key-env",
            "GRK_TEST_KEY",
            "--per-doc",
            "2",
            "--passage-chars",
            "200",
            "--out",
            str(out),
            "--rejected",
            str(rejected),
        ],
    )
    assert result.exit_code == 0, result.output
    # leave.md fits one passage (asked once); travel, geo, empty-ish: once each.
    drafting = [r for r in server.requests if "Passage:" in r["messages"][0]["content"]]
    assert len(drafting) == 4
    assert all(r["model"] == "tiny" for r in server.requests)
    assert server.headers[0]["Authorization"] == "Bearer sekret"
    assert (
        "drafted 2, dropped 1 with a quote not in the document and 1 unusable replies"
        in result.output
    )
    kept = load_judgments(out)
    assert [j.query_id for j in kept] == ["gen-policies-leave-md-1"]
    assert kept[0].meta["reviewed"] is False
    assert kept[0].meta["generator"] == "tiny"
    assert kept[0].meta["set_version"] == 1
    rows = [json.loads(line) for line in rejected.read_text().splitlines()]
    assert rows == [
        {"filter": "general-knowledge", "query_id": "gen-geo-md-1", "reason": rows[0]["reason"]}
    ]
    assert "answered without retrieval" in rows[0]["reason"]
    assert "unresolved-evidence did not run" not in result.output


def test_generate_without_closed_book(server: FakeChatServer, corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "drafts.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "evalset",
            "generate",
            "--corpus",
            str(corpus),
            "--model",
            "tiny",
            "--base-url",
            server.base_url,
            "--no-closed-book",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "general-knowledge did not run" in result.output
    assert len(load_judgments(out)) == 2


def test_http_error_is_one_line_exit_1(corpus: Path, tmp_path: Path) -> None:
    with FakeChatServer(lambda body: (401, {"error": {"message": "invalid api key"}})) as failing:
        result = CliRunner().invoke(
            cli,
            [
                "evalset",
                "generate",
                "--corpus",
                str(corpus),
                "--model",
                "m",
                "--base-url",
                failing.base_url,
                "--out",
                str(tmp_path / "o.jsonl"),
            ],
        )
    assert result.exit_code == 1
    assert "answered HTTP 401: invalid api key" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists()


def test_missing_api_key_variable(
    corpus: Path, server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRK_NOT_SET", raising=False)
    result = CliRunner().invoke(
        cli,
        [
            "evalset",
            "generate",
            "--corpus",
            str(corpus),
            "--model",
            "m",
            "--base-url",
            server.base_url,
            "--api-key-env",
            "GRK_NOT_SET",
        ],
    )
    assert result.exit_code == 2
    assert "GRK_NOT_SET" in result.output


def test_client_errors_and_retries() -> None:
    calls = {"n": 0}

    def flaky(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        calls["n"] += 1
        return (503, {"error": "busy"}) if calls["n"] == 1 else (200, _completion("ok"))

    with FakeChatServer(flaky) as running:
        client = ChatClient(running.base_url, "m", retry_delay=0.0)
        assert client("hi") == "ok"
        assert client.requests == 2
    with (
        FakeChatServer(lambda body: (200, {"unexpected": True})) as odd,
        pytest.raises(ModelEndpointError, match="not a chat completion"),
    ):
        ChatClient(odd.base_url, "m")("hi")
    with FakeChatServer(recorded) as running:
        wrong_path = ChatClient(running.base_url.replace("/v1", "/v2"), "m")
        with pytest.raises(ModelEndpointError, match="HTTP 404: no route /v2/chat/completions"):
            wrong_path("hi")
    closed = FakeChatServer(recorded)
    url = closed.base_url
    closed.httpd.server_close()  # nothing listens on that port any more
    with pytest.raises(ModelEndpointError, match="cannot reach model endpoint"):
        ChatClient(url, "m", retries=0)("hi")


def test_classify_and_filter_with_a_model(server: FakeChatServer, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    rows = [
        {
            "query_id": "a",
            "query": "What is the capital city of France?",
            "gold": [{"doc": "geo.md", "quote": "Paris"}],
            "answer": "Paris",
        },
        {
            "query_id": "b",
            "query": "How many days of paid leave do employees get?",
            "gold": [{"doc": "a.md", "quote": "25 days"}],
            "answer": "25 days",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "kept.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "evalset",
            "filter",
            str(path),
            "-o",
            str(out),
            "--model",
            "m",
            "--base-url",
            server.base_url,
        ],
    )
    assert result.exit_code == 0, result.output
    assert [j.query_id for j in load_judgments(out)] == ["b"]
    typed = CliRunner().invoke(
        cli, ["evalset", "classify", str(path), "--model", "m", "--base-url", server.base_url]
    )
    assert typed.exit_code == 0, typed.output
    # "I do not know." is not a type: the heuristic decides for both.
    assert "refused (heuristic decided): 2" in typed.output
