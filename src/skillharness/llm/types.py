"""Typed requests and responses of the LLM layer, and the one interface every client offers.

Higher layers (agent, train) depend on :class:`ChatModel` only; the cache, breaker, retry and
accounting are wrappers that satisfy the same protocol.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal, Protocol

from pydantic import ConfigDict, Field, model_validator

from skillharness.llm.media import MEDIA_IO_KWARGS
from skillharness.llm.roles import Role
from skillharness.util.model import StrictModel

__all__ = [
    "PER_DRAW",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "SamplingParams",
    "ToolCall",
    "Usage",
    "draw_seed",
]

# ``seed: per_draw``: each draw gets its own seed, the same for every prompt asked at that draw.
PER_DRAW = "per_draw"
_SEED_BITS = 31  # llama.cpp and vLLM take any non-negative 32-bit seed; 31 bits fit both


def draw_seed(question_id: str, sample_idx: int, salt: str) -> int:
    """The request seed of draw ``(question_id, sample_idx)`` under the run-level ``salt``.

    It does not depend on the prompt, so the incumbent and the candidate of one paired draw carry
    the same seed (common random numbers), while two draws (another question or another sample
    index) carry different ones. A stable hash: a replay or another process derives the same seed.
    """
    digest = hashlib.sha256(f"{salt}\x00{question_id}\x00{sample_idx}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % (1 << _SEED_BITS)


class SamplingParams(StrictModel):
    """Every sampling parameter the harness may send. All of them enter the cache key."""

    # NaN and infinities are not JSON: no server can be sent them and no cache key can name them.
    model_config = ConfigDict(allow_inf_nan=False)

    # The OpenAI API's ranges (temperature as train.roles.*.temperature): a value outside one is
    # refused in the config rather than by every request's HTTP 400.
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    top_k: int | None = None
    max_tokens: int | None = Field(None, ge=1)
    # An int is sent as is. ``per_draw`` is resolved by the agent into :func:`draw_seed` of each
    # draw before a request is built; a request never carries it (ChatRequest refuses it).
    seed: int | Literal["per_draw"] | None = None
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    repetition_penalty: float | None = None
    stop: tuple[str, ...] | None = None

    @property
    def per_draw(self) -> bool:
        """Whether every draw gets its own seed (see :func:`draw_seed`)."""
        return self.seed == PER_DRAW

    def for_draw(self, question_id: str, sample_idx: int, salt: str) -> SamplingParams:
        """These parameters as sent for one draw: a ``per_draw`` seed resolved, anything else as is."""
        if not self.per_draw:
            return self
        return self.model_copy(update={"seed": draw_seed(question_id, sample_idx, salt)})


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
    # The media loaders' per-request settings by modality (``{"video": {...}}``), sent as the
    # top-level ``media_io_kwargs``: what a video part's frames are (their indices and the source
    # fps) or how many the server samples. Its own field, not ``extra_body``: it is part of what the
    # model sees, and the cache key names it only when set, so a request without it (every
    # ``images`` request) keeps the key it had before the field existed.
    media_io_kwargs: dict[str, dict[str, Any]] | None = None
    # Which independent draw this is. Distinct draws must never share a cache entry (audit P1-1).
    sample_idx: int = 0
    # Routing only: requests with one key go to one replica while it is healthy (both arms of a
    # paired draw share its sampler and prefix cache). Neither sent nor part of the cache key.
    affinity: str | None = None

    @model_validator(mode="after")
    def _seed_resolved(self) -> ChatRequest:
        if self.sampling.per_draw:
            raise ValueError("sampling.seed 'per_draw' must be resolved per draw before a request is built")
        if self.extra_body and MEDIA_IO_KWARGS in self.extra_body:
            raise ValueError(f"{MEDIA_IO_KWARGS} has its own field; do not send it through extra_body too")
        return self


class ToolCall(StrictModel):
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it; parsing is the caller's business


# More tokens than any context holds: a count past it is a server's garbage, not a usage.
MAX_TOKEN_COUNT = 10**9


class Usage(StrictModel):
    prompt_tokens: int = Field(0, ge=0, le=MAX_TOKEN_COUNT)
    completion_tokens: int = Field(0, ge=0, le=MAX_TOKEN_COUNT)

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
