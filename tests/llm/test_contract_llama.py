"""Contract tests: our client against a real llama.cpp ``llama-server`` with a small instruct model.

The binary and model come from ``scripts/ensure-llama-server.sh`` (cached build); export its
output (``LLAMA_SERVER=...``, ``LLAMA_MODEL=...``) or let these tests look in its default cache.
Without them every test here skips and says why.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import httpx
import pytest

from llama_support import LlamaServer, artefacts
from skillharness.errors import TransientLLMError
from skillharness.llm import build_chat_model
from skillharness.llm.cache.opener import open_backend
from skillharness.llm.config import BreakerConfig, CacheConfig, EndpointConfig, LLMConfig, RetryConfig
from skillharness.llm.roles import RESPONSE_SCHEMAS, Role, response_format
from skillharness.llm.types import ChatRequest, SamplingParams

pytestmark = [pytest.mark.contract, pytest.mark.slow]


def _config(base_url: str, **overrides: object) -> LLMConfig:
    return LLMConfig(
        model="smollm2",
        endpoints=(EndpointConfig(base_url=base_url, name="llama"),),
        retry=overrides.pop("retry", RetryConfig(base_delay_s=0.05, max_delay_s=0.1)),  # type: ignore[arg-type]
        breaker=BreakerConfig(failure_threshold=100, cooldown_s=0.1),
        **overrides,  # type: ignore[arg-type]
    )


def _request(text: str, **fields: object) -> ChatRequest:
    return ChatRequest(
        model="smollm2",
        messages=({"role": "system", "content": "You are terse."}, {"role": "user", "content": text}),
        role=fields.pop("role", Role.JUDGE),  # type: ignore[arg-type]
        sampling=fields.pop("sampling", SamplingParams(temperature=0.0, max_tokens=24, seed=1)),  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


async def test_chat_content_and_usage(llama: LlamaServer) -> None:
    async with build_chat_model(_config(llama.base_url)) as model:
        response = await model.complete(_request("Say hello."))
    assert response.content
    assert response.content.strip()
    assert response.finish_reason in {"stop", "length"}
    assert response.usage.prompt_tokens > 5
    assert 0 < response.usage.completion_tokens <= 24
    assert response.endpoint == "llama"
    assert response.latency_s > 0
    assert model.accountant.by_role[Role.JUDGE].completion_tokens == response.usage.completion_tokens


async def test_stream_ends_with_done_after_a_finish_reason(llama: LlamaServer) -> None:
    body = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": "Count to three."}],
        "max_tokens": 16,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    frames: list[str] = []
    url = f"{llama.base_url}/chat/completions"
    async with httpx.AsyncClient(timeout=60) as client, client.stream("POST", url, json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                frames.append(line.removeprefix("data: "))
    assert frames[-1] == "[DONE]"
    finishes = [c["choices"][0]["finish_reason"] for c in map(json.loads, frames[:-1]) if c.get("choices")]
    assert finishes[-1] in {"stop", "length"}
    assert any(json.loads(f).get("usage") for f in frames[:-1])


async def test_json_schema_response_format(llama: LlamaServer) -> None:
    request = _request(
        "Two candidates: 0 is 'be careful', 1 is 'look at the frames'. Which is better? Answer in JSON.",
        role=Role.RANK,
        response_format=response_format(Role.RANK),
        sampling=SamplingParams(temperature=0.0, max_tokens=200, seed=1),
    )
    async with build_chat_model(_config(llama.base_url)) as model:
        response = await model.complete(request)
    assert response.finish_reason == "stop", response.content
    parsed = json.loads(response.content or "")
    assert set(parsed) == set(RESPONSE_SCHEMAS[Role.RANK]["required"])
    assert isinstance(parsed["choice"], int)
    assert parsed["choice"] >= 0
    assert isinstance(parsed["reason"], str)


async def test_server_killed_mid_stream_is_transient_and_never_cached(tmp_path: Path) -> None:
    server = LlamaServer(*artefacts())
    cache = CacheConfig(url=f"sqlite:///{tmp_path / 'cache.sqlite'}")
    try:
        config = _config(
            server.base_url, retry=RetryConfig(max_attempts=2, base_delay_s=0.05, max_delay_s=0.1)
        )
        request = _request(
            "Write a long story about a lighthouse.",
            sampling=SamplingParams(temperature=0.0, max_tokens=2000),
        )
        async with build_chat_model(config, cache) as model:
            task = asyncio.create_task(model.complete(request))
            await asyncio.sleep(1.5)  # generation of 2000 tokens takes far longer
            assert not task.done()
            server.proc.send_signal(signal.SIGKILL)
            with pytest.raises(TransientLLMError) as info:
                await task
        assert info.value.context["attempts"] == 2
        assert info.value.context["kind"] in {
            "remote_protocol_error",
            "read_error",
            "truncated_stream",
            "connect_error",
        }
    finally:
        server.stop()
    backend = open_backend(cache.url, cache.namespace)
    assert (await backend.stats()).entries == 0
    await backend.aclose()
