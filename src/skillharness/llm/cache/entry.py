"""What a cache value is: versioned JSON, validated on read (never pickle).

A value that does not parse, carries another schema version, belongs to another key, or has
expired is not an error: the caller treats it as a miss, deletes it and counts it.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import ValidationError

from skillharness.llm.types import ChatResponse, ToolCall, Usage
from skillharness.util.model import StrictModel

__all__ = [
    "ENTRY_SCHEMA",
    "STORED_FINISH_REASONS",
    "CacheEntry",
    "StoredResponse",
    "decode_entry",
    "encode_entry",
    "is_storable",
]

ENTRY_SCHEMA = "skillharness.cache.entry/1"

# Only complete answers are stored. "length" (cut at max_tokens) is returned to the caller but
# not stored: it is an incomplete output, and storing it would freeze a cut answer into every
# resume and later epoch (docs/llm.md explains the trade-off).
STORED_FINISH_REASONS = frozenset({"stop", "tool_calls"})


class StoredResponse(StrictModel):
    """The response fields worth keeping; latency, endpoint and cache_hit are per call."""

    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: Literal["stop", "tool_calls"]
    usage: Usage
    model: str


class CacheEntry(StrictModel):
    """One stored value."""

    format: Literal["skillharness.cache.entry/1"]
    key: str
    created_at: float
    expires_at: float | None
    response: StoredResponse


def is_storable(response: ChatResponse) -> bool:
    """True for complete successful responses (see STORED_FINISH_REASONS)."""
    return not response.cache_hit and response.finish_reason in STORED_FINISH_REASONS


def encode_entry(key: str, response: ChatResponse, now: float, expires_at: float | None) -> bytes:
    """Serialise a storable response as a versioned JSON entry."""
    stored = StoredResponse(
        content=response.content,
        tool_calls=response.tool_calls,
        finish_reason=response.finish_reason,  # type: ignore[arg-type]  # checked by is_storable
        usage=response.usage,
        model=response.model,
    )
    payload = {
        "format": ENTRY_SCHEMA,
        "key": key,
        "created_at": now,
        "expires_at": expires_at,
        "response": stored.model_dump(mode="json"),
    }
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def decode_entry(raw: bytes, key: str, now: float) -> ChatResponse | None:
    """The cached response, or ``None`` when the value is corrupt, foreign, or expired."""
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            return None
        entry = CacheEntry.model_validate(data)
    except (ValueError, ValidationError, UnicodeDecodeError, TypeError):
        return None
    if entry.key != key or (entry.expires_at is not None and entry.expires_at <= now):
        return None
    stored = entry.response
    return ChatResponse(
        content=stored.content,
        tool_calls=stored.tool_calls,
        finish_reason=stored.finish_reason,
        usage=stored.usage,
        model=stored.model,
        cache_hit=True,
    )
