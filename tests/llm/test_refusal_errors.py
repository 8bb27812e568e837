"""A request the server refuses for its size: the error names what the request carried and the limit
it most likely hit, the accountant counts it per role, and the cache never keeps it.

A real simulator on loopback, set up below the agent's requests (``faults.refuse_body_over`` /
``refuse_images_over``), behind the whole stack (retry, breaker, router, SQLite cache).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillharness.errors import FatalLLMError
from skillharness.llm import (
    REFUSAL_LIMITS,
    TOOL_SUBMIT_ANSWER,
    CacheConfig,
    EndpointConfig,
    LLMConfig,
    Role,
    build_chat_model,
    refuses_request,
)
from skillharness.llm.errors import likely_limit
from skillharness.llm.types import ChatRequest, SamplingParams
from skillharness.sim import SimServer

_PIXEL = "data:image/jpeg;base64," + "A" * 200
_SUBMIT = {
    "type": "function",
    "function": {"name": TOOL_SUBMIT_ANSWER, "parameters": {"type": "object", "properties": {}}},
}


def _asked(sim: SimServer) -> str:
    """A question the simulator holds (the bench's first): it refuses an agent request about any other."""
    question = next(iter(sim.world.questions.values()))
    return f"Question: {question.question}\nOptions:\n" + "\n".join(question.options)


def _agent_request(images: int, text: str) -> ChatRequest:
    parts: list[dict[str, object]] = [{"type": "text", "text": text}]
    parts += [{"type": "image_url", "image_url": {"url": _PIXEL}} for _ in range(images)]
    return ChatRequest(
        model="sim-vl",
        messages=({"role": "user", "content": parts},),
        role=Role.AGENT,
        tools=(_SUBMIT,),
        tool_choice="auto",
        sampling=SamplingParams(temperature=0.0, max_tokens=64),
    )


def _llm(sim: SimServer) -> LLMConfig:
    return LLMConfig(model="sim-vl", endpoints=(EndpointConfig(base_url=sim.base_url, name="gpu-a"),))


async def test_a_413_names_the_body_size_the_images_and_the_body_limit(sim: SimServer) -> None:
    sim.configure_faults(refuse_body_over=1024)
    async with build_chat_model(_llm(sim)) as stack:
        with pytest.raises(FatalLLMError) as caught:
            await stack.complete(_agent_request(images=8, text=_asked(sim)))
        usage = stack.accountant.by_role[Role.AGENT]
    error = caught.value
    assert refuses_request(error)
    assert error.context["status"] == 413
    assert error.context["endpoint"] == "gpu-a"
    assert error.context["images"] == 8
    assert error.context["max_tokens"] == 64
    assert error.context["body_bytes"] > 1024
    assert error.context["limit"] == "body_size"
    assert "likely limit: body_size" in str(error)
    assert (usage.failed_calls, usage.refused) == (1, 1)
    assert sim.stats()["statuses"] == {"413": 1}, "a refusal is final: not retried"


async def test_too_many_images_is_named_as_the_images_per_prompt_limit(sim: SimServer) -> None:
    sim.configure_faults(refuse_images_over=4)
    async with build_chat_model(_llm(sim)) as stack:
        answered = await stack.complete(_agent_request(images=4, text=_asked(sim)))
        with pytest.raises(FatalLLMError) as caught:
            await stack.complete(_agent_request(images=5, text=_asked(sim)))
    assert answered.content is not None or answered.tool_calls
    assert caught.value.context["status"] == 400
    assert caught.value.context["limit"] == "images_per_prompt"
    assert "At most 4 image(s)" in str(caught.value)


async def test_a_refused_request_is_never_cached_and_is_asked_again(sim: SimServer, tmp_path: Path) -> None:
    sim.configure_faults(refuse_body_over=1024)
    cache = CacheConfig(url=f"sqlite:///{tmp_path / 'cache.sqlite'}")
    async with build_chat_model(_llm(sim), cache) as stack:
        for _ in range(2):
            with pytest.raises(FatalLLMError):
                await stack.complete(_agent_request(images=8, text=_asked(sim)))
        sim.configure_faults()  # the limit raised: the same request now reaches the model
        answered = await stack.complete(_agent_request(images=8, text=_asked(sim)))
    assert not answered.cache_hit
    assert sim.stats()["statuses"] == {"413": 2, "200": 1}


@pytest.mark.parametrize(
    ("status", "message", "limit"),
    [
        (413, "<html><title>413 Request Entity Too Large</title></html>", "body_size"),
        (400, "At most 4 image(s) may be provided in one prompt.", "images_per_prompt"),
        (
            400,
            "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens",
            "max_tokens",
        ),
        (400, "max_tokens must be at most 4096", "max_tokens"),
        (422, "something else", "unknown"),
    ],
)
def test_the_likely_limit_follows_the_status_and_the_servers_words(
    status: int, message: str, limit: str
) -> None:
    assert likely_limit(status, message) == limit
    assert limit in REFUSAL_LIMITS
