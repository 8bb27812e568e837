"""Pick the cache backend a URL names (kept apart from the interface, which both backends import)."""

from __future__ import annotations

from skillharness.errors import ConfigError
from skillharness.llm.cache.backend import CacheBackend, redact_url
from skillharness.llm.cache.sqlite import SQLiteBackend

__all__ = ["open_backend"]


def open_backend(url: str, namespace: str) -> CacheBackend:
    """A backend for ``sqlite:///path`` or ``redis://host:port/db`` (``rediss://`` too)."""
    if url.startswith("sqlite:///"):
        return SQLiteBackend(url.removeprefix("sqlite:///"), namespace)
    if url.startswith(("redis://", "rediss://", "unix://")):
        from skillharness.llm.cache.redis import RedisBackend  # redis-py only for a Redis cache

        return RedisBackend(url, namespace)
    raise ConfigError(
        f"cache.url {redact_url(url)!r}: expected sqlite:///path or redis://host:port/db", field="cache.url"
    )
