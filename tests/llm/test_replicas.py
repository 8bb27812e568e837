"""Several replicas of one model (issue 32 item 2, issue 29 item 2): a dead replica never holds a
call up, ties favour no replica, weights share the calls, and a draw's two arms share one replica.

Two real simulator servers on loopback; one is stopped where a test needs a dead replica.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter

from llm_support import make_request

from bench_support import StartSim
from skillharness.llm import build_chat_model
from skillharness.llm.breaker import BreakerState, CircuitBreaker
from skillharness.llm.cache.key import cache_key
from skillharness.llm.client import request_body
from skillharness.llm.config import BreakerConfig, EndpointConfig, LLMConfig
from skillharness.llm.events import AttemptEvent, AttemptOutcome
from skillharness.llm.router import Lane, Router
from skillharness.llm.types import ChatRequest, ChatResponse
from skillharness.sim import SimConfig, SimServer


def _config(*servers: SimServer, **fields: object) -> LLMConfig:
    endpoints = tuple(EndpointConfig(base_url=s.base_url, name=f"r{i}") for i, s in enumerate(servers))
    return LLMConfig(model="sim-vl", endpoints=endpoints, **fields)  # default retry and breaker


def _request(i: int, affinity: str | None = None, text: str = "q") -> ChatRequest:
    return make_request(f"{text}{i}", affinity=affinity).model_copy(update={"model": "sim-vl"})


async def test_issue_32_2_a_dead_first_replica_holds_no_call_up(sim_factory: StartSim) -> None:
    """Default retry and breaker settings: the dead replica leaves the rotation on its first refusal."""
    dead, alive = sim_factory(SimConfig()), sim_factory(SimConfig())
    async with build_chat_model(_config(dead, alive), rng=random.Random(0)) as stack:
        dead.stop()
        started = time.monotonic()
        answers = [await stack.complete(_request(i)) for i in range(20)]
        elapsed = time.monotonic() - started
        events = stack.events.drain()
    assert {a.endpoint for a in answers} == {"r1"}
    assert elapsed < 1.0, f"20 calls took {elapsed:.2f}s with one replica dead"
    failed = [e for e in events if isinstance(e, AttemptEvent)]
    assert failed, "the dead replica was tried at least once"
    assert {(e.endpoint, e.kind, e.outcome) for e in failed} == {
        ("r0", "connect_error", AttemptOutcome.FAILOVER)
    }
    assert len(failed) == 1, "once out of rotation, the dead replica gets no other call within its cooldown"
    assert stack.router.lanes[0].breaker.state is BreakerState.OPEN
    assert stack.accountant.by_role[make_request().role].errors == 1, "usage shows the outage"
    assert stack.accountant.by_role[make_request().role].failed_calls == 0


async def test_issue_32_2_equal_idle_replicas_share_the_calls_evenly(sim_factory: StartSim) -> None:
    a, b = sim_factory(SimConfig()), sim_factory(SimConfig())
    async with build_chat_model(_config(a, b), rng=random.Random(1)) as stack:
        answers = [await stack.complete(_request(i)) for i in range(200)]
    share = Counter(r.endpoint for r in answers)["r0"] / 200
    assert 0.4 <= share <= 0.6, f"the first replica took {share:.0%}"
    assert a.stats()["requests"] + b.stats()["requests"] == 200
    assert abs(a.stats()["requests"] - Counter(r.endpoint for r in answers)["r0"]) == 0


class _Answer:
    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(content="ok", finish_reason="stop")


def _lane(name: str, weight: float = 1.0) -> Lane:
    return Lane(name, _Answer(), CircuitBreaker(name, BreakerConfig()), limit=4, weight=weight)


def test_issue_32_2_weights_share_the_calls_of_idle_replicas() -> None:
    router = Router([_lane("big", weight=3.0), _lane("small")], rng=random.Random(2))
    picks = Counter(router.pick().name for _ in range(4000))
    assert 0.72 <= picks["big"] / 4000 <= 0.78


def test_issue_32_2_weights_share_the_in_flight_calls() -> None:
    router = Router([_lane("big", weight=2.0), _lane("small")], rng=random.Random(3))
    for _ in range(6):  # six calls in flight: four on the replica of weight 2, two on the other
        router.pick().in_flight += 1
    assert [lane.in_flight for lane in router.lanes] == [4, 2]


def test_issue_29_2_affinity_keys_spread_over_replicas_by_weight() -> None:
    router = Router([_lane("a"), _lane("b", weight=3.0)])
    picks = Counter(router.pick(affinity=f"q{i}#0").name for i in range(4000))
    assert 0.72 <= picks["b"] / 4000 <= 0.78
    assert all(
        router.pick(affinity=f"q{i}#0").name == router.pick(affinity=f"q{i}#0").name for i in range(50)
    )


async def test_issue_29_2_both_arms_of_a_draw_share_a_replica_and_move_together(
    sim_factory: StartSim,
) -> None:
    a, b = sim_factory(SimConfig()), sim_factory(SimConfig())
    async with build_chat_model(_config(a, b)) as stack:

        async def pair(i: int) -> tuple[str, str]:
            key = f"question-{i}#0"  # the agent's key: one draw (question, sample index)
            incumbent, candidate = await asyncio.gather(
                stack.complete(_request(i, key, "incumbent")), stack.complete(_request(i, key, "candidate"))
            )
            return incumbent.endpoint, candidate.endpoint

        before = [await pair(i) for i in range(40)]
        assert all(x == y for x, y in before), "both arms of every draw on one replica"
        assert {x for x, _ in before} == {"r0", "r1"}, "draws spread over both replicas"
        assert a.stats()["requests"] == 2 * sum(1 for x, _ in before if x == "r0")
        a.stop()
        after = [await pair(i) for i in range(40)]
    assert all(x == y == "r1" for x, y in after), "a dead replica moves its whole pairs"
    stayed = [i for i, (x, _) in enumerate(before) if x == "r1"]
    assert all(after[i][0] == "r1" for i in stayed)


async def test_issue_32_2_a_retry_after_a_server_error_goes_to_the_other_replica(
    sim_factory: StartSim,
) -> None:
    """A 503 does not take its replica out of rotation, but the call's retry goes elsewhere."""
    sick, healthy = sim_factory(SimConfig()), sim_factory(SimConfig())
    sick.configure_faults(rates={"http_503": 1.0})
    async with build_chat_model(_config(sick, healthy), rng=random.Random(4)) as stack:
        answers = [await stack.complete(_request(i, affinity=f"draw-{i}")) for i in range(30)]
        failed = [e for e in stack.events.drain() if isinstance(e, AttemptEvent)]
    assert {a.endpoint for a in answers} == {"r1"}
    assert failed
    assert {(e.endpoint, e.kind) for e in failed} == {("r0", "http_503")}
    assert all(e.attempt == 1 for e in failed), "no call went back to the sick replica for its retry"


def test_issue_29_2_the_affinity_key_is_neither_sent_nor_part_of_the_cache_key() -> None:
    plain, keyed = _request(1), _request(1, affinity="question-1#0")
    assert request_body(keyed) == request_body(plain)
    assert cache_key(keyed, "salt") == cache_key(plain, "salt")
