"""The cache as a :class:`ChatModel` wrapper: look up, else ask the inner model and store.

Only complete successful responses are stored (see entry.STORED_FINISH_REASONS); errors are
never stored because they propagate as exceptions. A corrupt, foreign or expired value is a
miss: it is deleted and counted, never raised.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from skillharness.llm.cache.backend import CacheBackend
from skillharness.llm.cache.entry import decode_entry, encode_entry, is_storable
from skillharness.llm.cache.key import cache_key
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse

__all__ = ["CacheCounters", "CachedModel"]

log = logging.getLogger(__name__)


@dataclass
class CacheCounters:
    """What this process's cache layer did."""

    hits: int = 0
    misses: int = 0
    stores: int = 0
    not_stored: int = 0  # responses returned but not storable (e.g. finish_reason=length)
    corrupt: int = 0  # values that failed validation, were deleted and treated as misses
    invalidated: int = 0  # entries removed because the caller found the response unusable


class CachedModel:
    """Wraps ``inner``; ``salt`` enters every key; ``ttl_s`` None means never expire."""

    def __init__(
        self, inner: ChatModel, backend: CacheBackend, *, salt: str | None, ttl_s: float | None
    ) -> None:
        self.inner = inner
        self.backend = backend
        self.salt = salt
        self.ttl_s = ttl_s
        self.counters = CacheCounters()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        key = cache_key(request, self.salt)
        raw = await self.backend.get(key)
        if raw is not None:
            hit = decode_entry(raw, key, time.time())
            if hit is not None:
                self.counters.hits += 1
                return hit
            self.counters.corrupt += 1
            log.warning("cache entry %s failed validation; deleted and treated as a miss", key[:16])
            await self.backend.delete(key)
        self.counters.misses += 1
        response = await self.inner.complete(request)
        if is_storable(response):
            now = time.time()
            expires = None if self.ttl_s is None else now + self.ttl_s
            await self.backend.put(key, encode_entry(key, response, now, expires), self.ttl_s)
            self.counters.stores += 1
        else:
            self.counters.not_stored += 1
        return response

    async def invalidate(self, request: ChatRequest) -> None:
        """Forget the stored response to ``request`` (the caller could not use it).

        A response that led to a parse error or an infra error must not be replayed by a resume
        (audit P0-4): the next identical request asks the model again. No entry: nothing to do.
        """
        await self.backend.delete(cache_key(request, self.salt))
        self.counters.invalidated += 1
