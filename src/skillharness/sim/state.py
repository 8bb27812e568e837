"""What the simulated server shares across requests: config, responder, stats, faults, capacity."""

from __future__ import annotations

import asyncio
import itertools
import threading
from typing import Any, Protocol

from skillharness.llm.roles import Role
from skillharness.sim.config import SimConfig
from skillharness.sim.faults import FaultInjector
from skillharness.sim.requests import HTTPProblem
from skillharness.sim.stats import SimStats
from skillharness.sim.wire import Reply

__all__ = ["Responder", "SimState"]


class Responder(Protocol):
    """Decides what the model says to a request (the world and the roles live behind this)."""

    def refusal(self, body: dict[str, Any], role: Role | None) -> HTTPProblem | None:
        """The error answering ``body`` instead of a reply (a question it does not know), or None."""
        ...

    def respond(self, body: dict[str, Any], role: Role | None) -> Reply: ...


class SimState:
    """Everything the app shares across requests; the Python handle reaches it directly."""

    def __init__(self, config: SimConfig, responder: Responder, oracle: Any = None) -> None:
        self.config = config
        self.responder = responder
        self.oracle = oracle
        self.stats = SimStats()
        self.faults = FaultInjector(config.faults, config.seed)
        self.recorded: list[dict[str, Any]] = []  # request bodies, when config.record_requests
        self._numbers = itertools.count(1)
        self._numbers_lock = threading.Lock()
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None

    def capacity(self) -> asyncio.Semaphore | None:
        """The server-side concurrency limit of the running loop (None: unlimited).

        A semaphore belongs to one event loop, and a stopped and restarted server runs a new one.
        """
        if not self.config.max_concurrency:
            return None
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore = asyncio.Semaphore(self.config.max_concurrency)
            self._semaphore_loop = loop
        return self._semaphore

    def next_request_no(self) -> int:
        with self._numbers_lock:
            return next(self._numbers)
