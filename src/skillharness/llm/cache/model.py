"""The cache as a :class:`ChatModel` wrapper: look up, else ask the inner model and store.

Only complete successful responses are stored (see entry.STORED_FINISH_REASONS); errors are
never stored because they propagate as exceptions. A corrupt, foreign or expired value is a
miss: it is deleted and counted, never raised.

A failed write (a full disk, a read-only file, redis out of memory) never costs the answer: the
response was paid for and is returned. The failure is counted and logged once; after
:data:`WRITE_FAILURES_TO_DISABLE` failures in a row the cache stops trying to write for the rest
of the process, and says so.

Identical requests are asked once (single-flight). In one process, a request whose key is already
being asked waits for that call's answer instead of asking again. Across processes sharing a
backend that can lock keys (Redis), the first to ask locks the key and the others wait for its
answer in the cache, up to ``flight_wait_s`` (see flight.py). A waiter's answer is marked a cache
hit: it cost nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from skillharness.errors import CacheError
from skillharness.llm.cache.backend import CacheBackend
from skillharness.llm.cache.entry import decode_entry, encode_entry, is_storable
from skillharness.llm.cache.flight import Flight, FlightLocks
from skillharness.llm.cache.key import cache_key
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse

__all__ = ["WRITE_FAILURES_TO_DISABLE", "CacheCounters", "CachedModel"]

log = logging.getLogger(__name__)

WRITE_FAILURES_TO_DISABLE = 5


@dataclass
class CacheCounters:
    """What this process's cache layer did."""

    hits: int = 0
    misses: int = 0
    stores: int = 0
    not_stored: int = 0  # responses returned but not storable (e.g. finish_reason=length)
    corrupt: int = 0  # values that failed validation, were deleted and treated as misses
    invalidated: int = 0  # entries removed because the caller found the response unusable
    write_failures: int = 0  # stores or deletes the backend refused (the response was still returned)
    writes_disabled: bool = False  # True after WRITE_FAILURES_TO_DISABLE write failures in a row
    joined: int = 0  # requests answered by an identical call in flight in this process
    waited: int = 0  # requests answered by another process's identical call (through the cache)
    wait_timeouts: int = 0  # waits for another process that ran out, after which this one asked


class CachedModel:
    """Wraps ``inner``; ``salt`` enters every key; ``ttl_s`` None means never expire."""

    def __init__(
        self,
        inner: ChatModel,
        backend: CacheBackend,
        *,
        salt: str | None,
        ttl_s: float | None,
        flight_wait_s: float = 0.0,
    ) -> None:
        self.inner = inner
        self.backend = backend
        self.salt = salt
        self.ttl_s = ttl_s
        self.flight_wait_s = flight_wait_s
        self.counters = CacheCounters()
        self._failures_in_a_row = 0
        self._in_flight: dict[str, asyncio.Future[ChatResponse]] = {}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        key = cache_key(request, self.salt)
        while True:
            hit = await self._lookup(key)
            if hit is not None:
                self.counters.hits += 1
                return hit
            flight = self._in_flight.get(key)
            if flight is None:
                break
            # Shielded: a waiter cancelled must not cancel the call the others wait for.
            with contextlib.suppress(asyncio.CancelledError):
                response = await asyncio.shield(flight)
                self.counters.joined += 1
                return response.model_copy(update={"cache_hit": True})
            if not flight.cancelled():  # this waiter was cancelled, not the call
                raise asyncio.CancelledError
            # The asker was cancelled: look again, and ask if nobody else does.
        flight = asyncio.get_running_loop().create_future()
        flight.add_done_callback(_consume)
        self._in_flight[key] = flight
        try:
            response = await self._ask(key, request)
        except asyncio.CancelledError:
            flight.cancel()
            raise
        except BaseException as exc:
            flight.set_exception(exc)
            raise
        else:
            flight.set_result(response)
            return response
        finally:
            del self._in_flight[key]

    async def _lookup(self, key: str) -> ChatResponse | None:
        """The stored answer to ``key``; a corrupt or expired value is deleted and is a miss."""
        raw = await self.backend.get(key)
        if raw is None:
            return None
        hit = decode_entry(raw, key, time.time())
        if hit is None:
            self.counters.corrupt += 1
            log.warning("cache entry %s failed validation; deleted and treated as a miss", key[:16])
            await self._write(self.backend.delete(key))
        return hit

    async def _ask(self, key: str, request: ChatRequest) -> ChatResponse:
        """Ask the model, unless another process sharing the backend is asking the same already."""
        if self.flight_wait_s <= 0 or not isinstance(self.backend, FlightLocks):
            return await self._call(key, request)
        deadline = time.monotonic() + self.flight_wait_s
        flight = Flight(self.backend, key, self.flight_wait_s)
        while not await flight.take():
            answer = await flight.wait_for(lambda: self._lookup(key), deadline)
            if answer is not None:
                self.counters.hits += 1
                self.counters.waited += 1
                return answer
            if time.monotonic() >= deadline:
                self.counters.wait_timeouts += 1
                log.warning(
                    "waited %.0f s for another process asking the same request (key %s); asking it here",
                    self.flight_wait_s,
                    key[:16],
                )
                return await self._call(key, request)
        try:
            return await self._call(key, request)
        finally:
            await flight.release()

    async def _call(self, key: str, request: ChatRequest) -> ChatResponse:
        """Ask the inner model and store a storable answer."""
        self.counters.misses += 1
        response = await self.inner.complete(request)
        if is_storable(response):
            now = time.time()
            expires = None if self.ttl_s is None else now + self.ttl_s
            if await self._write(
                self.backend.put(key, encode_entry(key, response, now, expires), self.ttl_s)
            ):
                self.counters.stores += 1
        else:
            self.counters.not_stored += 1
        return response

    async def _write(self, operation: Coroutine[Any, Any, None]) -> bool:
        """Run a backend write; a failure is counted and reported, never raised. True: written."""
        if self.counters.writes_disabled:
            operation.close()  # never awaited: close it, or Python warns about it
            return False
        try:
            await operation
        except CacheError as exc:
            self.counters.write_failures += 1
            self._failures_in_a_row += 1
            if self.counters.write_failures == 1:
                log.warning("cache write failed (the response is kept, not cached): %s", exc)
            if self._failures_in_a_row >= WRITE_FAILURES_TO_DISABLE:
                self.counters.writes_disabled = True
                log.warning(
                    "cache writes disabled for the rest of this run after %d failures in a row; "
                    "responses are still read from the cache. Last failure: %s",
                    self._failures_in_a_row,
                    exc,
                )
            return False
        self._failures_in_a_row = 0
        return True

    async def invalidate(self, request: ChatRequest) -> None:
        """Forget the stored response to ``request`` (the caller could not use it).

        The agent forgets the responses of an episode that ended in an infra error: it was not
        asked fairly, and the next identical request asks the model again. No entry: nothing to do.
        """
        if await self._write(self.backend.delete(cache_key(request, self.salt))):
            self.counters.invalidated += 1


def _consume(flight: asyncio.Future[ChatResponse]) -> None:
    """Mark a failed call's error as seen: its asker raised it, waiters or not."""
    if not flight.cancelled():
        flight.exception()
