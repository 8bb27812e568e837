"""OpenAI chat-completions wire format: replies as JSON bodies or as SSE chunk sequences.

Streams follow what vLLM and OpenAI send: a first delta with ``role``, content fragments, and
for each tool call a delta carrying ``index``, ``id``, ``type`` and ``function.name`` (with empty
arguments) followed by deltas carrying only argument fragments; then a delta with the
``finish_reason``, an optional usage chunk (``choices: []``), and ``data: [DONE]``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FRAGMENT_CHARS",
    "SSE_DONE",
    "Reply",
    "ReplyToolCall",
    "chunk",
    "completion_body",
    "error_body",
    "estimate_tokens",
    "sse",
    "stream_deltas",
    "usage_chunk",
]

SSE_DONE = b"data: [DONE]\n\n"
FRAGMENT_CHARS = 12  # characters per streamed fragment (about three tokens)


@dataclass(frozen=True)
class ReplyToolCall:
    id: str
    name: str
    arguments: str  # JSON text


@dataclass(frozen=True)
class Reply:
    """What a role decided to say, before it is put on the wire."""

    content: str | None
    tool_calls: tuple[ReplyToolCall, ...] = ()
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = field(default=0)


def estimate_tokens(text: str) -> int:
    """A stable token estimate (about four characters per token), at least 1 for non-empty text."""
    return math.ceil(len(text) / 4) if text else 0


def error_body(message: str, type_: str, code: str | int | None, param: str | None = None) -> dict[str, Any]:
    """The OpenAI error envelope ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }


def completion_body(reply: Reply, completion_id: str, model: str, created: int) -> dict[str, Any]:
    """A non-streamed ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in reply.tool_calls
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish_reason}],
        "usage": _usage(reply),
    }


def _fragments(text: str) -> list[str]:
    return [text[i : i + FRAGMENT_CHARS] for i in range(0, len(text), FRAGMENT_CHARS)]


def stream_deltas(reply: Reply) -> list[dict[str, Any]]:
    """The ``delta`` objects of a streamed reply, in order, excluding the finish delta."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas.extend({"content": piece} for piece in _fragments(reply.content or ""))
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        deltas.append({"tool_calls": [head]})
        deltas.extend(
            {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            for piece in _fragments(call.arguments)
        )
    return deltas


def chunk(
    delta: dict[str, Any], completion_id: str, model: str, created: int, finish_reason: str | None = None
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` object carrying ``delta``."""
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }


def usage_chunk(reply: Reply, completion_id: str, model: str, created: int) -> dict[str, Any]:
    """The trailing usage chunk sent when ``stream_options.include_usage`` is true."""
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": _usage(reply),
    }


def sse(payload: dict[str, Any]) -> bytes:
    """One SSE event ``data: <json>\\n\\n``."""
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode("utf-8") + b"\n\n"
