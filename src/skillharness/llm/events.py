"""What an outage leaves behind: failed attempts and breaker transitions, as events.

The LLM layer knows nothing of the store. It reports each failed attempt (with its error class,
its replica and what the retry layer did next) and each breaker transition (with its time) to an
:class:`EventLog`; listeners (the accountant) see every event as it happens, and a caller above
(a training run) drains the pending ones into its store.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["AttemptEvent", "AttemptOutcome", "BreakerEvent", "EventLog", "LLMEvent"]


class AttemptOutcome(StrEnum):
    """What followed a failed attempt."""

    RETRIED = "retried"  # after a backoff, on any replica that accepts
    FAILOVER = "failover"  # at once, on another replica (the failed one left the rotation)
    GAVE_UP = "gave_up"  # the policy refused another try (cap, deadline, budget)
    FATAL = "fatal"  # not retryable (a 4xx answer, an open breaker past its deadline)


@dataclass(frozen=True)
class AttemptEvent:
    """One failed attempt of one call."""

    at: float  # wall clock, seconds since the epoch
    endpoint: str
    kind: str  # the error class, e.g. connect_error, http_503
    role: str
    attempt: int
    outcome: AttemptOutcome


@dataclass(frozen=True)
class BreakerEvent:
    """One replica's breaker changing state."""

    at: float
    endpoint: str
    before: str
    after: str


LLMEvent = AttemptEvent | BreakerEvent


class EventLog:
    """Failed attempts and breaker transitions of one stack, kept until drained."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._pending: list[LLMEvent] = []
        self._listeners: list[Callable[[LLMEvent], None]] = []
        self.attempts: Counter[tuple[str, str]] = Counter()  # (error class, endpoint) -> failed attempts

    def subscribe(self, listener: Callable[[LLMEvent], None]) -> None:
        """Call ``listener`` with every event from now on."""
        self._listeners.append(listener)

    def _add(self, event: LLMEvent) -> None:
        self._pending.append(event)
        for listener in self._listeners:
            listener(event)

    def attempt_failed(
        self, endpoint: str, kind: str, role: str, attempt: int, outcome: AttemptOutcome
    ) -> None:
        self.attempts[(kind, endpoint)] += 1
        self._add(AttemptEvent(self._clock(), endpoint, kind, role, attempt, outcome))

    def breaker_changed(self, endpoint: str, before: str, after: str) -> None:
        self._add(BreakerEvent(self._clock(), endpoint, before, after))

    def drain(self) -> list[LLMEvent]:
        """The events since the last drain, oldest first."""
        events, self._pending = self._pending, []
        return events
