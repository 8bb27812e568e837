"""Open a file in headless Chromium and watch it over the DevTools protocol (a websocket).

The browser runs with the network blocked twice over: every non-loopback request goes to a dead
proxy, and the page's network is emulated offline. Every request the page makes, every console
message and every uncaught exception is recorded, so a test can assert there were none.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--proxy-server=http://127.0.0.1:9",  # nothing listens there: any network request fails
    "--remote-debugging-port=0",
    "--hide-scrollbars",
)


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class PageLog:
    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)  # (level, text)
    exceptions: list[str] = field(default_factory=list)
    loaded: bool = False


@contextlib.contextmanager
def launch(binary: str, profile: Path, *, timeout: float = 60.0) -> Iterator[Browser]:
    """Start Chromium with a fresh ``profile`` and yield a :class:`Browser` on one blank page."""
    proc = subprocess.Popen(
        [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its helpers (zygote, renderers, crash handler) share one group
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not port_file.is_file() or len(port_file.read_text().splitlines()) < 2:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"chromium did not start (exit code {proc.poll()})")
            time.sleep(0.1)
        port, path = port_file.read_text().splitlines()[:2]
        with connect(f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=timeout) as ws:
            yield Browser(ws, timeout)
    finally:
        _stop_group(proc)


def _stop_group(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """End Chromium and every helper it started. A helper that outlives the main process can
    still write into the profile while the caller deletes it ("Directory not empty")."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)
    if proc.poll() is None:
        _kill(proc.pid)
        proc.wait()
    # A helper orphaned into a container whose init does not reap stays a zombie (harmless, and
    # still "in" the group), so the wait for the group to empty is bounded.
    while time.monotonic() < deadline + 5:
        if not _kill(proc.pid, signal.SIGKILL if time.monotonic() > deadline else 0):
            break  # no process of the group is left
        time.sleep(0.05)


def _kill(group: int, sig: int = signal.SIGKILL) -> bool:
    """Signal process group ``group``; False when no process of it is left."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    return True


class Browser:
    """One page of a headless Chromium, driven over CDP (a flattened target session)."""

    def __init__(self, ws: ClientConnection, timeout: float) -> None:
        self.ws, self.timeout = ws, timeout
        self.ids = itertools.count(1)
        self.log = PageLog()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        self.call("Network.emulateNetworkConditions", offline, session=True)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.log.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params["args"])
            self.log.console.append((params["type"], text))
        elif method == "Runtime.exceptionThrown":
            self.log.exceptions.append(json.dumps(params["exceptionDetails"])[:500])
        elif method == "Log.entryAdded":
            self.log.console.append((params["entry"]["level"], params["entry"]["text"]))
        elif method == "Page.loadEventFired":
            self.log.loaded = True

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = False
    ) -> dict[str, Any]:
        ident = next(self.ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv(timeout=self.timeout))
            if reply.get("id") == ident:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def open(self, url: str) -> None:
        """Navigate and wait for the load event, then let pending events arrive."""
        self.call("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + self.timeout
        while not self.log.loaded:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not load")
            self.evaluate("1")
            time.sleep(0.05)
        self.evaluate("new Promise(r => setTimeout(r, 300))")

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            session=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, *, full: bool) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full:
            size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
            params.update(
                captureBeyondViewport=True,
                clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
            )
        data = base64.b64decode(self.call("Page.captureScreenshot", params, session=True)["data"])
        path.write_bytes(data)
        return data
