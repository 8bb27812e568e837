"""Canonical JSON and content hashes: the one rule every hash in the project follows.

Canonical JSON is UTF-8 JSON with keys sorted, no insignificant whitespace and non-ASCII kept as
it is. NaN and the infinities are refused (``ValueError``) rather than written as the non-JSON
tokens ``NaN``/``Infinity``: a value that cannot round-trip through JSON has no stable identity,
so hashing it would give a hash nothing else could reproduce. Pydantic models are hashed through
their JSON dump, so a model and the dict it dumps to hash alike.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

__all__ = ["canonical_bytes", "canonical_json", "content_hash"]


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value`` (a JSON-compatible value or a pydantic model).

    Raises:
        ValueError: ``value`` holds NaN, an infinity or a lone surrogate.
        TypeError: ``value`` holds something JSON cannot carry (an arbitrary object).
    """
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_bytes(value: Any) -> bytes:
    """:func:`canonical_json` encoded as UTF-8."""
    return canonical_json(value).encode("utf-8")


def content_hash(value: Any) -> str:
    """Lower-case hex sha256 of :func:`canonical_bytes` of ``value``."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()
