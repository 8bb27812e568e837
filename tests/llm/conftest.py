"""Fixtures for the LLM tests: the scripted server, a real redis-server, both cache backends."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from llm_support import Reply, ScriptedServer

from net_support import free_port
from skillharness.llm.cache.backend import CacheBackend
from skillharness.llm.cache.opener import open_backend

REDIS_SERVER = "/usr/bin/redis-server"


@pytest.fixture(scope="session")
def _scripted_session() -> Iterator[ScriptedServer]:
    server = ScriptedServer().start()
    yield server
    server.stop()


@pytest.fixture
def scripted(_scripted_session: ScriptedServer) -> ScriptedServer:
    """The session's scripted server, emptied for this test."""
    server = _scripted_session
    server.queue.clear()
    server.default = Reply()
    server.requests.clear()
    server.arrivals.clear()
    server.headers.clear()
    server.max_active = 0
    return server


def _start_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A real redis-server on a free loopback port, without persistence (skips if absent)."""
    if not Path(REDIS_SERVER).exists() and shutil.which("redis-server") is None:
        pytest.skip(f"redis-server not installed ({REDIS_SERVER} absent): Redis cache tests skipped")
    binary = REDIS_SERVER if Path(REDIS_SERVER).exists() else str(shutil.which("redis-server"))
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("redis-server did not start")
        time.sleep(0.05)
    return proc, f"redis://127.0.0.1:{port}/0"


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The session's redis-server URL."""
    proc, url = _start_redis()
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def private_redis() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A redis-server of this test alone (it may stop it), and its URL."""
    proc, url = _start_redis()
    yield proc, url
    proc.kill()
    proc.wait(timeout=10)


@pytest.fixture(params=["sqlite", "redis"])
def cache_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A cache URL of each backend kind (Redis: a fresh db number is not needed, we clear)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'cache.sqlite'}"
    return request.getfixturevalue("redis_url")


@pytest.fixture
async def backend(cache_url: str) -> AsyncIterator[CacheBackend]:
    """An empty backend under a test namespace."""
    store = open_backend(cache_url, "shtest")
    await store.clear()
    yield store
    await store.clear()
    await store.aclose()
