"""The cache key: sha256 of canonical JSON over everything that shapes a response (audit P1-1).

In the key: a key version, the model, the full messages (tool calls and tool results included),
tools, tool_choice, response_format, *every* :class:`SamplingParams` field (unset ones as explicit
nulls, so adding a field changes every key rather than silently aliasing), extra_body, the sample
index and the salt, and ``media_io_kwargs`` when the request carries it. That one is named only
when set: it came after the key's first version, and a request without it (every ``images``
request) must keep the key it always had, or every stored response would be asked again.

Out of the key: the API key, timeouts, retry settings and the stream flag, which change how we
ask, not what is answered. The role is out too: it is derived from the
request content (tools or schema name), so it would add nothing.

Values are hashed as sent, without normalisation: ``1`` and ``1.0`` in ``extra_body``, or NFC and
NFD spellings of the same text, are different bytes on the wire (and different tokens), so they
are different keys. The cost is at worst a second call, never another request's answer.
"""

from __future__ import annotations

from typing import Any

from skillharness.errors import FatalLLMError
from skillharness.llm.types import ChatRequest, SamplingParams
from skillharness.util.canonical import canonical_json, content_hash

__all__ = ["KEY_VERSION", "cache_key", "canonical_json", "key_material"]

KEY_VERSION = 1


def _sampling_material(sampling: SamplingParams) -> dict[str, Any]:
    # Iterate the model's declared fields so a new field enters the key without a code change.
    dumped = sampling.model_dump(mode="json")
    return {name: dumped.get(name) for name in type(sampling).model_fields}


def key_material(request: ChatRequest, salt: str | None) -> dict[str, Any]:
    """The exact object that is hashed (exposed so tests and docs can show it)."""
    material: dict[str, Any] = {
        "v": KEY_VERSION,
        "model": request.model,
        "messages": list(request.messages),
        "tools": list(request.tools) if request.tools is not None else None,
        "tool_choice": request.tool_choice,
        "response_format": request.response_format,
        "sampling": _sampling_material(request.sampling),
        "extra_body": request.extra_body,
        "sample_idx": request.sample_idx,
        "salt": salt,
    }
    if request.media_io_kwargs is not None:
        material["media_io_kwargs"] = request.media_io_kwargs
    return material


def cache_key(request: ChatRequest, salt: str | None) -> str:
    """Hex sha256 of the canonical JSON of :func:`key_material`.

    Raises FatalLLMError when the request holds a value JSON cannot carry (NaN, an infinity, a
    lone surrogate, an object): such a request cannot be sent either, so it is refused, never retried.
    """
    try:
        return content_hash(key_material(request, salt))
    except (ValueError, TypeError) as exc:  # UnicodeEncodeError (a lone surrogate) is a ValueError
        raise FatalLLMError(
            f"request for role {request.role.value} is not valid JSON (messages, tools or extra_body): {exc}",
            kind="invalid_request",
        ) from exc
