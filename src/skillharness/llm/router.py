"""Several replicas of one model: per-endpoint in-flight limits, weighted least-load routing,
pair affinity, and failover away from a dead replica.

Each :class:`Lane` is one endpoint: its breaker-wrapped client, its breaker, a semaphore of
``max_in_flight`` and a ``weight``. A call goes to the lane with the lowest load
(in-flight / (limit x weight)) among those whose breaker admits callers now; equal loads are
broken at random in proportion to weight, so no replica is favoured for being listed first. An
open breaker takes its endpoint out of rotation. When every breaker is open, the call goes to the
least-loaded lane anyway and waits there for its breaker (or fails fast), as the breaker config
says.

A request with an ``affinity`` key goes to the lane the key hashes to (weighted rendezvous
hashing over the accepting lanes), so both arms of a paired draw share one replica's sampler and
prefix cache; when that lane's breaker is open the whole key moves to the next lane in the key's
order. A refused or reset connection opens the failed lane's breaker at once when another lane
accepts, and a retry names the lane that just failed (``avoid``) so it lands elsewhere.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from skillharness.errors import TransientLLMError
from skillharness.llm.breaker import CircuitBreaker
from skillharness.llm.errors import OUT_OF_ROTATION_KINDS
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse

__all__ = ["Lane", "Router"]


@dataclass
class Lane:
    """One endpoint's place in the router."""

    name: str
    model: ChatModel  # normally BreakerModel(EndpointClient)
    breaker: CircuitBreaker
    limit: int
    weight: float = 1.0
    in_flight: int = 0  # admitted or queued for this lane's semaphore
    calls: int = 0
    _slots: asyncio.Semaphore = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._slots = asyncio.Semaphore(self.limit)

    @property
    def load(self) -> float:
        return self.in_flight / (self.limit * self.weight)

    def rank(self, key: str) -> float:
        """Weighted rendezvous score of ``key`` on this lane: the highest score wins the key."""
        digest = hashlib.blake2b(f"{key}\x00{self.name}".encode(), digest_size=8).digest()
        uniform = (int.from_bytes(digest, "big") + 0.5) / 2**64  # in (0, 1)
        return -self.weight / math.log(uniform)


class Router:
    """A :class:`ChatModel` that spreads calls over lanes."""

    def __init__(self, lanes: Sequence[Lane], *, rng: random.Random | None = None) -> None:
        if not lanes:
            raise ValueError("a router needs at least one lane")
        self.lanes = tuple(lanes)
        self._rng = rng or random.Random()

    def accepting_besides(self, name: str | None) -> bool:
        """Whether a lane other than ``name`` admits callers now (somewhere to fail over to)."""
        return any(lane.name != name and lane.breaker.accepting for lane in self.lanes)

    def pick(self, *, affinity: str | None = None, avoid: str | None = None) -> Lane:
        """The lane for one attempt.

        Among the accepting lanes (all lanes when none accepts), leaving out ``avoid`` when another
        remains: the one ``affinity`` hashes to, or else the least loaded (ties broken at random in
        proportion to weight).
        """
        pool = [lane for lane in self.lanes if lane.breaker.accepting] or list(self.lanes)
        if avoid is not None:
            pool = [lane for lane in pool if lane.name != avoid] or pool
        if affinity is not None:
            return max(pool, key=lambda lane: lane.rank(affinity))
        lowest = min(lane.load for lane in pool)
        tied = [lane for lane in pool if lane.load == lowest]
        if len(tied) == 1:
            return tied[0]
        return self._rng.choices(tied, weights=[lane.weight for lane in tied])[0]

    async def complete(self, request: ChatRequest, *, avoid: str | None = None) -> ChatResponse:
        lane = self.pick(affinity=request.affinity, avoid=avoid)
        lane.in_flight += 1  # counted before any await so concurrent picks see it
        lane.calls += 1
        try:
            async with lane._slots:
                return await lane.model.complete(request)
        except TransientLLMError as exc:
            if exc.context.get("kind") in OUT_OF_ROTATION_KINDS and self.accepting_besides(lane.name):
                lane.breaker.trip()
            raise
        finally:
            lane.in_flight -= 1
