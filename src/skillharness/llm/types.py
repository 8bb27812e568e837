"""Typed requests and responses of the LLM layer, and the one interface every client offers.

Higher layers (agent, train) depend on :class:`ChatModel` only; the cache, breaker, retry and
accounting are wrappers that satisfy the same protocol.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import ConfigDict, Field

from skillharness.llm.roles import Role
from skillharness.util.model import StrictModel

__all__ = ["ChatModel", "ChatRequest", "ChatResponse", "SamplingParams", "ToolCall", "Usage"]


class SamplingParams(StrictModel):
    """Every sampling parameter the harness may send. All of them enter the cache key."""

    # NaN and infinities are not JSON: no server can be sent them and no cache key can name them.
    model_config = ConfigDict(allow_inf_nan=False)

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_tokens: int | None = None
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    repetition_penalty: float | None = None
    stop: tuple[str, ...] | None = None


class ChatRequest(StrictModel):
    """One chat-completions call, fully specified (what is sent, minus transport settings)."""

    model: str
    messages: tuple[dict[str, Any], ...]
    role: Role
    tools: tuple[dict[str, Any], ...] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    sampling: SamplingParams = Field(default_factory=SamplingParams)
    extra_body: dict[str, Any] | None = None
    # Which independent draw this is. Distinct draws must never share a cache entry (audit P1-1).
    sample_idx: int = 0
    # Routing only: requests with one key go to one replica while it is healthy (both arms of a
    # paired draw share its sampler and prefix cache). Neither sent nor part of the cache key.
    affinity: str | None = None


class ToolCall(StrictModel):
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it; parsing is the caller's business


class Usage(StrictModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ChatResponse(StrictModel):
    """A complete, successful response (incomplete ones are errors, never responses)."""

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    latency_s: float = 0.0
    cache_hit: bool = False
    endpoint: str = ""


class ChatModel(Protocol):
    """Anything that can answer a :class:`ChatRequest`."""

    async def complete(self, request: ChatRequest) -> ChatResponse: ...
