"""Counters the server keeps so tests can assert what really happened (faults, queueing, roles)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

__all__ = ["SimStats"]


class SimStats:
    """Thread-safe counters; :meth:`snapshot` is what ``GET /sim/stats`` returns."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Zero every counter (the in-flight gauges keep their live value)."""
        with self._lock:
            self._counters: Counter[str] = Counter()
            self._roles: Counter[str] = Counter()
            self._faults: Counter[str] = Counter()
            self._statuses: Counter[str] = Counter()
            self._in_flight = getattr(self, "_in_flight", 0)
            self._queued = getattr(self, "_queued", 0)
            self._max_in_flight = self._in_flight
            self._max_queued = self._queued
            # Wall-clock (epoch) span of the calls and the integral of in_flight over time, so a
            # benchmark in another process can tell start-up, tail and mean calls in flight.
            self._first_start: float | None = None
            self._last_finish: float | None = None
            self._busy_s = 0.0
            self._changed = time.time()

    def count(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self._counters[name] += amount

    def role(self, role: str) -> None:
        with self._lock:
            self._roles[role] += 1

    def fault(self, kind: str) -> None:
        with self._lock:
            self._faults[kind] += 1

    def status(self, code: int) -> None:
        with self._lock:
            self._statuses[str(code)] += 1

    def queue_enter(self) -> None:
        with self._lock:
            self._queued += 1
            self._max_queued = max(self._max_queued, self._queued)

    def queue_leave(self) -> None:
        with self._lock:
            self._queued -= 1

    def _advance(self) -> float:
        """Add the time since the last change, weighted by the calls in flight (lock held)."""
        now = time.time()
        self._busy_s += self._in_flight * (now - self._changed)
        self._changed = now
        return now

    def start(self) -> None:
        with self._lock:
            now = self._advance()
            if self._first_start is None:
                self._first_start = now
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def finish(self) -> None:
        with self._lock:
            self._last_finish = self._advance()
            self._in_flight -= 1

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able copy of every counter."""
        with self._lock:
            return {
                "requests": self._counters["requests"],
                "completed": self._counters["completed"],
                "prompt_tokens": self._counters["prompt_tokens"],
                "completion_tokens": self._counters["completion_tokens"],
                "roles": dict(self._roles),
                "faults": dict(self._faults),
                "statuses": dict(self._statuses),
                "in_flight": self._in_flight,
                "max_in_flight": self._max_in_flight,
                "queued": self._queued,
                "max_queued": self._max_queued,
                "first_start_epoch_s": self._first_start,
                "last_finish_epoch_s": self._last_finish,
                "call_seconds_in_flight": self._busy_s,
            }
