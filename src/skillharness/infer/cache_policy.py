"""Whose cached responses a run may reuse: its own, or every run's.

Reusing another run's response at temperature > 0 replays an old sample as if it were a new
one (audit P1-1), so by default a run's cache keys are salted with its run id: a resume reuses
its own responses and nothing else. At temperature 0 the same request has one answer, so runs
share by default. ``cache.share_across_runs`` overrides both ways; ``cache.salt`` wins over all.
"""

from __future__ import annotations

from dataclasses import dataclass

from skillharness.llm.config import CacheConfig

__all__ = ["CacheScope", "cache_scope"]


@dataclass(frozen=True)
class CacheScope:
    """The salt for the run's cache keys and one line saying what it means."""

    salt: str | None
    description: str


def cache_scope(cache: CacheConfig, run_id: str, temperature: float | None) -> CacheScope:
    """The cache salt of run ``run_id`` sampling at ``temperature`` (None counts as the server's > 0)."""
    if not cache.enabled:
        return CacheScope(None, "cache: disabled")
    if cache.salt is not None:
        return CacheScope(cache.salt, "cache: shared by every run with the configured cache.salt")
    share = cache.share_across_runs
    if share is None:
        share = temperature == 0
    if share:
        why = "cache.share_across_runs" if cache.share_across_runs else "temperature 0"
        return CacheScope(None, f"cache: shared across runs ({why}): responses of earlier runs are reused")
    return CacheScope(run_id, "cache: private to this run (a resume reuses its own responses only)")
