"""One interface for cache backends, and the URL that picks one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from skillharness.errors import ConfigError

__all__ = ["BackendStats", "CacheBackend", "open_backend", "redact_url"]


@dataclass(frozen=True)
class BackendStats:
    """What a backend holds in our namespace."""

    backend: str
    location: str
    entries: int
    bytes: int
    expired: int  # stored but past their TTL (SQLite only; Redis expires them itself)


class CacheBackend(Protocol):
    """Raw byte storage under our namespace. Values are opaque here; entry.py gives them meaning."""

    async def get(self, key: str) -> bytes | None: ...

    async def put(self, key: str, value: bytes, ttl_s: float | None) -> None: ...

    async def delete(self, key: str) -> None: ...

    async def stats(self) -> BackendStats: ...

    async def prune(self) -> int: ...

    async def clear(self) -> int: ...

    async def aclose(self) -> None: ...


def redact_url(url: str) -> str:
    """The URL without any password (for logs and stats)."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest.split("/", 1)[0]:
        return url
    creds, _, host = rest.partition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user + ':***' if user else '***'}@{host}"


def open_backend(url: str, namespace: str) -> CacheBackend:
    """A backend for ``sqlite:///path`` or ``redis://host:port/db`` (``rediss://`` too)."""
    if url.startswith("sqlite:///"):
        from skillharness.llm.cache.sqlite import SQLiteBackend

        return SQLiteBackend(url.removeprefix("sqlite:///"), namespace)
    if url.startswith(("redis://", "rediss://", "unix://")):
        from skillharness.llm.cache.redis import RedisBackend

        return RedisBackend(url, namespace)
    raise ConfigError(
        f"cache.url {redact_url(url)!r}: expected sqlite:///path or redis://host:port/db", field="cache.url"
    )
