"""One HTTP connection per call in flight: single-connection clients lent out one call at a time.

A single ``httpx.AsyncClient`` with room for C connections walks its whole pool on every request
and every response close: each idle connection is checked for expiry with a socket-readability
probe (``getpeername`` and ``poll``) and counted against the keep-alive limit by a loop over the
pool, so the cost per call grows with C squared. Profiled at C = 24 (benchmarks/infer.py), that
walk was about 2 ms of event-loop time per call, as much as the rest of the harness. A lane is a
client that owns one keep-alive connection; a call borrows a free lane and gives it back when
its response is read, so each pool walk sees one connection.

A call cancelled while its response closes can leave the client's one pool slot taken for good
(httpcore shields the close with an anyio scope, which a second native ``Task.cancel`` passes
through; the request is then never removed from the pool's queue), and every later call on that
client waits ``pool_s`` and fails as a pool timeout. Seen when an outage in one arm of a gate
cancels the other arm mid-request, then the gate is run again in the same process. So a lane
whose call did not end normally is retired, never lent again, and closed with the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator

import httpx

from skillharness.llm.config import TimeoutConfig

__all__ = ["Lanes"]


class Lanes:
    """Up to ``size`` single-connection clients for one endpoint URL, created on first need."""

    def __init__(self, url: str, timeouts: TimeoutConfig, size: int) -> None:
        self._timeout = httpx.Timeout(
            connect=timeouts.connect_s, read=timeouts.read_s, write=timeouts.write_s, pool=timeouts.pool_s
        )
        self._pool_s = timeouts.pool_s
        self._https = url.lower().startswith("https:")
        self._ssl: ssl.SSLContext | None = None
        self._free: asyncio.LifoQueue[httpx.AsyncClient] | None = None  # made inside the loop
        self._all: list[httpx.AsyncClient] = []
        self._closing: set[asyncio.Task[None]] = set()
        self._size = size

    def _verify(self) -> ssl.SSLContext | bool:
        if not self._https:
            # Plain HTTP never uses a TLS context, and building the default one (loading the CA
            # bundle) costs about 0.15 s of CPU per client. Redirects are not followed.
            return False
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context()  # one CA load, shared by every lane
        return self._ssl

    def _new(self) -> httpx.AsyncClient:
        client = httpx.AsyncClient(
            timeout=self._timeout,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            verify=self._verify(),
        )
        self._all.append(client)
        return client

    @contextlib.asynccontextmanager
    async def lane(self) -> AsyncIterator[httpx.AsyncClient]:
        """Borrow a lane for one call (waits up to ``pool_s`` when all ``size`` are busy)."""
        if self._free is None:
            self._free = asyncio.LifoQueue()  # the most recently used lane: its connection is warm
        if self._free.empty() and len(self._all) < self._size:
            client = self._new()
        else:
            try:
                async with asyncio.timeout(self._pool_s):
                    client = await self._free.get()
            except TimeoutError as exc:
                raise httpx.PoolTimeout(f"no free connection within {self._pool_s}s") from exc
        leaked = False
        try:
            yield client
        except (asyncio.CancelledError, httpx.PoolTimeout):
            leaked = True  # interrupted mid-call, or its own pool already stuck: its slot may be taken
            raise
        finally:
            if leaked:
                self._retire(client)
            else:
                self._free.put_nowait(client)

    def _retire(self, client: httpx.AsyncClient) -> None:
        """Close ``client`` in the background and lend a fresh lane in its place."""
        if client not in self._all:
            return  # the lanes were closed meanwhile
        self._all.remove(client)
        task = asyncio.get_running_loop().create_task(client.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        if self._free is not None:
            self._free.put_nowait(self._new())  # a caller may be waiting for a lane

    async def aclose(self) -> None:
        """Close every lane's connection."""
        clients, self._all = self._all, []
        self._free = None
        for client in clients:
            await client.aclose()
        await asyncio.gather(*self._closing, return_exceptions=True)
