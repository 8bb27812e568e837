"""Retrying transient failures: backoff with full jitter, Retry-After, an attempt cap, a total
deadline, and a global budget so an outage cannot multiply the load on a sick server.

What is transient is decided by :func:`skillharness.llm.errors.retry_decision` (data); this
module only decides *when* and *whether there is budget*.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from skillharness.errors import TransientLLMError
from skillharness.llm.config import RetryConfig
from skillharness.llm.errors import retry_decision
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse

__all__ = ["Retrier", "RetryBudget", "RetryingModel", "backoff_delay"]

log = logging.getLogger(__name__)
T = TypeVar("T")


def backoff_delay(
    attempt: int, retry_after_s: float | None, config: RetryConfig, rng: random.Random
) -> float:
    """Sleep before attempt ``attempt + 1``: the server's Retry-After (capped) if given, else
    full jitter U(0, min(max_delay, base * 2^(attempt-1)))."""
    if retry_after_s is not None:
        return min(retry_after_s, config.retry_after_cap_s)
    ceiling = min(config.max_delay_s, config.base_delay_s * 2 ** (attempt - 1))
    return rng.uniform(0.0, ceiling)


class RetryBudget:
    """Retries in the last ``window_s`` may not exceed ``floor + share * calls`` in that window.

    Shared by every call of a process, so during an outage the extra load from retries stays a
    bounded fraction of the real traffic instead of a multiple of it.
    """

    def __init__(
        self, share: float, window_s: float, floor: int, clock: Callable[[], float] = time.monotonic
    ):
        self.share = share
        self.window_s = window_s
        self.floor = floor
        self._clock = clock
        self._calls: deque[float] = deque()
        self._retries: deque[float] = deque()
        self.denied = 0

    @classmethod
    def of(cls, config: RetryConfig) -> RetryBudget:
        """The budget ``config`` describes (``budget_share``, ``budget_window_s``, ``budget_floor``)."""
        return cls(config.budget_share, config.budget_window_s, config.budget_floor)

    def _trim(self, now: float) -> None:
        for events in (self._calls, self._retries):
            while events and events[0] <= now - self.window_s:
                events.popleft()

    def record_call(self) -> None:
        """Count one first attempt."""
        now = self._clock()
        self._trim(now)  # also here: a run without retries would otherwise keep every call forever
        self._calls.append(now)

    def try_spend(self) -> bool:
        """Take one retry from the budget; False (and counted) when none is left."""
        now = self._clock()
        self._trim(now)
        if len(self._retries) >= self.floor + self.share * len(self._calls):
            self.denied += 1
            return False
        self._retries.append(now)
        return True


class Retrier:
    """Runs one call's attempts under a :class:`RetryConfig` and a shared :class:`RetryBudget`.

    The one retry loop of the harness: model calls go through :class:`RetryingModel`, and a
    start-up probe that is no chat request (``infer``'s ``GET /models``) calls :meth:`run` directly.
    """

    def __init__(
        self,
        config: RetryConfig,
        budget: RetryBudget,
        *,
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.config = config
        self.budget = budget
        self.rng = rng or random.Random()
        self.sleep = sleep
        self.retries = 0
        self.slept_s = 0.0  # backoff and Retry-After sleeps of every call, for wall-time accounting

    async def run(self, attempt: Callable[[], Awaitable[T]], what: object) -> T:
        """``attempt()`` until it returns, fails for good, or the policy refuses another try.

        The error that ends the call carries ``context["attempts"]`` and ``context["gave_up"]``
        when the policy refused a retry. ``what`` names the call in log lines.
        """
        self.budget.record_call()
        started = time.monotonic()
        number = 1
        while True:
            try:
                return await attempt()
            except TransientLLMError as exc:
                decision = retry_decision(exc)
                if not decision.retry:
                    raise
                delay = backoff_delay(number, decision.retry_after_s, self.config, self.rng)
                # A Retry-After is the server asking us to wait: honouring it adds no load, so it
                # spends no budget (the budget is for storms of errors).
                why = self._refusal(number, delay, started, budgeted=decision.retry_after_s is None)
                if why is not None:
                    exc.context = {**exc.context, "attempts": number, "gave_up": why}
                    log.warning("giving up on %s after %d attempt(s): %s (%s)", what, number, why, exc)
                    raise
                log.info("retrying %s in %.2fs after attempt %d: %s", what, delay, number, decision.kind)
                self.retries += 1
                self.slept_s += delay
                await self.sleep(delay)
                number += 1

    def _refusal(self, attempt: int, delay: float, started: float, *, budgeted: bool = True) -> str | None:
        if attempt >= self.config.max_attempts:
            return f"attempt cap {self.config.max_attempts} reached"
        if time.monotonic() - started + delay > self.config.max_elapsed_s:
            return f"total deadline {self.config.max_elapsed_s}s would pass"
        if budgeted and not self.budget.try_spend():
            return "global retry budget exhausted"
        return None


class RetryingModel(Retrier):
    """Wraps ``inner`` (normally the router, so a retry may land on a healthier replica)."""

    def __init__(
        self,
        inner: ChatModel,
        config: RetryConfig,
        budget: RetryBudget,
        *,
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(config, budget, rng=rng, sleep=sleep)
        self.inner = inner

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self.run(lambda: self.inner.complete(request), request.role)
