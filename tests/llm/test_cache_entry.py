"""Cache keys and entries, example by example: the canonical form, key stability, expiry."""

from __future__ import annotations

import json

import pytest
from llm_support import make_request

from skillharness.llm.cache.entry import ENTRY_SCHEMA, decode_entry, encode_entry, is_storable
from skillharness.llm.cache.key import KEY_VERSION, cache_key, canonical_json, key_material
from skillharness.llm.types import ChatResponse, ToolCall, Usage


def test_canonical_json_is_sorted_compact_utf8_and_refuses_nan() -> None:
    assert canonical_json({"b": [1, 2], "a": "é"}) == '{"a":"é","b":[1,2]}'
    with pytest.raises(ValueError, match="JSON compliant"):
        canonical_json({"x": float("nan")})


def test_the_key_of_a_fixed_request_never_changes() -> None:
    # Every user's cache is addressed by these keys: a change here silently empties it. Change
    # KEY_VERSION on purpose (and this value with it), never by accident.
    request = make_request("What is lit?", tools=({"type": "function", "function": {"name": "f"}},))
    material = key_material(request, "salt-1")
    assert material["v"] == KEY_VERSION == 1
    assert material["tools"] == [{"type": "function", "function": {"name": "f"}}]
    assert key_material(make_request("x"), None)["tools"] is None
    assert cache_key(request, "salt-1") == "3147dc8224a6c73ca8632d592caf315a019f66093401fa66ba2dc8acb7188d89"


def _response(**fields: object) -> ChatResponse:
    defaults: dict[str, object] = {
        "content": "Das Licht ist an: é",
        "finish_reason": "stop",
        "usage": Usage(prompt_tokens=3, completion_tokens=2),
        "model": "m",
    }
    return ChatResponse(**{**defaults, **fields})


def test_an_entry_round_trips_as_a_cache_hit() -> None:
    calls = (ToolCall(id="c", name="get_frames", arguments="{}"),)
    raw = encode_entry("k", _response(tool_calls=calls, finish_reason="tool_calls"), 10.0, None)
    assert "é".encode() in raw  # UTF-8, not \\u escapes
    data = json.loads(raw)
    assert (data["format"], data["key"], data["created_at"], data["expires_at"]) == (
        ENTRY_SCHEMA,
        "k",
        10.0,
        None,
    )
    decoded = decode_entry(raw, "k", now=1e12)  # no expiry: valid forever
    assert decoded is not None
    assert decoded.cache_hit
    assert (decoded.content, decoded.tool_calls, decoded.finish_reason) == (
        "Das Licht ist an: é",
        calls,
        "tool_calls",
    )
    assert (decoded.usage.prompt_tokens, decoded.usage.completion_tokens, decoded.model) == (3, 2, "m")


def test_an_entry_expires_exactly_at_its_expiry() -> None:
    raw = encode_entry("k", _response(), 0.0, 100.0)
    assert decode_entry(raw, "k", now=99.999) is not None
    assert decode_entry(raw, "k", now=100.0) is None


@pytest.mark.parametrize("raw", [b"[1, 2]", b"not json", b"\xff\xfe", b'{"format": "other"}', b"null"])
def test_a_corrupt_or_foreign_entry_is_a_miss(raw: bytes) -> None:
    assert decode_entry(raw, "k", now=0.0) is None


def test_an_entry_under_another_key_is_a_miss() -> None:
    raw = encode_entry("k1", _response(), 0.0, None)
    assert decode_entry(raw, "k2", now=0.0) is None


@pytest.mark.parametrize(
    ("fields", "storable"),
    [
        ({}, True),
        ({"finish_reason": "tool_calls"}, True),
        ({"finish_reason": "length"}, False),
        ({"cache_hit": True}, False),
    ],
)
def test_only_complete_fresh_responses_are_stored(fields: dict[str, object], storable: bool) -> None:
    assert is_storable(_response(**fields)) is storable
