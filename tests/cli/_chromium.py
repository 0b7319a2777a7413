"""Headless Chromium for the HTML page tests: find the browser, load a page, collect errors.

Shared by every test of a generated page (the report, the sweep): the ``browser`` fixture in
``conftest.py`` skips cleanly when Chromium is not installed.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
)
_PROTOCOL_TIMEOUT = 30.0


def chromium() -> str | None:
    """The Chromium binary, or ``None`` when it is not installed."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@dataclass
class Loaded:
    """What the browser saw of one page."""

    dom: str
    errors: list[str]
    facts: dict[str, Any]
    screenshot: bytes | None
    seconds: float


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe (fds 3 and 4).

    No websocket, no port: the protocol's JSON messages, NUL-separated, on two pipes. Console
    errors come from three events: ``Runtime.exceptionThrown`` (uncaught JS errors),
    ``Runtime.consoleAPICalled`` of type error/assert, and ``Log.entryAdded`` at level error
    (CSP violations, failed loads).
    """

    def __init__(
        self, binary: str, profile: Path, *, width: int = 1280, height: int = 4000
    ) -> None:
        self.width, self.height = width, height
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def arrange_fds() -> None:  # runs in the child before exec
            read_end = fcntl.fcntl(to_child_r, fcntl.F_DUPFD_CLOEXEC, 10)
            write_end = fcntl.fcntl(from_child_w, fcntl.F_DUPFD_CLOEXEC, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self._process = subprocess.Popen(
            [
                binary,
                *_CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=arrange_fds,  # safe: no threads run in this process at this point
            close_fds=False,  # our pipe ends are non-inheritable; fds 3/4 are made for the child
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._from_child], [], [], remaining)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + _PROTOCOL_TIMEOUT
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply["result"]
                return result
            self.events.append(reply)

    def load(self, path: Path, *, screenshot: bool = False) -> Loaded:
        started = time.perf_counter()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.call(domain, session=session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        self.events.clear()
        self.call("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        deadline = time.monotonic() + _PROTOCOL_TIMEOUT
        while not any(
            e.get("method") == "Page.loadEventFired" and e.get("sessionId") == session
            for e in self.events
        ):
            self.events.append(self._read(deadline))

        def evaluate(expression: str) -> Any:
            reply = self.call(
                "Runtime.evaluate",
                {"expression": expression, "returnByValue": True},
                session=session,
            )
            return reply["result"].get("value")

        facts = {
            "scroll_width": evaluate("document.documentElement.scrollWidth"),
            "height": evaluate("document.documentElement.scrollHeight"),
            "plots": evaluate(
                "[...document.querySelectorAll('svg.plot')]"
                ".map(s => s.getBoundingClientRect().width)"
            ),
            "title": evaluate("document.title"),
            # Tables that do not fit their card: the section of each (a cut column).
            "cut_tables": evaluate(
                "[...document.querySelectorAll('.table-scroll')]"
                # shown: not in a closed <details> (its numbers open on request)
                ".filter(d => !d.closest('details:not([open])'))"
                ".filter(d => d.scrollWidth > d.clientWidth + 1)"
                ".map(d => ((d.closest('section') || {}).id || '?')"
                " + ':' + d.scrollWidth + '>' + d.clientWidth)"
            ),
        }
        dom = str(evaluate("document.documentElement.outerHTML"))
        image = None
        if screenshot:
            clip = {
                "x": 0,
                "y": 0,
                "width": self.width,
                "height": min(int(facts["height"]), 16_000),
                "scale": 1,
            }
            shot = self.call(
                "Page.captureScreenshot",
                {"format": "png", "captureBeyondViewport": True, "clip": clip},
                session=session,
            )
            image = base64.b64decode(shot["data"])
        errors = [
            self._describe(e)
            for e in self.events
            if e.get("sessionId") == session and self._is_error(e)
        ]
        self.call("Target.closeTarget", {"targetId": target})
        return Loaded(dom, errors, facts, image, time.perf_counter() - started)

    @staticmethod
    def _is_error(event: dict[str, Any]) -> bool:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            return True
        if method == "Runtime.consoleAPICalled":
            return bool(params.get("type") in {"error", "assert"})
        if method == "Log.entryAdded":
            return bool(params.get("entry", {}).get("level") == "error")
        return False

    @staticmethod
    def _describe(event: dict[str, Any]) -> str:
        params = event.get("params", {})
        if "exceptionDetails" in params:
            details = params["exceptionDetails"]
            thrown = details.get("exception", {}).get("description")
            return f"exception: {thrown or details.get('text')}"
        if "entry" in params:
            return f"log: {params['entry'].get('text')}"
        return "console: " + " ".join(
            str(a.get("value", a.get("description"))) for a in params.get("args", [])
        )

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        os.close(self._to_child)
        os.close(self._from_child)
