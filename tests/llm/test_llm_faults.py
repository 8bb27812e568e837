"""Every fault the simulator injects is survived with the right number of retries, and no bad
response is ever cached (audit P1-2, P1-3)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from llm_support import fast_llm_config

from net_support import free_port
from skillharness.errors import TransientLLMError
from skillharness.llm import build_chat_model
from skillharness.llm.cache.opener import open_backend
from skillharness.llm.config import CacheConfig, EndpointConfig, LLMConfig, RetryConfig, TimeoutConfig
from skillharness.llm.roles import Role, response_format
from skillharness.llm.types import ChatRequest
from skillharness.sim.config import FaultConfig, FaultKind, SimConfig
from skillharness.sim.faults import FATAL_FAULTS, OUTPUT_FAULTS
from skillharness.sim.runner import SimServer

SLOW_FIRST_BYTE_S = 0.6


# Each test gets a fresh simulator of this world (the shared ``sim`` fixture): its faults are
# exactly these, its stats start at zero.
pytestmark = pytest.mark.sim_world(
    SimConfig(seed=3, faults=FaultConfig(slow_first_byte_s=SLOW_FIRST_BYTE_S, retry_after_s=0.3)),
    questions=None,
)


def sim_config(sim: SimServer, **overrides: object) -> LLMConfig:
    # read_s below the slow first byte, so that fault is a read timeout (and retried).
    timeouts = overrides.pop("timeouts", TimeoutConfig(read_s=SLOW_FIRST_BYTE_S / 2, total_s=10))
    config = fast_llm_config(sim.base_url, timeouts=timeouts, **overrides)  # type: ignore[arg-type]
    return config.model_copy(update={"model": sim.model_name})


def judge_request(sim: SimServer, text: str = "Is this a defect?", sample_idx: int = 0) -> ChatRequest:
    return ChatRequest(
        model=sim.model_name,
        messages=({"role": "user", "content": text},),
        role=Role.JUDGE,
        response_format=response_format(Role.JUDGE),
        sample_idx=sample_idx,
    )


def cache_for(tmp_path: Path) -> CacheConfig:
    return CacheConfig(url=f"sqlite:///{tmp_path / 'cache.sqlite'}", salt="test")


async def cached_entries(cache: CacheConfig) -> int:
    backend = open_backend(cache.url, cache.namespace)
    try:
        return (await backend.stats()).entries
    finally:
        await backend.aclose()


@pytest.mark.parametrize("kind", [kind for kind in FaultKind if kind not in FATAL_FAULTS | OUTPUT_FAULTS])
async def test_p1_3_transient_errors_are_retried(sim: SimServer, kind: FaultKind, tmp_path: Path) -> None:
    cache = cache_for(tmp_path)
    sim.force_fault(kind)
    async with build_chat_model(sim_config(sim), cache) as model:
        response = await model.complete(judge_request(sim, f"fault {kind}"))
        assert json.loads(response.content or "")["verdict"] in {"defect", "lapse", "uncertain"}
        assert response.finish_reason == "stop"
        assert model.retry.retries == 1
    stats = sim.stats()
    assert stats["faults"] == {kind.value: 1}
    assert stats["requests"] == 2
    assert await cached_entries(cache) == 1  # the good second answer, and only it


@pytest.mark.parametrize(
    "kind",
    [
        FaultKind.TRUNCATE,
        FaultKind.RESET,
        FaultKind.VLLM_ERROR_FRAME,
        FaultKind.LLAMACPP_ERROR_FRAME,
        FaultKind.MALFORMED_CHUNK,
    ],
)
async def test_p1_2_truncated_stream_is_retried_and_never_cached(
    sim: SimServer, kind: FaultKind, tmp_path: Path
) -> None:
    cache = cache_for(tmp_path)
    sim.force_fault(kind, count=3)
    retry = RetryConfig(max_attempts=3, base_delay_s=0.001, max_delay_s=0.002)
    async with build_chat_model(sim_config(sim, retry=retry), cache) as model:
        with pytest.raises(TransientLLMError) as info:
            await model.complete(judge_request(sim))
        assert info.value.context["attempts"] == 3
        assert model.cache is not None
        assert model.cache.counters.stores == 0
    assert await cached_entries(cache) == 0  # a cut answer is never stored
    assert sim.stats()["requests"] == 3
    # The next call succeeds, is stored, and a third call is served from the cache.
    async with build_chat_model(sim_config(sim, retry=retry), cache) as model:
        first = await model.complete(judge_request(sim))
        again = await model.complete(judge_request(sim))
    assert not first.cache_hit
    assert again.cache_hit
    assert again.content == first.content
    assert json.loads(first.content or "")
    assert sim.stats()["requests"] == 4


async def test_random_faults_under_concurrency_are_all_survived(sim: SimServer, tmp_path: Path) -> None:
    # echo: a plain 500 here; an unparseable reply is model output, returned and never retried.
    skipped = FATAL_FAULTS | OUTPUT_FAULTS | {FaultKind.SLOW_FIRST_BYTE, FaultKind.ECHO_HEADERS}
    rates = {kind: 0.04 for kind in FaultKind if kind not in skipped}
    sim.configure_faults(FaultConfig(rates=rates, retry_after_s=0.05))
    cache = cache_for(tmp_path)
    retry = RetryConfig(base_delay_s=0.001, max_delay_s=0.01, budget_floor=1000)
    # Slow first bytes are skipped, so no short read timeout is needed: with one, a loaded machine
    # turned a slow response into a retry no fault caused, and retries == faults no longer held.
    timeouts = TimeoutConfig(read_s=30, total_s=60)
    async with build_chat_model(sim_config(sim, retry=retry, timeouts=timeouts), cache) as model:
        requests = [judge_request(sim, f"q{i}") for i in range(60)]
        responses = await asyncio.gather(*(model.complete(r) for r in requests))
        assert all(json.loads(r.content or "") for r in responses)
        faults = sum(sim.stats()["faults"].values())
        assert faults > 0
        assert model.retry.retries == faults
    assert await cached_entries(cache) == 60


async def test_connection_refused_is_transient_and_retried_to_the_cap() -> None:
    port = free_port()  # nothing listens here
    endpoint = EndpointConfig(base_url=f"http://127.0.0.1:{port}/v1")
    retry = RetryConfig(max_attempts=3, base_delay_s=0.001, max_delay_s=0.002)
    async with build_chat_model(fast_llm_config(endpoint.base_url, endpoint=endpoint, retry=retry)) as model:
        with pytest.raises(TransientLLMError) as info:
            await model.complete(
                ChatRequest(model="m", messages=({"role": "user", "content": "x"},), role=Role.RANK)
            )
    assert info.value.context["kind"] == "connect_error"
    assert info.value.context["attempts"] == 3
