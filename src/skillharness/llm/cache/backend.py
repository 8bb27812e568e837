"""One interface for cache backends, and the URL that picks one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["BackendStats", "CacheBackend", "redact_url"]


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
