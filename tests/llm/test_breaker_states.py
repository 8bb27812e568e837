"""The breaker's state machine on a controlled clock: counting, probes, re-trips and routing."""

from __future__ import annotations

import asyncio
import time

import pytest
from llm_support import make_request

from skillharness.errors import CircuitOpenError, TransientLLMError
from skillharness.llm.breaker import BreakerModel, BreakerState, CircuitBreaker
from skillharness.llm.config import BreakerConfig, OpenBehaviour
from skillharness.llm.router import Lane, Router
from skillharness.llm.types import ChatRequest, ChatResponse

OPEN, HALF, CLOSED = BreakerState.OPEN, BreakerState.HALF_OPEN, BreakerState.CLOSED


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fail_fast(clock: Clock, threshold: int = 2, cooldown_s: float = 1.0) -> CircuitBreaker:
    config = BreakerConfig(
        failure_threshold=threshold, cooldown_s=cooldown_s, on_open=OpenBehaviour.FAIL_FAST
    )
    return CircuitBreaker("ep", config, clock=clock)


def trip(breaker: CircuitBreaker) -> None:
    for _ in range(breaker.config.failure_threshold):
        breaker.record_failure(False)
    assert breaker.state is OPEN


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def probing(clock: Clock) -> CircuitBreaker:
    """A fail-fast breaker (2 failures, 1 s cooldown) tripped at 0; at 1 its probe is admitted."""
    breaker = fail_fast(clock)
    trip(breaker)
    clock.now = 1.0
    assert await breaker.admit() is True
    return breaker


async def test_a_failed_probe_reopens_and_the_next_cooldown_admits_a_new_probe(
    clock: Clock, probing: CircuitBreaker
) -> None:
    breaker = probing
    assert breaker.state is HALF
    with pytest.raises(CircuitOpenError):
        await breaker.admit()  # one probe at a time
    breaker.record_failure(True)
    assert breaker.state is OPEN
    clock.now = 1.99  # the cooldown restarted when the probe failed
    assert not breaker.accepting
    with pytest.raises(CircuitOpenError):
        await breaker.admit()
    clock.now = 2.0
    assert breaker.accepting
    assert await breaker.admit() is True
    breaker.record_success(True)
    assert breaker.state is CLOSED
    assert breaker.transitions == [(CLOSED, OPEN), (OPEN, HALF), (HALF, OPEN), (OPEN, HALF), (HALF, CLOSED)]


async def test_a_breaker_that_recovered_trips_again_and_admits_a_probe_again(
    clock: Clock, probing: CircuitBreaker
) -> None:
    breaker = probing
    breaker.record_success(True)
    assert breaker.state is CLOSED
    assert await breaker.admit() is False  # a caller on a closed breaker is never the probe
    trip(breaker)
    clock.now = 2.0
    assert await breaker.admit() is True
    assert breaker.state is HALF


async def test_failures_below_the_threshold_keep_it_closed_and_a_success_resets_the_count() -> None:
    clock = Clock()
    breaker = fail_fast(clock, threshold=3)
    breaker.record_failure(False)
    breaker.record_failure(False)
    assert breaker.state is CLOSED
    breaker.record_success(False)
    breaker.record_failure(False)
    breaker.record_failure(False)
    assert breaker.state is CLOSED
    assert breaker.accepting
    assert await breaker.admit() is False
    breaker.record_failure(False)
    assert breaker.state is OPEN
    assert breaker.transitions == [(CLOSED, OPEN)]


async def test_an_ordinary_success_on_a_closed_breaker_changes_nothing() -> None:
    clock = Clock()
    breaker = fail_fast(clock, threshold=1)
    breaker.record_success(False)
    breaker.record_success(False)
    assert breaker.state is CLOSED
    assert breaker.transitions == []


async def test_open_refuses_until_exactly_the_cooldown_then_accepts() -> None:
    clock = Clock()
    clock.now = 100.0
    breaker = fail_fast(clock, threshold=1, cooldown_s=5.0)
    trip(breaker)
    clock.now = 104.999
    assert not breaker.accepting
    with pytest.raises(CircuitOpenError, match="ep: circuit breaker is open") as info:
        await breaker.admit()
    assert info.value.context["endpoint"] == "ep"
    assert breaker.state is OPEN
    clock.now = 105.0
    assert breaker.accepting
    assert breaker.state is OPEN  # looking does not move it; admitting does
    assert await breaker.admit() is True
    assert not breaker.accepting  # the probe is out


async def test_releasing_a_probe_frees_the_slot_without_changing_the_state(probing: CircuitBreaker) -> None:
    breaker = probing
    breaker.release(False)  # an ordinary caller's release does not free the probe's slot
    assert not breaker.accepting
    breaker.release(True)
    assert breaker.state is HALF
    assert breaker.accepting
    assert await breaker.admit() is True


