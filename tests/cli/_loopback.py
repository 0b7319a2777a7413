"""Servers on loopback for the tests of groundkit's HTTP clients: started and stopped around a
``with`` block, their address known once bound (port 0: any free port).

:class:`LoopbackServer` serves a ``BaseHTTPRequestHandler``; :class:`ScriptedServer` reads
each request and hands the raw connection to a script, so a test can send what no real
server would: a broken status line, a body dripped a byte at a time, a lying length.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BufferedIOBase
from typing import Any, Self


class LoopbackServer:
    """Serves ``handler`` on 127.0.0.1 in a daemon thread while the ``with`` block runs.

    ``stopping`` is set when the block ends: a handler that would go on sending (a drip)
    checks it and returns.
    """

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.stopping = threading.Event()
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root the clients are given."""
        return f"{self.origin}/v1"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


Script = Callable[[BufferedIOBase, threading.Event], None]
"""Writes a reply to the connection; the event is set when the server stops."""


class ScriptedServer(LoopbackServer):
    """Reads each request (any method), counts it, and lets ``script`` write the raw reply.

    The connection is closed after each reply. A client that hangs up mid-reply ends the
    script quietly.

    Attributes:
        requests: Requests read so far.
        headers: The headers of each request, in arrival order.
    """

    def __init__(self, script: Script) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def handle_one_request(self) -> None:
                self.raw_requestline = self.rfile.readline(65537)
                if not self.raw_requestline or not self.parse_request():
                    self.close_connection = True
                    return
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with server.lock:
                    server.requests += 1
                    server.headers.append(dict(self.headers))
                try:
                    script(self.wfile, server.stopping)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: what the test wants
                self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(Handler)


def reply(status: str, headers: list[tuple[str, str]], body: bytes) -> Script:
    """A script sending ``HTTP/1.1 {status}``, ``headers`` and ``body`` as given.

    ``Connection: close`` is added (the server closes each connection after its reply).
    """
    headers = [*headers, ("Connection", "close")]

    def script(out: BufferedIOBase, stopping: threading.Event) -> None:
        head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
        out.write(head.encode("latin-1") + b"\r\n" + body)

    return script


OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
"""A status line and a header, the headers not ended: for scripts to go on from."""


def drip(prefix: bytes, byte: bytes = b" ", every: float = 0.2, longest: float = 30.0) -> Script:
    """``prefix``, then ``byte`` every ``every`` seconds for up to ``longest`` seconds."""

    def script(out: BufferedIOBase, stopping: threading.Event) -> None:
        out.write(prefix)
        end = time.monotonic() + longest
        while time.monotonic() < end and not stopping.wait(every):
            out.write(byte)

    return script


def hold(prefix: bytes, longest: float = 30.0) -> Script:
    """``prefix``, then nothing until the server stops (or ``longest`` seconds)."""

    def script(out: BufferedIOBase, stopping: threading.Event) -> None:
        out.write(prefix)
        stopping.wait(longest)

    return script


def chunked(total: int, chunk: int = 65536) -> Script:
    """A 200 with a chunked body of ``total`` bytes (spaces), no ``Content-Length``."""

    def script(out: BufferedIOBase, stopping: threading.Event) -> None:
        out.write(OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
        for _ in range(total // chunk):
            if stopping.is_set():
                return
            out.write(b"%x\r\n%s\r\n" % (chunk, b" " * chunk))
        out.write(b"0\r\n\r\n")

    return script
