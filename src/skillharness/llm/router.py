"""Several endpoints for one model: per-endpoint in-flight limits and least-in-flight routing.

Each :class:`Lane` is one endpoint: its breaker-wrapped client, its breaker and a semaphore of
``max_in_flight``. A call goes to the lane with the lowest load (in-flight / limit) among those
whose breaker admits callers now; an open breaker takes its endpoint out of rotation. When
every breaker is open, the call goes to the least-loaded lane anyway and waits there for its
breaker (or fails fast), as the breaker config says.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from skillharness.llm.breaker import CircuitBreaker
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse

__all__ = ["Lane", "Router"]


@dataclass
class Lane:
    """One endpoint's place in the router."""

    name: str
    model: ChatModel  # normally BreakerModel(EndpointClient)
    breaker: CircuitBreaker
    limit: int
    in_flight: int = 0  # admitted or queued for this lane's semaphore
    calls: int = 0
    _slots: asyncio.Semaphore = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._slots = asyncio.Semaphore(self.limit)

    @property
    def load(self) -> float:
        return self.in_flight / self.limit


class Router:
    """A :class:`ChatModel` that spreads calls over lanes."""

    def __init__(self, lanes: Sequence[Lane]) -> None:
        if not lanes:
            raise ValueError("a router needs at least one lane")
        self.lanes = tuple(lanes)

    def pick(self) -> Lane:
        """The least-loaded lane among those accepting; among all when none accepts."""
        accepting = [lane for lane in self.lanes if lane.breaker.accepting]
        return min(accepting or self.lanes, key=lambda lane: lane.load)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        lane = self.pick()
        lane.in_flight += 1  # counted before any await so concurrent picks see it
        lane.calls += 1
        try:
            async with lane._slots:
                return await lane.model.complete(request)
        finally:
            lane.in_flight -= 1
