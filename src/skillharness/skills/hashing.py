"""Content-hash schemes of bundles.

A bundle hash is :func:`skillharness.util.canonical.content_hash` over a value that carries a
``scheme`` string, so a change of what is hashed changes every hash rather than silently colliding
with an old one. Hashing content (not files) means reformatting ``tools.yaml`` does not change a
hash, while any change to any text does.
"""

from __future__ import annotations

from skillharness.util.canonical import canonical_bytes, content_hash

__all__ = ["BUNDLE_HASH_SCHEME", "RELEVANT_HASH_SCHEME", "canonical_bytes", "content_hash"]

BUNDLE_HASH_SCHEME = "skillharness.bundle/1"
RELEVANT_HASH_SCHEME = "skillharness.relevant/1"
