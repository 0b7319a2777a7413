"""`grk eval calibrate --judge http` against hostile endpoints on loopback, as a user runs it.

Each misbehaviour is a failed call (exit 1, one line naming the cause) or bad input (exit 2,
one line): never an internal error (exit 70), never a traceback, never the key or the
credentials of a URL in the output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.cli._loopback import OK_HEAD as HEAD
from tests.cli._loopback import Script, ScriptedServer, chunked, drip, hold, reply

from groundkit.cli import cli

KEY = "sk-cli-secret-4242"
GRADE = json.dumps({"grade": 3, "reason": "on topic"})
NESTED = b"[" * 100_000 + b"]" * 100_000


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(
        cli, ["eval", "demo", "--no-dense", "--resamples", "200", "--out", str(out / "d")]
    )
    assert result.exit_code == 0, result.output
    return out / "d" / "report.json"


def _grk(demo: Path, tmp: Path, base_url: str, *extra: str) -> tuple[int, str, str, float]:
    """Calibrate a copy of the demo report on two hits, one call each; code, out, err, secs."""
    report = tmp / "report.json"
    report.write_bytes(demo.read_bytes())
    command = [
        sys.executable, "-m", "groundkit.cli", "eval", "calibrate", str(report),
        "--judge", "http", "--model", "m", "--base-url", base_url, "--api-key-env",
        "GRK_TEST_KEY", "--n-pos", "1", "--n-neg", "1", "--repeats", "1", "--retries", "0",
        *extra,
    ]  # fmt: skip
    env = {**os.environ, "GRK_TEST_KEY": KEY}
    start = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    took = time.monotonic() - start
    assert done.returncode != 70, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert KEY not in done.stdout + done.stderr
    return done.returncode, done.stdout, done.stderr, took


def _answer(tokens: object = 10) -> Script:
    body = json.dumps(
        {"choices": [{"message": {"content": GRADE}}], "usage": {"total_tokens": tokens}}
    ).encode()
    return reply("200 OK", [("Content-Length", str(len(body)))], body)


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (drip(HEAD + b"Content-Length: 100000\r\n\r\n"), "timed out after 1 s"),
        (drip(HEAD + b"X-Drip: ", byte=b"a"), "timed out after 1 s"),
        (hold(HEAD + b"Content-Length: %d\r\n\r\n" % (10 * 1024 * 1024)), "4 MiB cap"),
        (chunked(8 * 1024 * 1024), "4 MiB cap"),
        (reply("abc", [], b""), "illegal status line"),
        (reply("200 OK", [("Content-Length", "100")], b"{}"), "broken HTTP reply"),
        (reply("200 OK", [("Transfer-Encoding", "chunked")], b"zz\r\n"), "broken HTTP reply"),
        (reply("200 OK", [("Content-Length", str(len(NESTED)))], NESTED), "nested too deeply"),
        (reply("200 OK", [("Content-Length", "3")], b"\xff{}"), "not UTF-8"),
    ],
    ids=[
        "drip-body",
        "drip-headers",
        "content-length-10MiB",
        "chunked-oversize",
        "status-line",
        "short-body",
        "bad-chunk",
        "nested-100000",
        "not-utf8",
    ],
)
def test_a_broken_reply_fails_the_calls_in_one_line(
    demo: Path, tmp_path: Path, script: Script, message: str
) -> None:
    with ScriptedServer(script) as server:
        code, _out, err, took = _grk(demo, tmp_path, server.base_url, "--timeout", "1")
        assert server.requests == 2
    assert code == 1, err
    assert message in err
    assert "commonest failure" in err
    assert len(err.strip().splitlines()) == 1
    assert took <= 20.0  # start-up included; each call ends at its 1 s deadline


@pytest.mark.parametrize(
    ("script", "tokens"),
    [
        (_answer(-5), "tokens 0"),
        (_answer(10**15), "tokens 0"),
        (_answer(True), "tokens 0"),
        (_answer(10), "tokens 20"),
    ],
    ids=["negative", "huge", "bool", "plain"],
)
def test_a_token_count_that_is_not_one_counts_zero(
    demo: Path, tmp_path: Path, script: Script, tokens: str
) -> None:
    with ScriptedServer(script) as server:
        code, out, err, _ = _grk(demo, tmp_path, server.base_url)
    assert code == 0, err
    assert tokens in out


def test_a_hundred_and_one_headers_are_an_answer(demo: Path, tmp_path: Path) -> None:
    body = json.dumps({"choices": [{"message": {"content": GRADE}}]}).encode()
    headers = [*((f"X-H{i}", "v") for i in range(101)), ("Content-Length", str(len(body)))]
    with ScriptedServer(reply("200 OK", headers, body)) as server:
        code, out, err, _ = _grk(demo, tmp_path, server.base_url)
    assert code == 0, err
    assert "calls 2 (cached 0, failed 0)" in out


def test_a_redirect_elsewhere_sends_nothing_there(demo: Path, tmp_path: Path) -> None:
    with ScriptedServer(_answer()) as elsewhere:
        target = f"{elsewhere.origin}/steal?token=abc"
        moved = reply("302 Found", [("Location", target), ("Content-Length", "0")], b"")
        with ScriptedServer(moved) as server:
            code, _out, err, _ = _grk(demo, tmp_path, server.base_url)
            assert server.requests == 2
        assert elsewhere.requests == 0
    assert code == 1, err
    assert f"HTTP 302, a redirect to {elsewhere.origin}: groundkit does not follow" in err
    assert "steal" not in err
    assert "token" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("base_url", "message"),
    [
        ("http://user:hunter2@127.0.0.1:9/v1", "credentials in the URL"),
        ("http://127.0.0.1:9/v1 x", "whitespace or a control character"),
        ("http://127.0.0.1:9/v1\r\nX-Injected: 1", "whitespace or a control character"),
    ],
    ids=["credentials", "space", "crlf"],
)
def test_a_base_url_that_cannot_be_sent_is_exit_2(
    demo: Path, tmp_path: Path, base_url: str, message: str
) -> None:
    code, out, err, _ = _grk(demo, tmp_path, base_url)
    assert code == 2, err
    assert message in err
    assert "hunter2" not in out + err
    assert "X-Injected" not in out + err
    assert len(err.strip().splitlines()) == 1


def test_the_judge_deadline_ends_the_run(demo: Path, tmp_path: Path) -> None:
    # Each call could take 60 s; the run may take 1 s: the call in flight fails then, the next
    # is not sent.
    with ScriptedServer(hold(HEAD + b"Content-Length: 100\r\n\r\n")) as server:
        code, _out, err, took = _grk(
            demo, tmp_path, server.base_url,
            "--timeout", "60", "--judge-deadline", "1", "--concurrency", "1",
        )  # fmt: skip
        assert server.requests == 1
    assert code == 1, err
    assert "the run deadline of 1 s passed" in err
    assert len(err.strip().splitlines()) == 1
    assert took <= 20.0


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_judge_deadline_that_is_not_a_positive_number_is_exit_2(
    demo: Path, tmp_path: Path, value: str
) -> None:
    code, _out, err, _ = _grk(demo, tmp_path, "http://127.0.0.1:9/v1", "--judge-deadline", value)
    assert code == 2, err
    assert "--judge-deadline" in err
