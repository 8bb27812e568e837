"""The response cache: key, versioned entries, SQLite and Redis backends, and the wrapper."""

from skillharness.llm.cache.backend import BackendStats, CacheBackend
from skillharness.llm.cache.key import cache_key
from skillharness.llm.cache.model import CacheCounters, CachedModel
from skillharness.llm.cache.opener import open_backend
from skillharness.llm.cache.ttl import parse_ttl

__all__ = [
    "BackendStats",
    "CacheBackend",
    "CacheCounters",
    "CachedModel",
    "cache_key",
    "open_backend",
    "parse_ttl",
]
