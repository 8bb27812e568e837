"""Which failures are retried, how often, how long apart, and when the retry layer gives up."""

from __future__ import annotations

import random

import pytest
from llm_support import make_request

from skillharness.errors import CircuitOpenError, FatalLLMError, TransientLLMError
from skillharness.llm.config import RetryConfig
from skillharness.llm.retry import RetryBudget, RetryingModel
from skillharness.llm.types import ChatRequest, ChatResponse


class Script:
    """Raises the scripted errors in order, then answers."""

    def __init__(self, *errors: Exception, forever: Exception | None = None) -> None:
        self.errors = list(errors)
        self.forever = forever
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        if self.forever is not None:
            raise self.forever
        return ChatResponse(content="ok", finish_reason="stop")


def retrying(
    inner: Script, budget: RetryBudget | None = None, **config: float
) -> tuple[RetryingModel, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    model = RetryingModel(
        inner,
        RetryConfig(**config),
        budget or RetryBudget(share=1.0, window_s=60, floor=100),
        rng=random.Random(0),
        sleep=sleep,
    )
    return model, slept


def busy(retry_after_s: float | None = None) -> TransientLLMError:
    return TransientLLMError("busy", kind="http_503", retry_after_s=retry_after_s)


async def test_a_circuit_open_error_is_raised_after_one_call() -> None:
    inner = Script(forever=CircuitOpenError("ep: circuit breaker is open", kind="circuit_open"))
    model, slept = retrying(inner)
    with pytest.raises(CircuitOpenError):
        await model.complete(make_request())
    assert inner.calls == 1
    assert slept == []
    assert model.retries == 0


async def test_a_fatal_error_is_never_retried() -> None:
    inner = Script(forever=FatalLLMError("HTTP 400", kind="http_400", status=400))
    model, slept = retrying(inner)
    with pytest.raises(FatalLLMError):
        await model.complete(make_request())
    assert (inner.calls, slept) == (1, [])


async def test_the_total_deadline_stops_a_retry_that_would_overrun_it() -> None:
    # Retry-After 10 s against a 5 s deadline: waiting would overrun it, so one attempt only.
    inner = Script(forever=busy(retry_after_s=10.0))
    model, slept = retrying(inner, max_elapsed_s=5.0, max_attempts=8)
    with pytest.raises(TransientLLMError) as info:
        await model.complete(make_request())
    assert inner.calls == 1
    assert slept == []
    assert info.value.context["gave_up"] == "total deadline 5.0s would pass"
    assert info.value.context["attempts"] == 1


async def test_retry_after_is_slept_and_the_attempt_cap_ends_the_call() -> None:
    inner = Script(forever=busy(retry_after_s=2.0))
    model, slept = retrying(inner, max_attempts=3, max_elapsed_s=100.0)
    with pytest.raises(TransientLLMError) as info:
        await model.complete(make_request())
    assert inner.calls == 3
    assert slept == [2.0, 2.0]
    assert model.retries == 2
    assert info.value.context["gave_up"] == "attempt cap 3 reached"
    assert info.value.context["attempts"] == 3


async def test_a_transient_failure_then_success_returns_the_answer() -> None:
    inner = Script(busy(), busy())
    model, slept = retrying(inner, base_delay_s=1.0, max_delay_s=8.0)
    assert (await model.complete(make_request())).content == "ok"
    assert inner.calls == 3
    assert len(slept) == 2
    assert 0 <= slept[0] <= 1.0  # full jitter under 1 s, then under 2 s
    assert 0 <= slept[1] <= 2.0


async def test_an_exhausted_budget_ends_the_call_before_the_attempt_cap() -> None:
    budget = RetryBudget(share=0.0, window_s=60, floor=1)
    inner = Script(forever=busy())  # no Retry-After: a retry the server asked for spends no budget
    model, _ = retrying(inner, budget, max_attempts=8)
    with pytest.raises(TransientLLMError) as info:
        await model.complete(make_request())
    assert inner.calls == 2
    assert info.value.context["gave_up"] == "global retry budget exhausted"
    assert budget.denied == 1


def test_the_budget_window_forgets_events_exactly_one_window_old() -> None:
    now = [0.0]
    budget = RetryBudget(share=1.0, window_s=10, floor=0, clock=lambda: now[0])
    budget.record_call()
    now[0] = 5.0
    assert budget.try_spend()  # one call in the window allows one retry
    assert not budget.try_spend()
    now[0] = 10.0  # the call at t=0 leaves the window; the retry at t=5 still counts
    budget.record_call()
    assert not budget.try_spend()
    now[0] = 15.0  # now the retry at t=5 has left too
    assert budget.try_spend()


async def test_the_seconds_slept_before_retries_are_summed_for_wall_time_accounting() -> None:
    inner = Script(busy(retry_after_s=1.5), busy(), busy(retry_after_s=0.25))
    model, slept = retrying(inner, base_delay_s=1.0, max_delay_s=8.0)
    assert (await model.complete(make_request())).content == "ok"
    assert len(slept) == 3
    assert model.slept_s == pytest.approx(sum(slept))
    assert model.slept_s >= 1.75
