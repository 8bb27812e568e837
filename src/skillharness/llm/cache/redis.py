"""Redis backend: a cache shared by several harness processes or machines.

Every key lives under ``<namespace>:cache:``; ``clear`` deletes only those (SCAN + UNLINK), never
FLUSHDB. Redis expires entries itself, so ``prune`` has nothing to do.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from skillharness.errors import CacheError
from skillharness.llm.cache.backend import BackendStats, redact_url

__all__ = ["RedisBackend"]

_SCAN_BATCH = 500
# Deletes a flight lock only when it still holds the caller's token (it may have expired and been
# taken by another process since).
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
# The characters SCAN's MATCH reads as a pattern: a namespace holding one ("a?", "run*") must match
# only itself, or stats would count, and clear delete, another namespace's entries.
_GLOB = re.compile(r"([*?\[\]\\])")


def _glob_literal(text: str) -> str:
    """``text`` as a SCAN pattern that matches exactly ``text``."""
    return _GLOB.sub(r"\\\1", text)


def _check_db(url: str) -> None:
    """ValueError when a ``redis://`` URL's path is not a database number: redis-py ignores such a
    path without a word and uses database 0, so ``/abc`` (or ``/1a``) would read and clear db 0."""
    parts = urlsplit(url)
    if parts.scheme == "unix":  # the path is the socket; the database is a ``?db=`` parameter
        return
    db = unquote(parts.path).strip("/")
    if db and not db.isdecimal():
        raise ValueError(f"the database {db!r} in the URL's path is not a number (redis://host:port/0)")


class RedisBackend:
    """Async redis-py client; errors become CacheError naming the (redacted) URL."""

    def __init__(self, url: str, namespace: str) -> None:
        self.url = url
        self.prefix = f"{namespace}:cache:"
        self.flight_prefix = f"{namespace}:flight:"  # apart from the entries: stats and clear skip them
        try:
            _check_db(url)
            self._redis = aioredis.from_url(url, socket_connect_timeout=10, socket_timeout=30)
        except (RedisError, ValueError) as exc:
            raise CacheError(f"cache url {redact_url(url)}: {exc}", url=redact_url(url)) from exc

    def _fail(self, exc: Exception) -> CacheError:
        return CacheError(f"redis cache {redact_url(self.url)}: {exc}", url=redact_url(self.url))

    async def get(self, key: str) -> bytes | None:
        try:
            return await self._redis.get(self.prefix + key)
        except RedisError as exc:
            raise self._fail(exc) from exc

    async def put(self, key: str, value: bytes, ttl_s: float | None) -> None:
        px = None if ttl_s is None else max(1, int(ttl_s * 1000))
        try:
            await self._redis.set(self.prefix + key, value, px=px)
        except RedisError as exc:
            raise self._fail(exc) from exc

    async def delete(self, key: str) -> None:
        try:
            await self._redis.unlink(self.prefix + key)
        except RedisError as exc:
            raise self._fail(exc) from exc

    async def acquire_flight(self, key: str, token: str, ttl_s: float) -> bool:
        """Lock ``key`` for the caller (``token``) unless another holds it; expires after ``ttl_s``."""
        try:
            taken = await self._redis.set(
                self.flight_prefix + key, token, nx=True, px=max(1, int(ttl_s * 1000))
            )
        except RedisError as exc:
            raise self._fail(exc) from exc
        return bool(taken)

    async def release_flight(self, key: str, token: str) -> None:
        try:
            await self._redis.eval(_RELEASE, 1, self.flight_prefix + key, token)
        except RedisError as exc:
            raise self._fail(exc) from exc

    async def flight_held(self, key: str) -> bool:
        try:
            return bool(await self._redis.exists(self.flight_prefix + key))
        except RedisError as exc:
            raise self._fail(exc) from exc

    async def _keys(self) -> list[bytes]:
        return [
            k async for k in self._redis.scan_iter(match=_glob_literal(self.prefix) + "*", count=_SCAN_BATCH)
        ]

    async def stats(self) -> BackendStats:
        try:
            keys = await self._keys()
            size = 0
            for start in range(0, len(keys), _SCAN_BATCH):
                async with self._redis.pipeline(transaction=False) as pipe:
                    for k in keys[start : start + _SCAN_BATCH]:
                        pipe.strlen(k)
                    size += sum(await pipe.execute())
        except RedisError as exc:
            raise self._fail(exc) from exc
        return BackendStats("redis", redact_url(self.url), len(keys), size, 0)

    async def prune(self) -> int:
        return 0

    async def clear(self) -> int:
        try:
            keys = await self._keys()
            removed = 0
            for start in range(0, len(keys), _SCAN_BATCH):
                removed += await self._redis.unlink(*keys[start : start + _SCAN_BATCH])
        except RedisError as exc:
            raise self._fail(exc) from exc
        return removed

    async def aclose(self) -> None:
        await self._redis.aclose()
