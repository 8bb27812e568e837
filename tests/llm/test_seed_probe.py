"""The per-draw seed check of preflight and of a training run's start, over real loopback HTTP."""

from __future__ import annotations

import logging

import pytest
from llm_support import Reply, ScriptedServer, ok_frames

from skillharness.agent.config import AgentConfig
from skillharness.config import Config
from skillharness.llm import PER_DRAW, SamplingParams
from skillharness.llm.config import EndpointConfig, LLMConfig
from skillharness.sim import SimConfig, SimServer
from skillharness.train.loop.training import checked_seed_mode
from skillharness.train.preflight.endpoint_rows import _seed_row
from skillharness.train.preflight.probes import EndpointAnswer, seed_ignored
from skillharness.train.preflight.report import CheckStatus, Collector


def _llm(base_url: str, model: str = "scripted") -> LLMConfig:
    return LLMConfig(model=model, endpoints=(EndpointConfig(base_url=base_url),))


PER_DRAW_SAMPLING = SamplingParams(temperature=0.7, seed=PER_DRAW)


async def test_a_server_whose_two_replies_to_one_seed_differ_is_named(scripted: ScriptedServer) -> None:
    scripted.push(Reply(frames=ok_frames("red tulip")), Reply(frames=ok_frames("blue anchor")))
    found = await seed_ignored(_llm(scripted.base_url), PER_DRAW_SAMPLING, 5.0)
    seeds = [r["seed"] for r in scripted.requests]
    assert found == [EndpointConfig(base_url=scripted.base_url).label]
    assert len(seeds) == 2
    assert seeds[0] == seeds[1] is not None  # one seed, asked twice


async def test_a_server_that_answers_one_seed_alike_is_not_named(scripted: ScriptedServer) -> None:
    assert await seed_ignored(_llm(scripted.base_url), PER_DRAW_SAMPLING, 5.0) == []
    assert len(scripted.requests) == 2
    with SimServer(SimConfig(seed=1)) as sim:
        assert await seed_ignored(_llm(sim.base_url, sim.model_name), PER_DRAW_SAMPLING, 5.0) == []


async def test_preflight_shows_a_server_that_ignores_the_seed_as_a_warning(scripted: ScriptedServer) -> None:
    llm = _llm(scripted.base_url)
    answers = (EndpointAnswer(endpoint=llm.endpoints[0]),)
    scripted.push(Reply(frames=ok_frames("red tulip")), Reply(frames=ok_frames("blue anchor")))
    ignored = Collector()
    await _seed_row(llm, PER_DRAW_SAMPLING, answers, 5.0, (), ignored)
    honoured = Collector()
    await _seed_row(llm, PER_DRAW_SAMPLING, answers, 5.0, (), honoured)  # the default reply twice
    (row,) = [r for r in ignored.report().rows() if r.check == "seed"]
    assert row.status is CheckStatus.WARN
    assert "ignore(s) the request seed" in row.message
    assert "WARNING" not in row.message
    assert [r.status for r in honoured.report().rows() if r.check == "seed"] == [CheckStatus.PASS]


async def test_no_check_without_a_per_draw_seed(scripted: ScriptedServer) -> None:
    independent = SamplingParams(temperature=0.7)
    greedy = SamplingParams(temperature=0.0, seed=PER_DRAW)
    assert await seed_ignored(_llm(scripted.base_url), independent, 5.0) == []
    assert await seed_ignored(_llm(scripted.base_url), greedy, 5.0) == []
    assert scripted.requests == []


async def test_training_falls_back_to_independent_arms_when_the_server_ignores_the_seed(
    scripted: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    config = Config(
        llm=_llm(scripted.base_url), agent=AgentConfig.model_validate({"sampling": {"temperature": 0.7}})
    ).for_run("run-a")
    assert (config.agent.sampling.seed, config.agent.seed_salt) == (PER_DRAW, "run-a")
    scripted.push(Reply(frames=ok_frames("red tulip")), Reply(frames=ok_frames("blue anchor")))
    with caplog.at_level(logging.WARNING):
        fallen = await checked_seed_mode(config)
    assert (fallen.agent.sampling.seed, fallen.agent.seed_salt) == (None, "")
    assert "ignore(s) the request seed" in caplog.text
    assert fallen.settings()["agent.sampling.seed"] is None  # the run's settings say what it did
    kept = await checked_seed_mode(config)  # the default reply twice: the seed looks honoured
    assert kept.agent.sampling.seed == PER_DRAW


def test_sampling_above_0_sends_one_seed_per_draw_unless_told_otherwise() -> None:
    default = AgentConfig.model_validate({"sampling": {"temperature": 0.7}})
    assert default.sampling.seed == PER_DRAW
    independent = AgentConfig.model_validate({"sampling": {"temperature": 0.7, "seed": None}})
    assert independent.sampling.seed is None
    assert AgentConfig.model_validate({"sampling": {"temperature": 0.0}}).sampling.seed is None
    # A fresh salt per run (its id), recorded in its settings; a pinned salt pairs two runs.
    a, b = Config(agent=default).for_run("run-a"), Config(agent=default).for_run("run-b")
    assert a.settings()["agent.seed_salt"] == "run-a" != b.settings()["agent.seed_salt"]
    pinned = Config(agent=default.model_copy(update={"seed_salt": "pair"}))
    assert pinned.for_run("run-a").settings() == pinned.for_run("run-b").settings()
    assert Config(agent=independent).for_run("run-a").agent.seed_salt == ""
