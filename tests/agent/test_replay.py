"""A replay serves parse errors and answers alike; only an infra error is asked again.

Against the simulator whose agent replies are unparseable at random per request (the
``unparseable`` fault): the same request may parse once and not the next time, like a real model
sampling at temperature > 0. A replay that re-asked only the parse errors would turn some of them
into answers, which a simulator deterministic per request could never show.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest
from agent_support import question

from skillharness.agent import Agent, AgentConfig, Prediction, PredictionStatus, TraceStep
from skillharness.agent.video import LocalVideos
from skillharness.llm import CacheConfig, EndpointConfig, LLMConfig, RetryConfig, build_chat_model
from skillharness.llm.roles import Role
from skillharness.sim import FaultConfig, FaultKind, SimConfig, SimServer
from skillharness.skills.bundle import Bundle

_ASKED = 24
# The simulator holds the questions the passes ask: it refuses any other (HTTP 404).
pytestmark = pytest.mark.sim_world(SimConfig(seed=11), questions=[question(f"q{i}") for i in range(_ASKED)])


class _Memory:
    """A trace sink that keeps what it is given (each pass its own)."""

    def __init__(self) -> None:
        self.predictions: list[Prediction] = []

    async def write_step(self, step: TraceStep) -> None:
        return None

    async def write_prediction(self, prediction: Prediction) -> None:
        self.predictions.append(prediction)


def _llm(sim: SimServer) -> LLMConfig:
    retry = RetryConfig(max_attempts=2, base_delay_s=0.001, max_delay_s=0.002)
    return LLMConfig(model=sim.model_name, endpoints=(EndpointConfig(base_url=sim.base_url),), retry=retry)


async def _pass(agent: Agent, run_id: str, n: int) -> list[Prediction]:
    sink = _Memory()
    return list(
        await asyncio.gather(
            *(agent.answer(question(f"q{i}"), run_id=run_id, sample_idx=0, sink=sink) for i in range(n))
        )
    )


async def test_p0_4_parse_errors_are_replayed_like_answers(
    sim: SimServer, default_bundle: Bundle, videos: LocalVideos, tmp_path: Path
) -> None:
    sim.configure_faults(FaultConfig(rates={FaultKind.UNPARSEABLE: 0.4}, roles=(Role.AGENT,)))
    cache = CacheConfig(url=f"sqlite:///{tmp_path / 'cache.sqlite'}", salt="replay")
    config = AgentConfig.model_validate({"vision": False, "max_steps": 4, "sampling": {"temperature": 0.7}})
    async with build_chat_model(_llm(sim), cache) as stack:
        agent = Agent(stack, sim.model_name, default_bundle, videos, videos, config)
        first = await _pass(agent, "run-a", _ASKED)
        asked = sim.stats()["roles"]["agent"]
        # The same requests again (another run asking the same samples under the same salt).
        again = await _pass(agent, "run-b", _ASKED)
    statuses = Counter(p.status for p in first)
    assert statuses[PredictionStatus.PARSE_ERROR] >= 3
    assert statuses[PredictionStatus.OK] >= 3
    assert statuses[PredictionStatus.INFRA_ERROR] == 0
    assert [(p.status, p.answer, p.error_class) for p in again] == [
        (p.status, p.answer, p.error_class) for p in first
    ]
    assert all(p.cache_hit for p in again)
    assert sim.stats()["roles"]["agent"] == asked  # nothing was asked twice
