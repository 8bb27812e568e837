"""Lanes: one single-connection client per call in flight, reused, bounded, TLS only for https."""

from __future__ import annotations

import asyncio
import contextlib

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


async def _busy_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers every request on a connection, alternately a 503 and a slowly written stream."""
    turn = 0
    try:
        while True:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = await reader.read(65536)
                if not chunk:
                    return
                head += chunk
            turn += 1
            if turn % 2:
                writer.write(b"HTTP/1.1 503 busy\r\ncontent-length: 40\r\n\r\n" + b"x" * 40)
                await writer.drain()
                continue
            body = b"data: x\n\n" * 40
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n")
            writer.write(b"content-length: %d\r\n\r\n" % len(body))
            for start in range(0, len(body), 90):
                writer.write(body[start : start + 90])
                await writer.drain()
                await asyncio.sleep(0.0005)
    except ConnectionError:
        pass
    finally:
        writer.close()


async def test_a_lane_whose_call_was_cancelled_is_never_lent_again() -> None:
    """A call cancelled (twice, as nested task groups do) while its response closes can leave the
    client's single pool slot taken; lent again, every later call on it waited out the pool
    timeout. Each cancelled lane is retired and replaced, so the next call always gets through."""
    server = await asyncio.start_server(_busy_server, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    lanes = _lanes(url, size=1, pool_s=0.5)

    lent: set[int] = set()

    async def call() -> None:
        async with lanes.lane() as http, http.stream("POST", url, content=b"{}") as response:
            lent.add(id(http))
            async for _ in response.aiter_bytes():
                pass

    stuck = 0
    for trial in range(120):
        task = asyncio.create_task(call())
        await asyncio.sleep((trial % 30) * 0.0008)
        for _ in range(3):
            task.cancel()
            await asyncio.sleep(0)
        with contextlib.suppress(asyncio.CancelledError):
            await task
        try:
            await call()
        except httpx.PoolTimeout:
            stuck += 1
    await lanes.aclose()
    server.close()
    await server.wait_closed()
    assert stuck == 0
    assert len(lent) > 1  # one lane at a time, so every other lane replaced a retired one
    assert not lanes._closing  # and the retired ones were closed
