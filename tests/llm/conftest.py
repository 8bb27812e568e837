"""Fixtures for the LLM tests: the scripted server, a real redis-server, both cache backends."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from llm_support import Reply, ScriptedServer

from services_support import start_redis
from skillharness.llm.cache.backend import CacheBackend
from skillharness.llm.cache.opener import open_backend


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


@pytest.fixture
def private_redis() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A redis-server of this test alone (it may stop it), and its URL."""
    proc, url = start_redis()
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
