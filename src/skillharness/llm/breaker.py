"""A per-endpoint circuit breaker whose half-open state admits exactly one probe (audit P2-6).

closed ──(failure_threshold consecutive transient failures)──▶ open
open ──(cooldown_s elapsed; the next caller becomes THE probe)──▶ half-open
half-open ──probe succeeds──▶ closed;  half-open ──probe fails──▶ open (cooldown restarts)

A router opens a breaker at once (:meth:`CircuitBreaker.trip`) when its replica refuses a
connection or resets one and another replica accepts: the replica leaves the rotation without
waiting for ``failure_threshold`` failures. Each transition is logged with its wall-clock time and
reported to an optional listener (the stack's :class:`~skillharness.llm.events.EventLog`).

While open or probing, other callers wait (default; an outage pauses the run) up to
``wait_deadline_s``, or fail fast, as configured. Single-probe holds under any concurrency
because admission is decided without an ``await`` between the check and the claim.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum

from skillharness.errors import CircuitOpenError, FatalLLMError, TransientLLMError
from skillharness.llm.config import BreakerConfig, OpenBehaviour
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse

__all__ = ["BreakerModel", "BreakerState", "CircuitBreaker"]

log = logging.getLogger(__name__)


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    """State machine plus admission; call :meth:`admit`, then exactly one of the ``record_*``."""

    def __init__(
        self,
        name: str,
        config: BreakerConfig,
        clock: Callable[[], float] = time.monotonic,
        *,
        on_transition: Callable[[str, str, str], None] | None = None,
    ) -> None:
        self.name = name
        self._on_transition = on_transition  # (endpoint, before, after)
        self.config = config
        self._clock = clock
        self.state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probe_out = False
        self._changed = asyncio.Event()
        self.transitions: list[tuple[BreakerState, BreakerState]] = []
        self._waiters: dict[int, float] = {}  # id of a waiting admit() -> its deadline
        self.waited_s = 0.0  # summed over callers: time spent waiting for admission (wall-time accounting)

    def _set(self, state: BreakerState) -> None:
        if state is not self.state:
            stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
            log.warning("%s breaker %s: %s -> %s", stamp, self.name, self.state.value, state.value)
            self.transitions.append((self.state, state))
            if self._on_transition is not None:
                self._on_transition(self.name, self.state.value, state.value)
            self.state = state
        self._changed.set()  # wake every waiter; they re-check and most go back to sleep
        self._changed = asyncio.Event()

    @property
    def opened(self) -> int:
        """How often this breaker has opened (each opening pauses its endpoint's callers)."""
        return sum(1 for _, to in self.transitions if to is BreakerState.OPEN)

    @property
    def accepting(self) -> bool:
        """Would a caller be admitted right now without waiting (routing uses this)?"""
        if self.state is BreakerState.CLOSED:
            return True
        if self.state is BreakerState.OPEN:
            return self._clock() - self._opened_at >= self.config.cooldown_s
        return not self._probe_out

    def _try_admit(self) -> bool | None:
        """True: admitted as the probe; False: admitted normally; None: not admitted."""
        if self.state is BreakerState.CLOSED:
            return False
        if self.state is BreakerState.OPEN and self._clock() - self._opened_at >= self.config.cooldown_s:
            self._set(BreakerState.HALF_OPEN)
        if self.state is BreakerState.HALF_OPEN and not self._probe_out:
            self._probe_out = True
            return True
        return None

    def describe(self) -> str:
        """What this endpoint's callers are waiting for, and how long, for a progress display."""
        if self.state is BreakerState.CLOSED:
            return f"{self.name} ok"
        now = self._clock()
        parts = [f"{self.name} {self.state.value.replace('_', '-')}"]
        if self.state is BreakerState.OPEN:
            parts.append(f"probe in {max(0.0, self._opened_at + self.config.cooldown_s - now):.0f}s")
        else:
            parts.append("probing")
        if self._waiters:
            give_up = max(0.0, min(self._waiters.values()) - now)
            parts.append(f"{len(self._waiters)} call(s) waiting, first gives up in {give_up:.0f}s")
        return ", ".join(parts)

    async def admit(self) -> bool:
        """Wait for (or refuse) admission. Returns True when this caller is the probe."""
        started = self._clock()
        deadline = started + self.config.wait_deadline_s
        token = object()
        try:
            return await self._admit(deadline, token)
        finally:
            self._waiters.pop(id(token), None)
            self.waited_s += self._clock() - started

    async def _admit(self, deadline: float, token: object) -> bool:
        while True:
            admitted = self._try_admit()
            if admitted is not None:
                return admitted
            remaining = deadline - self._clock()
            if self.config.on_open is OpenBehaviour.FAIL_FAST or remaining <= 0:
                waited = (
                    "fail_fast"
                    if self.config.on_open is OpenBehaviour.FAIL_FAST
                    else (
                        f"waited breaker.wait_deadline_s = {self.config.wait_deadline_s:g}s for it to recover"
                    )
                )
                raise CircuitOpenError(
                    f"{self.name}: circuit breaker is {self.state.value} ({waited})",
                    endpoint=self.name,
                    kind="circuit_open",
                )
            self._waiters[id(token)] = deadline
            wake = remaining
            if self.state is BreakerState.OPEN:
                wake = min(wake, max(0.0, self._opened_at + self.config.cooldown_s - self._clock()) + 1e-3)
            try:
                async with asyncio.timeout(wake):
                    await self._changed.wait()
            except TimeoutError:
                pass

    def record_success(self, probe: bool) -> None:
        """The endpoint answered (any answer that is not a transient failure counts)."""
        if probe:
            self._probe_out = False
        self._failures = 0
        if probe or self.state is BreakerState.HALF_OPEN:
            self._set(BreakerState.CLOSED)

    def record_failure(self, probe: bool) -> None:
        """The endpoint failed transiently."""
        if probe:
            self._probe_out = False
            if self.state is BreakerState.HALF_OPEN:
                self._opened_at = self._clock()
                self._set(BreakerState.OPEN)
                return
            # Another call closed the breaker while this probe was out: an ordinary failure now.
        if self.state is BreakerState.CLOSED:
            self._failures += 1
            if self._failures >= self.config.failure_threshold:
                self._opened_at = self._clock()
                self._set(BreakerState.OPEN)

    def trip(self) -> None:
        """Open now (a refused or reset connection): the replica leaves the rotation at once.

        An open breaker keeps its cooldown; a half-open one is left to its probe's outcome.
        """
        if self.state is BreakerState.CLOSED:
            self._failures = 0
            self._opened_at = self._clock()
            self._set(BreakerState.OPEN)

    def release(self, probe: bool) -> None:
        """The call ended without telling us anything (cancelled): free the probe slot."""
        if probe:
            self._probe_out = False
            self._set(self.state)


class BreakerModel:
    """Wraps one endpoint's model with its breaker."""

    def __init__(self, inner: ChatModel, breaker: CircuitBreaker) -> None:
        self.inner = inner
        self.breaker = breaker

    async def complete(self, request: ChatRequest) -> ChatResponse:
        probe = await self.breaker.admit()
        try:
            response = await self.inner.complete(request)
        except TransientLLMError:
            self.breaker.record_failure(probe)
            raise
        except FatalLLMError as exc:
            if exc.context.get("status") is not None:
                self.breaker.record_success(probe)  # a fatal *answer* (400, 401, ...): the server is up
            else:
                self.breaker.release(probe)  # a missing key or an unencodable body never reached it
            raise
        except BaseException:
            self.breaker.release(probe)
            raise
        self.breaker.record_success(probe)
        return response
