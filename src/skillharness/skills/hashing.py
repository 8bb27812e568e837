"""Canonical content hashes of bundles.

A hash is ``sha256`` (lower-case hex) over the canonical encoding of a JSON value: UTF-8 JSON with
keys sorted, no insignificant whitespace, non-ASCII characters kept as they are, NaN refused.
Every value carries a ``scheme`` string, so a change of what is hashed changes every hash rather
than silently colliding with an old one. Hashing content (not files) means reformatting
``tools.yaml`` does not change a hash, while any change to any text does.
"""

from __future__ import annotations

import json
from typing import Any

from skillharness.util.atomic import sha256_bytes

__all__ = ["BUNDLE_HASH_SCHEME", "RELEVANT_HASH_SCHEME", "canonical_bytes", "content_hash"]

BUNDLE_HASH_SCHEME = "skillharness.bundle/1"
RELEVANT_HASH_SCHEME = "skillharness.relevant/1"


def canonical_bytes(value: Any) -> bytes:
    """The canonical encoding of a JSON-compatible ``value``."""
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


def content_hash(value: Any) -> str:
    """Hex sha256 of :func:`canonical_bytes` of ``value``."""
    return sha256_bytes(canonical_bytes(value))
