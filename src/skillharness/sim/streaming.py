"""Putting a :class:`Reply` on the wire, streamed or not, with the stream faults applied."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from skillharness.sim.config import FaultConfig, FaultKind
from skillharness.sim.wire import (
    SSE_DONE,
    Reply,
    chunk,
    completion_body,
    error_body,
    estimate_tokens,
    sse,
    stream_deltas,
    usage_chunk,
)

__all__ = ["send_reply"]

Send = Callable[[dict[str, Any]], Awaitable[None]]
Meta = tuple[str, str, int]  # completion id, model, created

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
]
_MALFORMED = (
    b'data: {"id": "chatcmpl-sim", "object": "chat.completion.chunk", "choices": [{"delta": {"con\n\n'
)


async def send_reply(
    send: Send,
    body: dict[str, Any],
    reply: Reply,
    meta: Meta,
    fault: FaultKind | None,
    faults: FaultConfig,
    per_token_s: float,
    dropped: type[Exception],
) -> int:
    """Send ``reply`` for request ``body`` and return the HTTP status sent.

    ``dropped`` is raised to drop the connection (then nothing is returned).
    """
    if body.get("stream"):
        await _send_stream(send, body, reply, meta, fault, faults.cut_after_chunks, per_token_s, dropped)
        return 200
    return await _send_whole(send, reply, meta, fault, per_token_s, dropped)


def _frames(body: dict[str, Any], reply: Reply, meta: Meta) -> list[tuple[bytes, int]]:
    """Every SSE frame before ``[DONE]`` with the tokens it carries (for per-token pacing)."""
    cid, model, created = meta
    frames = []
    for delta in stream_deltas(reply):
        text = delta.get("content") or "".join(
            call.get("function", {}).get("arguments", "") for call in delta.get("tool_calls", [])
        )
        frames.append((sse(chunk(delta, cid, model, created)), estimate_tokens(text)))
    final = chunk({}, cid, model, created, finish_reason=reply.finish_reason)
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    if not include_usage:
        # Usage is always reported: without a usage chunk it rides on the finish chunk.
        final["usage"] = usage_chunk(reply, cid, model, created)["usage"]
    frames.append((sse(final), 0))
    if include_usage:
        frames.append((sse(usage_chunk(reply, cid, model, created)), 0))
    return frames


async def _body(send: Send, data: bytes, more: bool = True) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": more})


async def _send_stream(
    send: Send,
    body: dict[str, Any],
    reply: Reply,
    meta: Meta,
    fault: FaultKind | None,
    cut_after: int,
    per_token_s: float,
    dropped: type[Exception],
) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
    frames = _frames(body, reply, meta)
    cut_at = min(cut_after, len(frames))
    for index in range(len(frames) + 1):
        if index == cut_at and fault is not None and await _stream_fault(send, fault, dropped):
            return
        if index == len(frames):
            break
        data, tokens = frames[index]
        if per_token_s > 0 and tokens:
            await asyncio.sleep(per_token_s * tokens)
        await _body(send, data)
    await _body(send, SSE_DONE, more=False)


async def _stream_fault(send: Send, fault: FaultKind, dropped: type[Exception]) -> bool:
    """Apply a stream fault at the cut point; True when the response is over."""
    if fault is FaultKind.TRUNCATE:
        await _body(send, b"", more=False)
        return True
    if fault is FaultKind.RESET:
        raise dropped("simulated connection reset mid-stream")
    if fault is FaultKind.VLLM_ERROR_FRAME:
        await _body(send, sse(error_body("Simulated engine error (vLLM style)", "InternalServerError", 500)))
        await _body(send, SSE_DONE, more=False)
        return True
    if fault is FaultKind.LLAMACPP_ERROR_FRAME:
        frame = {
            "error": {"code": 500, "message": "Simulated error (llama.cpp style)", "type": "server_error"}
        }
        await _body(send, sse(frame), more=False)
        return True
    if fault is FaultKind.MALFORMED_CHUNK:
        await _body(send, _MALFORMED)
    return False


async def _send_whole(
    send: Send,
    reply: Reply,
    meta: Meta,
    fault: FaultKind | None,
    per_token_s: float,
    dropped: type[Exception],
) -> int:
    if per_token_s > 0 and reply.completion_tokens:
        await asyncio.sleep(per_token_s * reply.completion_tokens)
    status = 200
    data = json.dumps(completion_body(reply, *meta)).encode("utf-8")
    if fault in (FaultKind.VLLM_ERROR_FRAME, FaultKind.LLAMACPP_ERROR_FRAME):
        status = 500
        data = json.dumps(error_body("Simulated engine error", "InternalServerError", 500)).encode()
    elif fault is FaultKind.MALFORMED_CHUNK:
        data = data[: len(data) // 2]
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    if fault in (FaultKind.TRUNCATE, FaultKind.RESET):
        await _body(send, data[: len(data) // 2])
        raise dropped("simulated connection drop mid-body")
    await _body(send, data, more=False)
    return status
