"""Whose cached responses (and cached incumbent samples) a run may reuse: its own, or every run's.

Reusing another run's response at temperature > 0 replays an old sample as if it were a new
one (audit P1-1), so by default a run's cache keys are salted with its run id: a resume reuses
its own responses and nothing else. At temperature 0 the same request has one answer, so runs
share by default. ``cache.share_across_runs`` overrides both ways; ``cache.salt`` wins over all.
The training loop's BaselineCache follows the same rule (:func:`reuse_salt`).
"""

from __future__ import annotations

from dataclasses import dataclass

from skillharness.llm.config import CacheConfig

__all__ = ["CacheScope", "cache_scope", "reuse_salt"]


@dataclass(frozen=True)
class CacheScope:
    """The salt for the run's cache keys and one line saying what it means."""

    salt: str | None
    description: str


def _shares(cache: CacheConfig, temperature: float | None) -> bool:
    return cache.share_across_runs if cache.share_across_runs is not None else temperature == 0


def reuse_salt(cache: CacheConfig, run_id: str, temperature: float | None) -> str | None:
    """Whose results run ``run_id`` may reuse: ``cache.salt`` (every run configured with it),
    None (every run's) or ``run_id`` (its own only). Temperature None counts as the server's > 0."""
    if cache.salt is not None:
        return cache.salt
    return None if _shares(cache, temperature) else run_id


def cache_scope(cache: CacheConfig, run_id: str, temperature: float | None) -> CacheScope:
    """The cache salt of run ``run_id`` sampling at ``temperature`` (None counts as the server's > 0)."""
    if not cache.enabled:
        return CacheScope(None, "cache: disabled")
    salt = reuse_salt(cache, run_id, temperature)
    if cache.salt is not None:
        return CacheScope(salt, "cache: shared by every run with the configured cache.salt")
    if salt is None:
        why = "cache.share_across_runs" if cache.share_across_runs else "temperature 0"
        return CacheScope(None, f"cache: shared across runs ({why}): responses of earlier runs are reused")
    return CacheScope(salt, "cache: private to this run (a resume reuses its own responses only)")
