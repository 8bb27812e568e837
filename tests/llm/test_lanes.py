"""Lanes: one single-connection client per call in flight, reused, bounded, TLS only for https."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from skillharness.llm.config import TimeoutConfig
from skillharness.llm.lanes import Lanes


def _lanes(url: str = "http://127.0.0.1:9/v1", size: int = 3, pool_s: float = 30.0) -> Lanes:
    return Lanes(url, TimeoutConfig(pool_s=pool_s), size)


def test_calls_in_flight_get_distinct_lanes_and_a_free_lane_is_reused() -> None:
    async def run() -> tuple[set[int], int, int]:
        lanes = _lanes()
        held: list[httpx.AsyncClient] = []
        async with lanes.lane() as a, lanes.lane() as b:
            held += [a, b]
        async with lanes.lane() as again:
            reused = id(again)
        count = len(lanes._all)
        await lanes.aclose()
        return {id(c) for c in held}, reused, count

    distinct, reused, count = asyncio.run(run())
    assert len(distinct) == 2
    assert reused in distinct  # no new client while one is free
    assert count == 2


def test_a_call_waits_for_a_lane_and_times_out_as_a_pool_timeout() -> None:
    async def run() -> None:
        lanes = _lanes(size=1, pool_s=0.05)
        async with lanes.lane():
            with pytest.raises(httpx.PoolTimeout):
                async with lanes.lane():
                    pass
        async with lanes.lane():  # free again once the first call is done
            pass
        await lanes.aclose()

    asyncio.run(run())


def test_a_waiting_call_gets_the_lane_given_back() -> None:
    async def run() -> list[str]:
        lanes = _lanes(size=1)
        order: list[str] = []

        async def call(name: str) -> None:
            async with lanes.lane():
                order.append(f"{name}+")
                await asyncio.sleep(0)
                order.append(f"{name}-")

        await asyncio.gather(call("a"), call("b"))
        await lanes.aclose()
        return order

    assert asyncio.run(run()) == ["a+", "a-", "b+", "b-"]  # never two calls on one connection


def test_tls_context_only_for_https(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []
    real = httpx.create_ssl_context
    monkeypatch.setattr(httpx, "create_ssl_context", lambda *a, **k: built.append(1) or real(*a, **k))

    async def borrow(lanes: Lanes, times: int) -> None:
        for _ in range(times):
            async with lanes.lane(), lanes.lane():
                pass
        await lanes.aclose()

    asyncio.run(borrow(_lanes("http://127.0.0.1:9/v1"), 2))
    assert built == []
    asyncio.run(borrow(_lanes("https://example.invalid/v1"), 2))
    assert len(built) == 1  # one CA load shared by both lanes
