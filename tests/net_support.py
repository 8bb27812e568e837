"""Loopback helpers shared by the test folders."""

from __future__ import annotations

import socket
from collections import deque
from dataclasses import dataclass
from typing import Any

from skillharness.sim.server import ConnectionDropped, quiet_dropped_connections
from skillharness.util.asgi import BackgroundServer


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for servers the tests start)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Page:
    """One answer of a :class:`PageServer`: a status, a content type and a body, or a cut body."""

    status: int = 200
    body: bytes = b'{"object": "list", "data": [{"id": "m", "object": "model"}]}'
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    cut: bool = False  # announce the whole body, send half, drop the connection


class PageServer:
    """A loopback server that answers any request from a queue of :class:`Page`, then ``default``.

    It stands for what answers an endpoint's probe (``GET /models``) at start-up: a busy server,
    a gateway's error page, a connection cut mid-body. ``requests`` counts what arrived.
    """

    def __init__(self) -> None:
        self.queue: deque[Page] = deque()
        self.default = Page()
        self.requests = 0
        self.port = 0
        self._server: BackgroundServer | None = None

    def push(self, *pages: Page) -> None:
        self.queue.extend(pages)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.requests += 1
        page = self.queue.popleft() if self.queue else self.default
        headers = [(b"content-type", page.content_type.encode()), (b"content-length", b"%d" % len(page.body))]
        headers += [(k.encode(), v.encode()) for k, v in page.headers]
        await send({"type": "http.response.start", "status": page.status, "headers": headers})
        if page.cut:
            await send(
                {"type": "http.response.body", "body": page.body[: len(page.body) // 2], "more_body": True}
            )
            raise ConnectionDropped("page server: connection cut mid-body")
        await send({"type": "http.response.body", "body": page.body})

    def __enter__(self) -> PageServer:
        quiet_dropped_connections()
        self._server = BackgroundServer(self, name="page-server").start()
        self.port = self._server.port
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"
