"""What the client benchmarks share: the simulator in its own process, and timed calls through the
full LLM stack (accounting → cache → retry → router → breaker → client) at a fixed concurrency.

``benchmarks/llm_client.py`` (efficiency against C/L) and ``benchmarks/throughput.py`` (calls/s per
core) measure the same loop; only their latency, concurrency and call counts differ.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import time
from collections.abc import Iterator
from contextlib import contextmanager

from skillharness.llm import build_chat_model
from skillharness.llm.config import CacheConfig, EndpointConfig, LLMConfig
from skillharness.llm.roles import Role, response_format
from skillharness.llm.types import ChatRequest

MODEL = "sim-vl"


def _serve(latency_s: float, ports: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    from skillharness.sim.config import LatencyConfig, SimConfig
    from skillharness.sim.runner import SimServer

    with SimServer(SimConfig(seed=1, latency=LatencyConfig(ttft_s=latency_s))) as sim:
        ports.put(sim.base_url)
        stop.wait()


@contextmanager
def sim_server(latency_s: float) -> Iterator[str]:
    """The simulator's base URL, served from a separate process at time-to-first-token ``latency_s``
    (so its work does not share the client's CPU); stopped on exit."""
    ctx = mp.get_context("spawn")
    ports, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=_serve, args=(latency_s, ports, stop), daemon=True)
    server.start()
    try:
        yield ports.get(timeout=60)
    finally:
        stop.set()
        server.join(timeout=10)


async def timed_calls(
    base_url: str,
    cache: CacheConfig | None,
    *,
    calls: int,
    concurrency: int,
    warmup: int,
    tag: str = "",
) -> tuple[float, float]:
    """(wall s, client CPU s) of ``calls`` distinct judge calls by ``concurrency`` callers, after
    ``warmup`` untimed ones (connections, imports). Call ``i`` asks ``f"{tag}call {i}"``."""
    config = LLMConfig(model=MODEL, endpoints=(EndpointConfig(base_url=base_url, max_in_flight=concurrency),))
    async with build_chat_model(config, cache) as model:

        async def caller(numbers: Iterator[int]) -> None:
            for i in numbers:  # the callers share one iterator: each takes the next call when free
                request = ChatRequest(
                    model=MODEL,
                    messages=({"role": "user", "content": f"{tag}call {i}"},),
                    role=Role.JUDGE,
                    response_format=response_format(Role.JUDGE),
                )
                await model.complete(request)

        async def round_of(first: int, count: int) -> None:
            numbers = iter(range(first, first + count))
            await asyncio.gather(*(caller(numbers) for _ in range(concurrency)))

        await round_of(0, warmup)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await round_of(warmup, calls)
        return time.perf_counter() - wall0, time.process_time() - cpu0
