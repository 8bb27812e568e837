"""Latency and the server-side concurrency limit (excess requests queue, they are not refused)."""

from __future__ import annotations

import asyncio
import time

import httpx
from sim_support import first_messages, tools

from skillharness.sim import LatencyConfig, SimConfig, SimServer


async def test_concurrency_limit_queues_excess_requests(questions):
    config = SimConfig(max_concurrency=2, latency=LatencyConfig(ttft_s=0.25))
    async with SimServer(config, questions=questions) as sim:
        body = {"model": sim.model_name, "messages": first_messages(questions[0]), "tools": tools()}
        async with httpx.AsyncClient(base_url=sim.base_url, timeout=20) as http:
            started = time.monotonic()
            responses = await asyncio.gather(*(http.post("/chat/completions", json=body) for _ in range(6)))
            elapsed = time.monotonic() - started
        stats = sim.stats()
    assert [r.status_code for r in responses] == [200] * 6
    assert stats["max_in_flight"] == 2
    assert stats["max_queued"] >= 3
    assert elapsed >= 3 * 0.25 - 0.02  # three waves of two


def test_ttft_and_per_token_latency_are_applied(questions):
    config = SimConfig(latency=LatencyConfig(ttft_s=0.2, per_token_s=0.005))
    with SimServer(config, questions=questions) as sim:
        body = {
            "model": sim.model_name,
            "messages": first_messages(questions[0]),
            "tools": tools(),
            "stream": True,
        }
        started = time.monotonic()
        with httpx.stream("POST", f"{sim.base_url}/chat/completions", json=body, timeout=10) as response:
            lines = response.iter_lines()
            next(lines)
            first = time.monotonic() - started
            rest = list(lines)
        total = time.monotonic() - started
    assert first >= 0.19
    assert rest[-2] == "data: [DONE]" or rest[-1] == "data: [DONE]"
    assert total - first >= 0.005 * 5  # a tool call carries more than five tokens


def test_concurrency_limit_survives_a_restart(questions):
    # A test that stops the simulator (an outage) and starts it again gets a new event loop;
    # the queue must follow it instead of failing every queued request with a 500.
    config = SimConfig(max_concurrency=1, latency=LatencyConfig(ttft_s=0.05))
    sim = SimServer(config, questions=questions)
    body = {"model": sim.model_name, "messages": first_messages(questions[0]), "tools": tools()}

    async def burst() -> list[int]:
        async with httpx.AsyncClient(base_url=sim.base_url, timeout=20) as http:
            responses = await asyncio.gather(*(http.post("/chat/completions", json=body) for _ in range(3)))
        return [r.status_code for r in responses]

    for _ in range(2):
        sim.start()
        try:
            assert asyncio.run(burst()) == [200] * 3
        finally:
            sim.stop()
    assert sim.stats()["max_queued"] >= 1