async def test_a_waiting_caller_wakes_when_the_cooldown_ends() -> None:
    # Wait mode with a long deadline: the caller must not sleep until its deadline, but wake at
    # the end of the cooldown and become the probe. (A liveness bound, not a speed measurement.)
    breaker = CircuitBreaker("ep", BreakerConfig(failure_threshold=1, cooldown_s=0.05, wait_deadline_s=60))
    trip(breaker)
    assert await asyncio.wait_for(breaker.admit(), timeout=20) is True


class Fixed:
    """A collaborator that answers, or raises, the same thing every time."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return ChatResponse(content="ok", finish_reason="stop")


async def test_breaker_model_counts_transient_failures_and_returns_answers() -> None:
    clock = Clock()
    breaker = fail_fast(clock, threshold=2)
    failing = BreakerModel(Fixed(TransientLLMError("down", kind="http_503")), breaker)
    for _ in range(2):
        with pytest.raises(TransientLLMError, match="down"):
            await failing.complete(make_request())
    assert breaker.state is OPEN
    clock.now = 1.0
    working = BreakerModel(Fixed(), breaker)
    assert (await working.complete(make_request())).content == "ok"
    assert breaker.state is CLOSED


async def test_a_cancelled_call_on_a_closed_breaker_counts_as_nothing() -> None:
    clock = Clock()
    breaker = fail_fast(clock, threshold=1)
    model = BreakerModel(Fixed(asyncio.CancelledError()), breaker)
    with pytest.raises(asyncio.CancelledError):
        await model.complete(make_request())
    assert breaker.state is CLOSED
    assert breaker.transitions == []


def _lane(name: str, breaker: CircuitBreaker) -> Lane:
    return Lane(name=name, model=Fixed(), breaker=breaker, limit=4)


def test_a_recovered_endpoint_is_back_in_the_routers_rotation_after_the_cooldown() -> None:
    clock = Clock()
    a, b = fail_fast(clock, threshold=1), fail_fast(clock, threshold=1)
    router = Router([_lane("a", a), _lane("b", b)])
    router.lanes[0].in_flight = 3  # a is busier: b would be picked if it accepted callers
    trip(b)
    assert router.pick().name == "a"
    clock.now = 1.0
    assert router.pick().name == "b"


async def test_a_waiting_caller_gives_up_when_its_deadline_is_reached_exactly() -> None:
    class Stepping:
        """0 when the caller computes its deadline, then exactly the deadline ever after."""

        def __init__(self) -> None:
            self.values = [0.0]

        def __call__(self) -> float:
            return self.values.pop(0) if self.values else 5.0

    clock = Stepping()
    breaker = CircuitBreaker(
        "ep", BreakerConfig(failure_threshold=1, cooldown_s=100, wait_deadline_s=5.0), clock=clock
    )
    breaker.state = OPEN  # opened at t=0 (the default), cooldown far away
    with pytest.raises(CircuitOpenError):
        await asyncio.wait_for(breaker.admit(), timeout=10)


async def test_a_waiting_caller_sleeps_until_the_cooldown_ends_instead_of_polling() -> None:
    # During an outage many callers wait: each must sleep through the cooldown, not spin on it.
    calls = 0

    def counting() -> float:
        nonlocal calls
        calls += 1
        return time.monotonic()

    breaker = CircuitBreaker(
        "ep", BreakerConfig(failure_threshold=1, cooldown_s=0.3, wait_deadline_s=60), clock=counting
    )
    trip(breaker)
    calls = 0
    assert await asyncio.wait_for(breaker.admit(), timeout=20) is True
    assert calls < 30  # about two checks: before and after the sleep; polling would be hundreds


async def test_time_waiting_for_an_open_breaker_and_its_openings_are_counted() -> None:
    # Wall-time accounting (benchmarks/faults.py): how often the breaker opened and how long its
    # callers waited for admission; an admission on a closed breaker waits for nothing.
    clock = Clock()
    breaker = CircuitBreaker("ep", BreakerConfig(failure_threshold=1, cooldown_s=0.05), clock=clock)
    assert await breaker.admit() is False
    assert (breaker.opened, breaker.waited_s) == (0, 0.0)
    trip(breaker)
    waiter = asyncio.create_task(breaker.admit())
    await asyncio.sleep(0)
    clock.now = 0.3
    assert await asyncio.wait_for(waiter, timeout=20) is True
    assert breaker.waited_s == pytest.approx(0.3)
    breaker.record_failure(True)  # the probe fails: open again
    assert breaker.opened == 2


def test_a_default_breaker_rides_out_five_transient_failures_in_a_row() -> None:
    # At a 30 % transient rate 5 failures in a row come every ~400 attempts; with the old
    # threshold of 5 each paused the whole run for a cooldown (benchmarks/faults.py --train).
    breaker = CircuitBreaker("ep", BreakerConfig())
    for _ in range(9):
        breaker.record_failure(False)
    assert breaker.state is CLOSED
    breaker.record_failure(False)
    assert breaker.state is OPEN
