"""Serve an ASGI app on a loopback port from a background thread (the simulator, test servers)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from skillharness.errors import InfraError

__all__ = ["BackgroundServer"]


class BackgroundServer:
    """uvicorn in a daemon thread with its own event loop, so it never competes with the caller's."""

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "asgi",
        start_timeout_s: float = 15.0,
        **uvicorn_options: Any,
    ) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.name = name
        self._start_timeout_s = start_timeout_s
        self._options = {"log_level": "warning", "access_log": False, "lifespan": "off", **uvicorn_options}
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> BackgroundServer:
        """Bind, serve, and return once the server accepts connections (port 0: a free one)."""
        # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on sockets that say TCP, and
        # without it every split response waits ~40 ms for a delayed ACK (Nagle).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise InfraError(f"{self.name} cannot bind {self.host}:{self.port}: {exc}") from exc
        self.port = sock.getsockname()[1]
        self._server = uvicorn.Server(uvicorn.Config(self.app, **self._options))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=self.name, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + self._start_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise InfraError(f"{self.name} did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for its thread."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None
