"""Retrying transient failures: backoff with full jitter, Retry-After, an attempt cap, a total
deadline, and a global budget so an outage cannot multiply the load on a sick server.

What is transient is decided by :func:`skillharness.llm.errors.retry_decision` (data); this
module only decides *when* and *whether there is budget*. Around a router, each attempt is routed
afresh and away from the replica that just failed; when that replica refused or dropped the
connection (it left the rotation) and another accepts, the retry goes there at once, with no
backoff and no budget spent: the backoff and the budget protect a sick server, and the retry
does not reach it. Every failed attempt is reported to the stack's event log.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from skillharness.errors import LLMError, TransientLLMError
from skillharness.llm.config import RetryConfig
from skillharness.llm.errors import OUT_OF_ROTATION_KINDS, retry_decision
from skillharness.llm.events import AttemptOutcome, EventLog
from skillharness.llm.router import Router
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
        events: EventLog | None = None,
    ) -> None:
        self.config = config
        self.budget = budget
        self.events = events
        self.rng = rng or random.Random()
        self.sleep = sleep
        self.retries = 0
        self.slept_s = 0.0  # backoff and Retry-After sleeps of every call, for wall-time accounting

    async def run(
        self,
        attempt: Callable[[], Awaitable[T]],
        what: object,
        *,
        failover: Callable[[TransientLLMError], bool] | None = None,
    ) -> T:
        """``attempt()`` until it returns, fails for good, or the policy refuses another try.

        The error that ends the call carries ``context["attempts"]`` and ``context["gave_up"]``
        when the policy refused a retry. ``what`` names the call in log lines (a role names its
        events too). ``failover(exc)`` says whether the next attempt goes at once to another replica.
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
                    self._note(exc, what, number, AttemptOutcome.FATAL)
                    raise
                moved = failover is not None and failover(exc)
                delay = 0.0 if moved else backoff_delay(number, decision.retry_after_s, self.config, self.rng)
                # A Retry-After is the server asking us to wait, and a failover reaches another
                # replica: neither adds load to a sick server, so neither spends budget.
                budgeted = decision.retry_after_s is None and not moved
                why = self._refusal(number, delay, started, budgeted=budgeted)
                if why is not None:
                    exc.context = {**exc.context, "attempts": number, "gave_up": why}
                    self._note(exc, what, number, AttemptOutcome.GAVE_UP)
                    log.warning("giving up on %s after %d attempt(s): %s (%s)", what, number, why, exc)
                    raise
                self._note(exc, what, number, AttemptOutcome.FAILOVER if moved else AttemptOutcome.RETRIED)
                log.info("retrying %s in %.2fs after attempt %d: %s", what, delay, number, decision.kind)
                self.retries += 1
                self.slept_s += delay
                await self.sleep(delay)
                number += 1
            except LLMError as exc:
                self._note(exc, what, number, AttemptOutcome.FATAL)
                raise

    def _note(self, exc: LLMError, what: object, attempt: int, outcome: AttemptOutcome) -> None:
        if self.events is not None:
            kind = str(exc.context.get("kind", type(exc).__name__))
            endpoint = str(exc.context.get("endpoint", ""))
            self.events.attempt_failed(endpoint, kind, str(what), attempt, outcome)
            if outcome in (AttemptOutcome.GAVE_UP, AttemptOutcome.FATAL):
                exc.context = {**exc.context, "noted": True}  # the accountant counted this attempt

    def _refusal(self, attempt: int, delay: float, started: float, *, budgeted: bool = True) -> str | None:
        if attempt >= self.config.max_attempts:
            return f"attempt cap {self.config.max_attempts} reached"
        if time.monotonic() - started + delay > self.config.max_elapsed_s:
            return f"total deadline {self.config.max_elapsed_s}s would pass"
        if budgeted and not self.budget.try_spend():
            return "global retry budget exhausted"
        return None


class RetryingModel(Retrier):
    """Wraps ``inner``; around a :class:`Router`, each retry is routed away from the failed replica."""

    def __init__(
        self,
        inner: ChatModel,
        config: RetryConfig,
        budget: RetryBudget,
        *,
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        events: EventLog | None = None,
    ) -> None:
        super().__init__(config, budget, rng=rng, sleep=sleep, events=events)
        self.inner = inner

    async def complete(self, request: ChatRequest) -> ChatResponse:
        router = self.inner
        if not isinstance(router, Router):
            return await self.run(lambda: self.inner.complete(request), request.role.value)
        failed: list[str] = []

        async def attempt() -> ChatResponse:
            try:
                return await router.complete(request, avoid=failed[-1] if failed else None)
            except TransientLLMError as exc:
                failed.append(str(exc.context.get("endpoint", "")))
                raise

        def failover(exc: TransientLLMError) -> bool:
            left = exc.context.get("kind") in OUT_OF_ROTATION_KINDS
            return left and router.accepting_besides(str(exc.context.get("endpoint", "")))

        return await self.run(attempt, request.role.value, failover=failover)
