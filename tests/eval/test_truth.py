"""Simulator truth only from the simulator; an endpoint that is not one gives none, never an error."""

from __future__ import annotations

import pytest
from eval_support import improved

from bench_support import Bench
from net_support import free_port
from skillharness.agent import AgentConfig, ProtocolName
from skillharness.data.pools import load_pools
from skillharness.eval import agent_path, simulator_truth
from skillharness.eval.truth import simulator_root
from skillharness.sim import AgentPath, SimServer
from skillharness.skills import Bundle


def test_simulator_root_strips_the_openai_path() -> None:
    assert simulator_root("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000"
    assert simulator_root("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000"
    assert simulator_root("http://gpu:9000") == "http://gpu:9000"


async def test_truth_from_the_simulator_matches_its_oracle(
    holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    base = Bundle.load(holdout_bench.bundle)
    final = improved(base, holdout_sim)
    pools = load_pools(holdout_bench.pools).questions
    test_ids, val_ids = list(pools["test"]), list(pools["val"])
    truth = await simulator_truth(holdout_sim.base_url, final, base, {("overall", "all"): test_ids}, val_ids)
    assert truth is not None
    overall = truth.cells[("overall", "all")]
    assert overall.final == pytest.approx(holdout_sim.oracle.expected_accuracy(final, test_ids))
    assert overall.baseline == pytest.approx(holdout_sim.oracle.expected_accuracy(base, test_ids))
    by_type = holdout_sim.oracle.per_task_type(base, test_ids)
    assert {
        label: cell.baseline for (g, label), cell in truth.cells.items() if g == "task_type"
    } == pytest.approx(by_type)
    assert truth.val_gain == pytest.approx(holdout_sim.oracle.edit_effect(base, final, val_ids).delta)


async def test_truth_is_scored_on_the_runs_agent_path(holdout_bench: Bench, holdout_sim: SimServer) -> None:
    """Two turns with every tool offered: long plans end unanswered, and the truth says so."""
    base = Bundle.load(holdout_bench.bundle)
    final = improved(base, holdout_sim)
    test_ids = list(load_pools(holdout_bench.pools).questions["test"])
    short = AgentConfig(max_steps=2)
    path = agent_path(short)
    assert path == {
        "tools": True,
        "frames": True,
        "subtitles": True,
        "max_steps": 2,
        "bundle_in_prompt": True,
    }
    groups = {("overall", "all"): test_ids}
    truth = await simulator_truth(holdout_sim.base_url, final, base, groups, (), path)
    default = await simulator_truth(holdout_sim.base_url, final, base, groups)
    assert truth is not None
    assert default is not None
    cell, full = truth.cells[("overall", "all")], default.cells[("overall", "all")]
    assert cell.final == pytest.approx(
        holdout_sim.oracle.expected_accuracy(final, test_ids, AgentPath(**path))
    )
    assert cell.final == pytest.approx(
        full.final * holdout_sim.oracle.world.plan_completion_share(AgentPath(**path))
    )
    assert cell.final < full.final


def test_the_agent_path_follows_the_protocol_and_its_bundle_slot() -> None:
    plain = agent_path(AgentConfig(protocol=ProtocolName.LMMS_EVAL, vision=False))
    assert plain["tools"] is False
    assert plain["frames"] is False
    assert plain["bundle_in_prompt"] is False
    slot = agent_path(AgentConfig(protocol=ProtocolName.LMMS_EVAL, protocol_bundle_slot="system"))
    assert slot["bundle_in_prompt"] is True


async def test_no_truth_without_a_simulator(holdout_bench: Bench) -> None:
    base = Bundle.load(holdout_bench.bundle)
    nothing_there = f"http://127.0.0.1:{free_port()}/v1"
    assert await simulator_truth(nothing_there, base, base, {("overall", "all"): ["x"]}) is None


async def test_an_oracle_that_cannot_answer_gives_no_truth(
    holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    base = Bundle.load(holdout_bench.bundle)
    # The simulator knows no such question: its oracle answers 400, and the eval goes on without truth.
    assert (
        await simulator_truth(holdout_sim.base_url, base, base, {("overall", "all"): ["no-such-question"]})
        is None
    )
