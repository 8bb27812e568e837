"""One interface for cache backends, and the URL that picks one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

__all__ = ["BackendStats", "CacheBackend", "redact_url"]

_PASSWORD_PARAM = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


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
    """The URL without any password (for logs and stats): neither ``user:pw@`` nor ``?password=``."""
    url = _PASSWORD_PARAM.sub(r"\1***", url)
    scheme, sep, rest = url.partition("://")
    authority = re.match(r"[^/?#]*", rest).group(0)  # type: ignore[union-attr]  # always matches
    if not sep or "@" not in authority:
        return url
    # The host follows the LAST "@" of the authority, as URL parsers (and redis-py) read it.
    creds, _, host = authority.rpartition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user + ':***' if user else '***'}@{host}{rest[len(authority) :]}"
