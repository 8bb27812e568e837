"""Helpers for the LLM tests: a scripted OpenAI-style server on loopback and config builders."""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from skillharness.llm.config import BreakerConfig, EndpointConfig, LLMConfig, RetryConfig, TimeoutConfig
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatRequest, SamplingParams
from skillharness.util.asgi import BackgroundServer


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
    """One chat.completion.chunk payload."""
    body: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "model": "scripted"}
    body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    body.update(extra)
    return json.dumps(body)


def ok_frames(
    content: str = "hello", finish: str = "stop", prompt: int = 7, completion: int = 3
) -> list[str]:
    """A complete, well-formed stream (without the final [DONE], which Reply adds)."""
    half = len(content) // 2
    return [
        chunk({"role": "assistant", "content": content[:half]}),
        chunk({"content": content[half:]}),
        chunk({}, finish),
        json.dumps({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}),
    ]


@dataclass
class Reply:
    """What the scripted server answers to one request."""

    status: int = 200
    frames: list[str] = field(default_factory=ok_frames)
    done: bool = True
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    delay_s: float = 0.0
    raw: list[bytes] | None = None  # sent verbatim, piece by piece, instead of frames and [DONE]


class ScriptedServer:
    """An OpenAI-style /v1/chat/completions that answers from a queue of :class:`Reply`.

    An empty queue answers ``default`` (a complete "hello"). Every request body and its
    headers are recorded.
    """

    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()
        self.default = Reply()
        self.requests: list[dict[str, Any]] = []
        self.arrivals: list[float] = []  # time.monotonic() of each request (same process)
        self.headers: list[dict[str, str]] = []
        self.active = 0
        self.max_active = 0
        self._server: BackgroundServer | None = None
        self.port = 0

    def push(self, *replies: Reply) -> None:
        self.queue.extend(replies)

    async def _chat(self, request: Request) -> Response:
        self.arrivals.append(time.monotonic())
        self.requests.append(await request.json())
        self.headers.append(dict(request.headers))
        reply = self.queue.popleft() if self.queue else self.default
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
        finally:
            self.active -= 1
        if reply.status != 200 or reply.body:
            return Response(
                reply.body or json.dumps({"error": {"message": "scripted"}}),
                reply.status,
                headers=reply.headers,
                media_type="application/json",
            )

        async def frames() -> AsyncIterator[bytes]:
            if reply.raw is not None:
                for piece in reply.raw:
                    yield piece
                    await asyncio.sleep(0.005)  # separate TCP writes, so pieces arrive apart
                return
            for frame in reply.frames:
                yield f"data: {frame}\n\n".encode()
            if reply.done:
                yield b"data: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream", headers=reply.headers)

    def start(self) -> ScriptedServer:
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        self._server = BackgroundServer(app, name="scripted-server").start()
        self.port = self._server.port
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def fast_llm_config(base_url: str, **overrides: Any) -> LLMConfig:
    """An LLMConfig with quick retries and short timeouts, suitable for tests."""
    endpoint = overrides.pop("endpoint", None) or EndpointConfig(base_url=base_url)
    retry = overrides.pop("retry", None) or RetryConfig(base_delay_s=0.01, max_delay_s=0.05)
    timeouts = overrides.pop("timeouts", None) or TimeoutConfig(read_s=5, total_s=10)
    # A high threshold keeps the breaker out of tests that are about something else.
    breaker = overrides.pop("breaker", None) or BreakerConfig(failure_threshold=1000, cooldown_s=0.05)
    return LLMConfig(
        model="scripted", endpoints=(endpoint,), retry=retry, timeouts=timeouts, breaker=breaker, **overrides
    )


def make_request(text: str = "hi", role: Role = Role.JUDGE, **fields: Any) -> ChatRequest:
    """A small request for ``role``."""
    sampling = fields.pop("sampling", SamplingParams(temperature=0.0))
    return ChatRequest(
        model="scripted",
        messages=({"role": "user", "content": text},),
        role=role,
        sampling=sampling,
        **fields,
    )
