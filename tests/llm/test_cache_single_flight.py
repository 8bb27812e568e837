"""Identical requests asked at once are asked once (issue 32, item 5: incumbents asked twice).

In one process through the in-flight map of the cache layer; across processes through a lock in
the shared Redis, with the waiter asking itself once its wait runs out (a crashed asker never
blocks it for good). Upstream calls are counted on the simulator's own stats.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from skillharness.llm import build_chat_model
from skillharness.llm.cache.key import cache_key
from skillharness.llm.config import CacheConfig, EndpointConfig, LLMConfig
from skillharness.llm.roles import Role, response_format
from skillharness.llm.types import ChatRequest
from skillharness.sim.config import LatencyConfig, SimConfig
from skillharness.sim.runner import SimServer

# Long enough that every identical request arrives while the first is still in flight.
LATENCY_S = 0.8

pytestmark = pytest.mark.sim_world(SimConfig(seed=3, latency=LatencyConfig(ttft_s=LATENCY_S)), questions=None)


def _llm(sim: SimServer) -> LLMConfig:
    endpoint = EndpointConfig(base_url=sim.base_url, max_in_flight=16)
    return LLMConfig(model=sim.model_name, endpoints=(endpoint,))


def _request(model: str) -> ChatRequest:
    return ChatRequest(
        model=model,
        messages=({"role": "user", "content": "Is the incumbent's answer right?"},),
        role=Role.JUDGE,
        response_format=response_format(Role.JUDGE),
    )


async def test_p5_identical_concurrent_requests_in_one_process_are_asked_once(
    sim: SimServer, tmp_path: Path
) -> None:
    cache = CacheConfig(url=f"sqlite:///{tmp_path / 'cache.sqlite'}", salt="shared")
    async with build_chat_model(_llm(sim), cache) as model:
        answers = await asyncio.gather(*(model.complete(_request(sim.model_name)) for _ in range(8)))
        assert model.cache is not None
        assert model.cache.counters.joined == 7
    assert sim.stats()["requests"] == 1
    assert len({a.content for a in answers}) == 1
    assert sum(not a.cache_hit for a in answers) == 1  # only the asker's answer cost a call


_ASKER = textwrap.dedent(
    """
    import asyncio, sys
    from skillharness.llm import build_chat_model
    from skillharness.llm.config import CacheConfig, EndpointConfig, LLMConfig
    from skillharness.llm.roles import Role, response_format
    from skillharness.llm.types import ChatRequest

    async def main():
        base_url, model_name, redis_url, namespace = sys.argv[1:5]
        llm = LLMConfig(model=model_name, endpoints=(EndpointConfig(base_url=base_url),))
        cache = CacheConfig(url=redis_url, namespace=namespace, salt="shared", flight_wait_s=30)
        request = ChatRequest(
            model=model_name,
            messages=({"role": "user", "content": "Is the incumbent's answer right?"},),
            role=Role.JUDGE,
            response_format=response_format(Role.JUDGE),
        )
        async with build_chat_model(llm, cache) as model:
            print("ready", flush=True)
            sys.stdin.readline()
            answer = await model.complete(request)
            print("hit" if answer.cache_hit else "asked", answer.content, flush=True)

    asyncio.run(main())
    """
)


@pytest.mark.slow
def test_p5_two_processes_sharing_redis_ask_an_identical_request_once(sim: SimServer, redis_url: str) -> None:
    namespace = f"sf{uuid.uuid4().hex[:8]}"
    args = [sys.executable, "-c", _ASKER, sim.base_url, sim.model_name, redis_url, namespace]
    procs = [
        subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(2)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in procs:  # both go at once: the second arrives while the first is asking
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        said = [proc.communicate(timeout=60)[0].split(maxsplit=1) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert sorted(kind for kind, _ in said) == ["asked", "hit"]
    assert said[0][1] == said[1][1]
    assert sim.stats()["requests"] == 1


async def test_p5_a_dead_lock_holder_delays_the_waiter_only_until_its_wait_runs_out(
    sim: SimServer, redis_url: str
) -> None:
    """The lock of an asker that died (never answered, never released): the waiter asks itself."""
    namespace = f"sf{uuid.uuid4().hex[:8]}"
    cache = CacheConfig(url=redis_url, namespace=namespace, salt="shared", flight_wait_s=0.6)
    request = _request(sim.model_name)
    client = aioredis.from_url(redis_url)
    # What a crashed holder leaves: its lock, set for far longer than this waiter's wait.
    await client.set(f"{namespace}:flight:{cache_key(request, 'shared')}", "dead-holder", px=60_000)
    await client.aclose()
    async with build_chat_model(_llm(sim), cache) as model:
        start = time.monotonic()
        async with asyncio.timeout(10):
            answer = await model.complete(request)
        waited = time.monotonic() - start
        assert model.cache is not None
        assert model.cache.counters.wait_timeouts == 1
    assert not answer.cache_hit
    assert 0.6 <= waited < 0.6 + LATENCY_S + 2.0
    assert sim.stats()["requests"] == 1
