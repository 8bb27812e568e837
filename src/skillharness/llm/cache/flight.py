"""Waiting for another process's answer to the same request (single-flight across processes).

A process about to ask the model for a key first takes a lock on it in the shared backend (Redis:
``SET NX PX`` with a token of its own). Another process wanting the same key meanwhile does not
ask: it polls the cache for the answer, and asks itself only when the lock is gone without an
answer (the asker failed, or its answer was not storable) or when ``wait_s`` has passed. The lock
expires after ``wait_s`` too, so an asker that crashed blocks the others at most that long.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Protocol, runtime_checkable

from skillharness.errors import CacheError
from skillharness.llm.types import ChatResponse

__all__ = ["FLIGHT_POLL_S", "Flight", "FlightLocks"]

# How often a waiting process looks for the answer: small against an LLM call's seconds.
FLIGHT_POLL_S = 0.05


@runtime_checkable
class FlightLocks(Protocol):
    """A backend shared across processes that can lock a key while one process asks for it."""

    async def acquire_flight(self, key: str, token: str, ttl_s: float) -> bool: ...

    async def release_flight(self, key: str, token: str) -> None: ...

    async def flight_held(self, key: str) -> bool: ...


class Flight:
    """One process's side of the cross-process single-flight for one key."""

    def __init__(self, locks: FlightLocks, key: str, wait_s: float) -> None:
        self._locks = locks
        self._key = key
        self._wait_s = wait_s
        self._token = secrets.token_hex(8)

    async def take(self) -> bool:
        """Lock the key for this process; a backend error counts as taken (ask rather than stall)."""
        try:
            return await self._locks.acquire_flight(self._key, self._token, self._wait_s)
        except CacheError:
            return True

    async def release(self) -> None:
        with suppress(CacheError):  # the lock expires by itself
            await self._locks.release_flight(self._key, self._token)

    async def wait_for(
        self, lookup: Callable[[], Awaitable[ChatResponse | None]], deadline: float
    ) -> ChatResponse | None:
        """Poll ``lookup`` while another process holds the lock; None when it is gone or time is up."""
        while time.monotonic() < deadline:
            await asyncio.sleep(FLIGHT_POLL_S)
            found = await lookup()
            if found is not None:
                return found
            try:
                if not await self._locks.flight_held(self._key):
                    return await lookup()  # answered just before the lock went: one last look
            except CacheError:
                return None
        return None
