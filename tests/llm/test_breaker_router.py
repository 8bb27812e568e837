"""The single-probe breaker (audit P2-6), routing, in-flight limits and the retry budget."""

from __future__ import annotations

import asyncio
import logging
import random
import time

import pytest
from llm_support import Reply, ScriptedServer, fast_llm_config, make_request

from skillharness.errors import AuthError, CircuitOpenError, FatalLLMError, TransientLLMError
from skillharness.llm import build_chat_model
from skillharness.llm.breaker import BreakerModel, BreakerState, CircuitBreaker
from skillharness.llm.config import BreakerConfig, EndpointConfig, OpenBehaviour, RetryConfig
from skillharness.llm.retry import RetryBudget, backoff_delay
from skillharness.llm.types import ChatRequest, ChatResponse


class Recording:
    """A breaker's collaborator that records its own concurrency and can be told to fail."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.fail = False
        self.active = 0
        self.max_active = 0
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(self.delay_s)
            if self.fail:
                raise TransientLLMError("down", kind="http_503")
            return ChatResponse(content="ok", finish_reason="stop")
        finally:
            self.active -= 1


async def _trip(model: BreakerModel, inner: Recording) -> None:
    inner.fail = True
    with pytest.raises(TransientLLMError):
        await model.complete(make_request())
    inner.fail = False
    assert model.breaker.state is BreakerState.OPEN


@pytest.mark.parametrize("probe_fails", [False, True])
async def test_p2_6_half_open_admits_one_probe_unit(probe_fails: bool) -> None:
    breaker = CircuitBreaker("ep", BreakerConfig(failure_threshold=1, cooldown_s=0.1, wait_deadline_s=0.6))
    inner = Recording(delay_s=0.15)
    model = BreakerModel(inner, breaker)
    await _trip(model, inner)
    inner.calls = inner.max_active = 0
    inner.fail = probe_fails
    results = await asyncio.gather(
        *(model.complete(make_request()) for _ in range(24)), return_exceptions=True
    )
    if probe_fails:
        # Each half-open period lets exactly one request through; everybody else waits.
        assert inner.max_active == 1
        assert inner.calls <= 5
        assert all(isinstance(r, TransientLLMError) for r in results)
    else:
        assert all(isinstance(r, ChatResponse) for r in results)
        assert inner.calls == 24
        assert breaker.transitions[-2:] == [
            (BreakerState.OPEN, BreakerState.HALF_OPEN),
            (BreakerState.HALF_OPEN, BreakerState.CLOSED),
        ]


async def test_p2_6_half_open_admits_one_probe(
    scripted: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    """24 concurrent callers against a real endpoint: one probe, then everybody."""
    caplog.set_level(logging.WARNING, logger="skillharness.llm.breaker")
    config = fast_llm_config(
        scripted.base_url,
        breaker=BreakerConfig(failure_threshold=1, cooldown_s=0.3),
        retry=RetryConfig(max_attempts=1),
    )
    async with build_chat_model(config) as model:
        scripted.push(Reply(status=503))
        with pytest.raises(TransientLLMError):
            await model.complete(make_request())
        scripted.requests.clear()
        scripted.arrivals.clear()
        scripted.default = Reply(delay_s=0.3)
        results = await asyncio.gather(*(model.complete(make_request(f"q{i}")) for i in range(24)))
    assert all(r.content == "hello" for r in results)
    assert len(scripted.requests) == 24
    first = min(scripted.arrivals)
    # While the probe (0.3 s at the server) is in flight, nobody else reaches the server.
    assert sum(1 for t in scripted.arrivals if t < first + 0.25) == 1
    assert "open -> half_open" in caplog.text
    assert "half_open -> closed" in caplog.text


async def test_a_late_probe_failure_does_not_reopen_a_closed_breaker() -> None:
    # A call admitted before the outage answers while the probe is out: the breaker closes. The
    # probe failing afterwards is one failure of a closed breaker, below the threshold.
    now = [0.0]
    breaker = CircuitBreaker("ep", BreakerConfig(failure_threshold=3, cooldown_s=1.0), clock=lambda: now[0])
    for _ in range(3):
        breaker.record_failure(False)
    assert breaker.state is BreakerState.OPEN
    now[0] = 2.0
    assert await breaker.admit() is True
    breaker.record_success(False)
    assert breaker.state is BreakerState.CLOSED
    breaker.record_failure(True)
    assert breaker.state is BreakerState.CLOSED
    assert breaker.accepting


async def test_fail_fast_and_wait_deadline() -> None:
    inner = Recording(delay_s=0.0)
    fast = BreakerModel(
        inner,
        CircuitBreaker(
            "a", BreakerConfig(failure_threshold=1, cooldown_s=30, on_open=OpenBehaviour.FAIL_FAST)
        ),
    )
    await _trip(fast, inner)
    started = time.monotonic()
    with pytest.raises(CircuitOpenError, match="open"):
        await fast.complete(make_request())
    assert time.monotonic() - started < 0.05
    waiting = BreakerModel(
        inner, CircuitBreaker("b", BreakerConfig(failure_threshold=1, cooldown_s=30, wait_deadline_s=0.2))
    )
    await _trip(waiting, inner)
    calls = inner.calls
    started = time.monotonic()
    with pytest.raises(CircuitOpenError):
        await waiting.complete(make_request())
    assert 0.2 <= time.monotonic() - started < 1.0
    assert inner.calls == calls


async def test_wait_mode_pauses_callers_until_recovery() -> None:
    inner = Recording(delay_s=0.0)
    model = BreakerModel(inner, CircuitBreaker("ep", BreakerConfig(failure_threshold=2, cooldown_s=0.2)))
    inner.fail = True
    for _ in range(2):
        with pytest.raises(TransientLLMError):
            await model.complete(make_request())
    inner.fail = False
    started = time.monotonic()
    assert (await model.complete(make_request())).content == "ok"
    assert time.monotonic() - started >= 0.15


async def test_cancelled_probe_frees_the_slot() -> None:
    inner = Recording(delay_s=5.0)
    breaker = CircuitBreaker("ep", BreakerConfig(failure_threshold=1, cooldown_s=0.01))
    model = BreakerModel(inner, breaker)
    inner.delay_s = 0.0
    await _trip(model, inner)
    await asyncio.sleep(0.02)
    inner.delay_s = 5.0
    probe = asyncio.create_task(model.complete(make_request()))
    await asyncio.sleep(0.05)
    assert breaker.state is BreakerState.HALF_OPEN
    assert not breaker.accepting
    probe.cancel()
    with pytest.raises(asyncio.CancelledError):
        await probe
    assert breaker.accepting
    inner.delay_s = 0.0
    assert (await model.complete(make_request())).content == "ok"
    assert breaker.state is BreakerState.CLOSED


async def test_per_endpoint_in_flight_limit(scripted: ScriptedServer) -> None:
    scripted.default = Reply(delay_s=0.1)
    endpoint = EndpointConfig(base_url=scripted.base_url, max_in_flight=3)
    async with build_chat_model(fast_llm_config(scripted.base_url, endpoint=endpoint)) as model:
        await asyncio.gather(*(model.complete(make_request(f"{i}")) for i in range(12)))
    assert scripted.max_active == 3


async def test_least_in_flight_routing_and_open_breaker_out_of_rotation(scripted: ScriptedServer) -> None:
    second = ScriptedServer().start()
    try:
        scripted.default = Reply(delay_s=0.1)
        second.default = Reply(delay_s=0.1)
        config = fast_llm_config(scripted.base_url, breaker=BreakerConfig(failure_threshold=2, cooldown_s=30))
        config = config.model_copy(
            update={
                "endpoints": (
                    EndpointConfig(base_url=scripted.base_url, name="a"),
                    EndpointConfig(base_url=second.base_url, name="b"),
                )
            }
        )
        async with build_chat_model(config) as model:
            await asyncio.gather(*(model.complete(make_request(f"{i}")) for i in range(10)))
            assert (len(scripted.requests), len(second.requests)) == (5, 5)
            # Endpoint b breaks: two failures open its breaker, retries land on a, then b is skipped.
            second.default = Reply(status=503)
            scripted.requests.clear()
            second.requests.clear()
            results = await asyncio.gather(*(model.complete(make_request(f"x{i}")) for i in range(10)))
            assert all(r.endpoint == "a" for r in results)  # b's failures were retried on a
            assert model.router.lanes[1].breaker.state is BreakerState.OPEN
            second.requests.clear()
            results = await asyncio.gather(*(model.complete(make_request(f"y{i}")) for i in range(10)))
            assert all(r.endpoint == "a" for r in results)
            assert second.requests == []  # out of rotation while open
    finally:
        second.stop()


async def test_retry_budget_exhaustion(scripted: ScriptedServer) -> None:
    scripted.default = Reply(status=503)
    retry = RetryConfig(base_delay_s=0.001, max_delay_s=0.002, budget_share=0.0, budget_floor=3)
    async with build_chat_model(fast_llm_config(scripted.base_url, retry=retry)) as model:
        reasons = []
        for i in range(5):
            with pytest.raises(TransientLLMError) as info:
                await model.complete(make_request(f"{i}"))
            reasons.append(info.value.context["gave_up"])
        assert model.retry.budget.denied >= 1
    # 5 first attempts plus the 3 retries the floor allows; an 8-attempt cap alone would give 40.
    assert len(scripted.requests) == 8
    assert reasons[-1] == "global retry budget exhausted"


def test_retry_budget_share_and_window() -> None:
    now = [0.0]
    budget = RetryBudget(share=0.5, window_s=10, floor=0, clock=lambda: now[0])
    for _ in range(4):
        budget.record_call()
    assert [budget.try_spend() for _ in range(3)] == [True, True, False]
    now[0] = 11.0  # the window slides: old calls and retries no longer count
    assert not budget.try_spend()
    budget.record_call()
    budget.record_call()
    assert budget.try_spend()
    assert not budget.try_spend()


def test_retry_budget_forgets_calls_outside_the_window_without_any_retry() -> None:
    # A long healthy run never retries; its call history must still stay one window long.
    now = [0.0]
    budget = RetryBudget(share=0.1, window_s=10, floor=0, clock=lambda: now[0])
    for i in range(10_000):
        now[0] = i * 0.1
        budget.record_call()
    assert len(budget._calls) <= 101


def test_backoff_full_jitter_and_retry_after_cap() -> None:
    config = RetryConfig(base_delay_s=0.5, max_delay_s=4.0, retry_after_cap_s=10.0)
    rng = random.Random(0)
    for attempt in range(1, 10):
        ceiling = min(4.0, 0.5 * 2 ** (attempt - 1))
        delays = [backoff_delay(attempt, None, config, rng) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > 0.8 * ceiling  # full jitter spans the whole range
    assert backoff_delay(1, 3.0, config, rng) == 3.0
    assert backoff_delay(1, 3600.0, config, rng) == 10.0


class _Raises:
    def __init__(self, error: Exception) -> None:
        self.error = error

    async def complete(self, request: ChatRequest) -> ChatResponse:
        raise self.error


@pytest.mark.parametrize(
    ("error", "closes"),
    [
        (FatalLLMError("HTTP 400: bad request", kind="http_400", status=400), True),
        (AuthError("env var K is not set or empty", kind="missing_key"), False),
        (FatalLLMError("request body is not valid JSON", kind="invalid_request"), False),
    ],
)
async def test_only_a_fatal_answer_from_the_server_proves_it_is_up(error: Exception, closes: bool) -> None:
    now = [0.0]
    breaker = CircuitBreaker("ep", BreakerConfig(failure_threshold=1, cooldown_s=1.0), clock=lambda: now[0])
    breaker.record_failure(False)
    assert breaker.state is BreakerState.OPEN
    now[0] = 2.0
    with pytest.raises(type(error)):
        await BreakerModel(_Raises(error), breaker).complete(make_request())
    # A 400 is the server answering; a missing key or an unencodable body never reached it.
    assert (breaker.state is BreakerState.CLOSED) is closes


async def test_a_429_with_retry_after_spends_no_retry_budget(scripted: ScriptedServer) -> None:
    # A budget that allows no retry at all: only the server's own "wait and try again" gets through.
    retry = RetryConfig(base_delay_s=0.001, max_delay_s=0.002, budget_share=0.0, budget_floor=0)
    async with build_chat_model(fast_llm_config(scripted.base_url, retry=retry)) as model:
        scripted.push(*[Reply(status=429, headers={"Retry-After": "0"}) for _ in range(3)])
        response = await model.complete(make_request("asked to wait"))
        assert response.content
        assert model.retry.budget.denied == 0
        scripted.push(Reply(status=503))  # no Retry-After: a storm retry, which the budget refuses
        with pytest.raises(TransientLLMError) as info:
            await model.complete(make_request("storm"))
    assert info.value.context["gave_up"] == "global retry budget exhausted"
    assert len(scripted.requests) == 5


async def test_an_open_breaker_says_what_its_callers_wait_for_and_how_long() -> None:
    now = [100.0]
    config = BreakerConfig(failure_threshold=1, cooldown_s=10.0, wait_deadline_s=900.0)
    breaker = CircuitBreaker("gpu-a", config, clock=lambda: now[0])
    assert breaker.describe() == "gpu-a ok"
    breaker.record_failure(probe=False)
    now[0] = 103.0
    assert breaker.describe() == "gpu-a open, probe in 7s"
    waiter = asyncio.create_task(breaker.admit())
    await asyncio.sleep(0)  # the caller is now waiting for the endpoint
    assert breaker.describe() == "gpu-a open, probe in 7s, 1 call(s) waiting, first gives up in 900s"
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert breaker.describe() == "gpu-a open, probe in 7s"
