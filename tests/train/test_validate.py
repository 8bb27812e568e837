"""Validation end to end against the simulator: draws, the BaselineCache, INFRA, replay, the guard."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from train_support import train_context
from validate_support import agent_requests, gate_experiment, observations, rewrite, with_lines

from bench_support import Bench
from skillharness.agent import Prediction, PredictionStatus
from skillharness.agent.episode import REQUEST_REFUSED
from skillharness.config import load_config
from skillharness.data import Pool
from skillharness.infer import Draw
from skillharness.sim import FaultKind, SimConfig, SimServer
from skillharness.skills import Bundle, EditTarget
from skillharness.store import BaselineSample, RunKind, RunReader
from skillharness.train.config import GateConfig
from skillharness.train.gate import DecisionKind, guard_draws_per_class
from skillharness.train.state.context import TrainContext
from skillharness.train.state.outage import InfraOutage
from skillharness.train.state.records import GateReason
from skillharness.train.state.refusals import RequestsRefused
from skillharness.train.validate.baseline_cache import BaselineCache
from skillharness.train.validate.guard import GUARD_STAGE, guard_discordance
from skillharness.train.validate.paired_gate import validate

pytestmark = pytest.mark.sim_world(SimConfig(seed=3), questions="validate_bench")

# A line no insight or harmful rule of the simulated world contains: a truly useless edit.
USELESS = "Keep a steady pace through the checklist."


@pytest.fixture
def incumbent(validate_bench: Bench) -> Bundle:
    return Bundle.load(validate_bench.bundle)


async def test_p0_3_unreachable_gate_spends_nothing(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle
) -> None:
    path = gate_experiment(tmp_path, validate_bench, sim, temperature=0.0, gate={})
    async with train_context(path) as ctx:
        pool = ctx.val_by_type["Object Reasoning"]
        # The case pack used all but 5 of the class's val questions as evidence: 5 remain.
        evidence = frozenset(q.question_id for q in pool[5:])
        candidate = with_lines(incumbent, EditTarget.skill("Object Reasoning"), [USELESS], evidence)
        before = agent_requests(sim)
        outcome = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
        assert outcome.reason is GateReason.REJECT_INERTIA
        assert outcome.decision is None
        assert "unreachable" in outcome.detail
        assert "needs 8 wins" in outcome.detail
        assert outcome.evidence["distinct_questions"] == 5
        assert agent_requests(sim) == before
        assert observations(ctx.store, ctx.run_id, 1) == []
        assert ctx.store.final_predictions(f"{ctx.run_id}.g0001.cand") == {}


def _gate_predictions(ctx: TrainContext, gate_index: int) -> list[Prediction]:
    """Every prediction both arms of gate ``gate_index`` stored."""
    prefix = f"{ctx.run_id}.g{gate_index:04d}"
    return [
        *ctx.store.final_predictions(f"{prefix}.cand").values(),
        *ctx.store.final_predictions(f"{prefix}.inc").values(),
    ]


async def test_p1_1_no_observation_is_a_replay(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle
) -> None:
    gate = {"n_max": 32, "first_stage": 8}
    sampled = gate_experiment(tmp_path / "t07", validate_bench, sim, temperature=0.7, gate=gate)
    async with train_context(sampled) as ctx:
        candidate = with_lines(incumbent, EditTarget.skill("Action Reasoning"), [USELESS])
        before = agent_requests(sim)
        outcome = await validate(ctx, incumbent, candidate, gate_index=3, alpha=0.05, first_sample=5)
        asked = agent_requests(sim) - before
        rows = observations(ctx.store, ctx.run_id, 3)
        samples = _gate_predictions(ctx, 3)
    assert outcome.decision is not None
    assert len(rows) >= 8
    pairs = [(r.question_id, r.sample_idx) for r in rows]
    assert len(set(pairs)) == len(pairs)
    assert {r.task_type for r in rows} == {"Action Reasoning"}
    # With replacement, questions do come back, each time under its next sample index.
    per_question = Counter(r.question_id for r in rows)
    assert max(per_question.values()) > 1
    for qid, n in per_question.items():
        assert sorted(r.sample_idx for r in rows if r.question_id == qid) == list(range(5, 5 + n))
    # The samples themselves, not only their labels: a question's second draw is a new episode
    # the model was asked for, never its first one served again from the response cache.
    assert len(samples) == 2 * len(rows)
    assert not any(p.cache_hit for p in samples)
    assert asked >= len(samples)  # at least one model turn per sample reached the model

    greedy = gate_experiment(tmp_path / "t0", validate_bench, sim, temperature=0.0, gate=gate)
    async with train_context(greedy) as ctx:
        candidate = with_lines(incumbent, EditTarget.system(), [USELESS])
        outcome = await validate(ctx, incumbent, candidate, gate_index=3, alpha=0.05, first_sample=5)
        rows = observations(ctx.store, ctx.run_id, 3)
    assert outcome.decision is not None
    assert len(rows) >= 8
    questions = [r.question_id for r in rows]
    assert len(set(questions)) == len(questions)
    assert {r.sample_idx for r in rows} == {0}  # one answer per question: nothing to draw again
    assert outcome.next_sample == 5


async def test_an_identical_candidate_in_a_later_gate_is_asked_afresh(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle
) -> None:
    gate = {"n_max": 16, "first_stage": 8}
    path = gate_experiment(tmp_path, validate_bench, sim, temperature=0.7, gate=gate)
    async with train_context(path) as ctx:
        candidate = with_lines(incumbent, EditTarget.skill("OCR Problems"), [USELESS])
        first = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
        assert first.next_sample is not None
        # The same candidate against the same incumbent, as a rejected edit proposed again would be.
        again = await validate(
            ctx, incumbent, candidate, gate_index=2, alpha=0.05, first_sample=first.next_sample
        )
        earlier = {(r.question_id, r.sample_idx) for r in observations(ctx.store, ctx.run_id, 1)}
        later = observations(ctx.store, ctx.run_id, 2)
        samples = _gate_predictions(ctx, 2)
    assert first.evidence["samples"][0] == 1
    assert again.evidence["samples"][0] == first.next_sample
    assert later
    assert min(r.sample_idx for r in later) >= first.next_sample > max(s for _, s in earlier)
    assert not earlier & {(r.question_id, r.sample_idx) for r in later}
    # Neither arm replays the first gate's samples, though both bundles are the same.
    assert not any(p.cache_hit for p in samples)


async def test_p1_4_infra_never_enters_baseline_cache(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle
) -> None:
    gate = {"n_max": 16, "first_stage": 4}
    path = gate_experiment(tmp_path, validate_bench, sim, temperature=0.7, gate=gate, infra_retries=0)
    task_type = "Attribute Perception"
    async with train_context(path) as ctx:
        candidate = with_lines(incumbent, EditTarget.skill(task_type), [USELESS])
        # Both arms are asked at once, and the incumbent's cache is empty: the next 8 agent requests
        # are the first turns of the first stage's 4 draws on each arm. Two of them fail: at most
        # half of an arm's stage is INFRA, at infer.max_infra_share (0.5), not past it, so the gate
        # goes on without them.
        sim.force_fault(FaultKind.HTTP_503, count=2, roles=["agent"])
        outcome = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
        rows = observations(ctx.store, ctx.run_id, 1)
        cached = ctx.store.select(
            BaselineSample,
            relevant_text_hash=incumbent.relevant_hash(task_type),
            sampling_hash=BaselineCache(ctx.store, ctx.sampling_hash, scope=ctx.baseline_scope).sampling_hash,
        )
    assert sim.stats()["faults"] == {"http_503": 2}
    decision = outcome.decision
    assert decision is not None
    outage = [r for r in rows if r.incumbent is None or r.candidate is None]
    assert 1 <= len(outage) <= 2
    assert decision.infra == len(outage)
    assert all(r.draw_index < 4 for r in outage)
    # An INFRA outcome leaves the wealth where the previous observation left it (1.0 at the start).
    for i, r in enumerate(rows[:4]):
        if r.incumbent is None or r.candidate is None:
            before = (rows[i - 1].wealth, rows[i - 1].harm_wealth) if i else (1.0, 1.0)
            assert (r.wealth, r.harm_wealth) == before
    # Nothing of the outage is in the cache; every other incumbent sample is.
    cached_keys = {(s.question_id, s.sample_idx) for s in cached}
    assert cached_keys == {(r.question_id, r.sample_idx) for r in rows if r.incumbent is not None}
    assert not cached_keys & {(r.question_id, r.sample_idx) for r in outage if r.incumbent is None}
    # The ladder counted the failures as neither win nor loss.
    observed = [
        r.candidate - r.incumbent for r in rows if r.incumbent is not None and r.candidate is not None
    ]
    used = observed[: decision.n]
    assert (decision.wins, decision.losses, decision.ties) == (
        used.count(1),
        used.count(-1),
        used.count(0),
    )


async def test_infra_is_asked_again_before_it_is_skipped(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle
) -> None:
    gate = {"n_max": 16, "first_stage": 4}
    path = gate_experiment(tmp_path, validate_bench, sim, temperature=0.7, gate=gate, infra_retries=1)
    async with train_context(path) as ctx:
        candidate = with_lines(incumbent, EditTarget.skill("Attribute Perception"), [USELESS])
        sim.force_fault(FaultKind.HTTP_503, count=4, roles=["agent"])
        outcome = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
        rows = observations(ctx.store, ctx.run_id, 1)
    assert sim.stats()["faults"] == {"http_503": 4}
    assert outcome.decision is not None
    assert outcome.decision.infra == 0
    assert all(r.incumbent is not None and r.candidate is not None for r in rows)


async def test_an_outage_in_a_gate_stops_resumably_and_decides_nothing(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle
) -> None:
    """A whole stage lost to infrastructure is an outage: no reject_inertia is recorded; run again
    once the endpoint answers, the gate ends exactly as a gate that never saw the outage."""
    gate = {"n_max": 16, "first_stage": 4}
    target = EditTarget.skill("Attribute Perception")
    clean_path = gate_experiment(tmp_path / "clean", validate_bench, sim, temperature=0.7, gate=gate)
    async with train_context(clean_path) as ctx:
        clean = await validate(
            ctx, incumbent, with_lines(incumbent, target, [USELESS]), gate_index=1, alpha=0.05, first_sample=1
        )
    path = gate_experiment(tmp_path / "hit", validate_bench, sim, temperature=0.7, gate=gate, infra_retries=1)
    async with train_context(path) as ctx:
        candidate = with_lines(incumbent, target, [USELESS])
        sim.force_fault(FaultKind.HTTP_503, count=16, roles=["agent"])  # both arms, and their re-asks
        with pytest.raises(InfraOutage) as caught:
            await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
        assert caught.value.context["failed"] == 4
        assert "HTTP" in str(caught.value) or "503" in str(caught.value)
        resumed = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
    assert resumed.reason == clean.reason
    assert resumed.decision is not None
    assert clean.decision is not None
    assert resumed.decision.to_record() == clean.decision.to_record()


@pytest.mark.parametrize(("share", "shared"), [(None, False), (False, False), (True, True)])
async def test_baseline_cache_is_shared_across_runs_only_where_the_config_allows(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle, share: bool | None, shared: bool
) -> None:
    gate = {"n_max": 16, "first_stage": 8}
    store = tmp_path / "shared.sqlite"
    target = EditTarget.skill("OCR Problems")
    cache = {"share_across_runs": share}
    path = gate_experiment(
        tmp_path / "a", validate_bench, sim, temperature=0.7, gate=gate, store=store, cache=cache
    )
    for run_id in ("run-a", "run-b"):
        async with train_context(path, run_id=run_id) as ctx:
            candidate = with_lines(incumbent, target, [USELESS, f"Note for {run_id}."])
            await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
            fresh = ctx.store.final_predictions(f"{run_id}.g0001.inc")
            drawn = {(r.question_id, r.sample_idx) for r in observations(ctx.store, run_id, 1)}
            rows = ctx.store.select(
                BaselineSample, relevant_text_hash=incumbent.relevant_hash("OCR Problems")
            )
        if run_id == "run-a":
            assert set(fresh) == drawn  # an empty cache: every incumbent sample was asked
            first = drawn
            continue
        assert drawn & first  # both runs drew some of the same (question, sample index) pairs
        if shared:
            assert set(fresh) == drawn - first  # run-a's samples were reused, only new ones asked
        else:
            assert set(fresh) == drawn  # run-b asked every incumbent sample itself
            assert len({r.sampling_hash for r in rows}) == 2  # each run's samples under its own key
    # Another temperature is another sampling hash: nothing matches, everything is asked.
    other = gate_experiment(
        tmp_path / "c", validate_bench, sim, temperature=0.9, gate=gate, store=store, cache=cache
    )
    async with train_context(other, run_id="run-c") as ctx:
        candidate = with_lines(incumbent, target, [USELESS])
        await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
        fresh = ctx.store.final_predictions("run-c.g0001.inc")
        drawn = {(r.question_id, r.sample_idx) for r in observations(ctx.store, "run-c", 1)}
    assert set(fresh) == drawn


async def test_a_stage_asks_both_arms_at_once_so_it_waits_on_one_tail(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Wall time under faults (benchmarks/faults.py --train): asked one after the other, a stage
    # waited on the incumbent's slowest (retried) draw, then on the candidate's.
    events: list[tuple[str, str]] = []
    real = TrainContext.rollout

    async def rollout(ctx: TrainContext, bundle: Bundle, draws: Sequence[Draw], suffix: str, **k: Any) -> Any:
        events.append(("start", suffix))
        try:
            return await real(ctx, bundle, draws, suffix, **k)
        finally:
            events.append(("end", suffix))

    path = gate_experiment(
        tmp_path, validate_bench, sim, temperature=0.7, gate={"n_max": 16, "first_stage": 4}
    )
    with monkeypatch.context() as patch:
        patch.setattr(TrainContext, "rollout", rollout)
        async with train_context(path) as ctx:
            candidate = with_lines(incumbent, EditTarget.skill("Attribute Perception"), [USELESS])
            outcome = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
    assert outcome.decision is not None
    # The first stage's two rollouts both start before either ends.
    assert sorted(events[:2]) == [("start", "g0001.cand"), ("start", "g0001.inc")]
    assert {e for e, _ in events[2:4]} == {"end"}


async def test_a_gate_that_decides_inside_a_stage_spends_at_most_one_window_past_it(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle
) -> None:
    # One stage of 96 draws: asked at once, a test deciding at its 20th draw paid for all 96.
    path = gate_experiment(
        tmp_path, validate_bench, sim, temperature=0.7, gate={"n_max": 96, "first_stage": 96}
    )
    task_type = "Object Reasoning"
    async with train_context(path) as ctx:
        window = ctx.gate_window
        lines = [f"- {rule.canonical}" for rule in sim.world.insights_for(task_type)]
        candidate = with_lines(incumbent, EditTarget.skill(task_type), lines)
        outcome = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
        rows = observations(ctx.store, ctx.run_id, 1)
        samples = _gate_predictions(ctx, 1)
    assert window == 8  # the test config's agent.concurrency
    assert outcome.reason is GateReason.ACCEPT
    assert outcome.decision is not None
    n = outcome.decision.n
    assert n < 96 - window
    # Drawn a window at a time: both arms stop within the window the decision fell in.
    assert len(rows) == -(-n // window) * window
    assert len(samples) == 2 * len(rows)


def _killed_mid_stage(real: Callable[..., Awaitable[list[Prediction]]], calls: list[int]) -> Any:
    """Wraps ``TrainContext.rollout``: from the third rollout on (stage 2, both arms at once) each
    asks half of its draws for real, then the process "dies" (the task is cancelled), as a kill
    would leave it."""

    async def rollout(ctx: TrainContext, bundle: Bundle, draws: Sequence[Draw], *a: Any, **k: Any) -> Any:
        calls.append(len(draws))
        if len(calls) < 3:
            return await real(ctx, bundle, draws, *a, **k)
        await real(ctx, bundle, draws[: len(draws) // 2], *a, **k)
        raise asyncio.CancelledError

    return rollout


async def test_gate_replays_after_an_interruption(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = {"n_max": 32, "first_stage": 4}
    target = EditTarget.skill("Object Recognition")
    clean_path = gate_experiment(tmp_path / "clean", validate_bench, sim, temperature=0.7, gate=gate)
    async with train_context(clean_path) as ctx:
        candidate = with_lines(incumbent, target, [USELESS])
        before = agent_requests(sim)
        clean = await validate(ctx, incumbent, candidate, gate_index=2, alpha=0.05, first_sample=1)
        clean_cost = agent_requests(sim) - before
        clean_rows = observations(ctx.store, ctx.run_id, 2)
    assert clean.decision is not None
    assert clean.decision.stage > 1

    path = gate_experiment(tmp_path / "cut", validate_bench, sim, temperature=0.7, gate=gate)
    calls: list[int] = []
    with monkeypatch.context() as patch:
        patch.setattr(TrainContext, "rollout", _killed_mid_stage(TrainContext.rollout, calls))
        async with train_context(path) as ctx:
            with pytest.raises(asyncio.CancelledError):
                await validate(ctx, incumbent, candidate, gate_index=2, alpha=0.05, first_sample=1)
            cut_rows = observations(ctx.store, ctx.run_id, 2)
    assert len(calls) == 4
    assert len(cut_rows) == 4
    async with train_context(path) as ctx:  # a new process, the same run
        before = agent_requests(sim)
        resumed = await validate(ctx, incumbent, candidate, gate_index=2, alpha=0.05, first_sample=1)
        resumed_cost = agent_requests(sim) - before
        rows = observations(ctx.store, ctx.run_id, 2)
    assert resumed.reason is clean.reason
    assert resumed.decision == clean.decision

    def view(r: object) -> tuple[object, ...]:
        return tuple(
            getattr(r, k) for k in ("draw_index", "question_id", "sample_idx", "candidate", "incumbent")
        )

    assert [view(r) for r in rows] == [view(r) for r in clean_rows]
    assert [r.wealth for r in rows] == pytest.approx([r.wealth for r in clean_rows])
    assert resumed_cost < clean_cost  # the first stage's stored predictions were read back


def _world_config(base: float = 0.3, gain: float = 0.6, **server: Any) -> SimConfig:
    # One insight per class, always needed, worth +gain; answers always in the plain shape.
    return SimConfig.model_validate(
        {
            **server,
            "seed": 5,
            "world": {
                "insights_per_task": 1,
                "needed_min": 1,
                "needed_max": 1,
                "base_min": base,
                "base_max": base,
                "gain_min": gain,
                "gain_max": gain,
            },
            "agent": {"awkward_rate": 0.0},
        }
    )


@pytest.mark.slow
async def test_item_6_the_guard_refuses_a_system_edit_that_harms_an_untrained_class(
    tmp_path: Path, validate_bench: Bench, incumbent: Bundle
) -> None:
    """The guard checks every class a system edit reaches, trained or not, with draws sized by power."""
    helped = ["Attribute Perception", "OCR Problems", "Object Reasoning"]
    harmed = "Counting Problem"  # not trained: the gate's pool never draws it
    with SimServer(_world_config(), questions=validate_bench.questions) as sim:
        insight = {t: sim.world.insights_for(t)[0].canonical for t in [*helped, harmed]}
        system = EditTarget.system()
        standing = with_lines(incumbent, system, [insight[harmed]]).bundle
        # The edit teaches three classes and drops what the fourth relies on.
        body = incumbent.system_prompt.rstrip("\n") + "\n" + "\n".join(insight[t] for t in helped) + "\n"
        harmful = rewrite(standing, system, body)
        harmless = with_lines(standing, system, [insight[t] for t in helped])
        oracle = sim.oracle
        # Sized, not fixed: a 50-point drop at discordance 0.6 with power 0.9, Holm over 12 classes.
        gate = {"n_max": 64, "alpha": 0.05, "guard_harm": 0.5, "guard_discordance": 0.6, "guard_power": 0.9}
        path = gate_experiment(tmp_path, validate_bench, sim, temperature=0.7, gate=gate, task_types=helped)
        async with train_context(path) as ctx:
            pooled = [q for t in ctx.task_types for q in ctx.val_by_type[t]]
            assert harmed not in ctx.task_types
            assert oracle.edit_effect(standing, harmful.bundle, pooled).delta > 0.5
            assert oracle.edit_effect(standing, harmful.bundle, ctx.val_by_type[harmed]).delta < -0.3
            refused = await validate(ctx, standing, harmful, gate_index=1, alpha=0.05, first_sample=1)
            kept = await validate(ctx, standing, harmless, gate_index=2, alpha=0.05, first_sample=1)
            guard_rows = observations(ctx.store, ctx.run_id, 1, arm="guard")
            target_rows = observations(ctx.store, ctx.run_id, 1)
            every_class = set(ctx.val_by_type)
    assert refused.decision is not None
    assert refused.decision.kind is DecisionKind.ACCEPT
    assert refused.reason is GateReason.REJECT_GUARD
    assert refused.guard is not None
    assert refused.guard["harmed"] == [harmed]
    assert set(refused.guard["classes"]) == every_class
    # Power 0.9 plus the 0.05 clearing may cost of it.
    assert refused.guard["draws_per_class"] == 36
    assert refused.guard["sized_for"] == {"harm": 0.5, "power": 0.9, "discordance": 0.6}
    assert harmed not in refused.guard["cleared"]
    assert kept.reason is GateReason.ACCEPT
    assert kept.guard is not None
    assert kept.guard["harmed"] == []
    # The guard rests on its own samples, not on those the accept was decided on.
    assert len(guard_rows) == refused.guard["draws"]
    assert {r.task_type for r in guard_rows} == every_class
    assert {r.task_type for r in target_rows} == set(helped)
    assert not {(r.question_id, r.sample_idx) for r in guard_rows} & {
        (r.question_id, r.sample_idx) for r in target_rows
    }


class _Stopped(Exception):
    """The budget, as a test's ``check_stop`` raises it."""


def test_a_guard_is_sized_at_no_less_discordance_than_the_drop_it_looks_for() -> None:
    """Arms that mostly agree measure a discordance below the planned drop, which no such drop allows:
    the guard is then sized at the drop itself, where before its sizing raised mid-run."""
    config = GateConfig(guard_harm=0.15)
    assert guard_discordance(config, {"A": [2, 400]}, ["A"]) == 0.15
    assert guard_discordance(config, {"A": [160, 400]}, ["A"]) > 0.3
    assert guard_discordance(config, {}, ["A"]) == config.guard_discordance
    assert guard_discordance(GateConfig(guard_harm=0.5), {}, ["A"]) == 0.5
    assert guard_draws_per_class(config, 12, discordance=guard_discordance(config, {"A": [2, 400]}, ["A"]))


@pytest.mark.slow
async def test_a_guard_stops_drawing_a_class_its_draws_clear_of_the_planned_drop(
    tmp_path: Path, validate_bench: Bench, incumbent: Bundle
) -> None:
    """Clearing: a harmless system edit's guard stops each class its draws clear of the planned drop
    at a stage's end, asks it no more, gives it p-value 1, and writes each draw at its place in the
    whole plan; without clearing every class takes its full size (fixed here, so both plans match)."""
    helped = ["Attribute Perception", "OCR Problems", "Object Reasoning"]
    gate = {"n_max": 64, "alpha": 0.05, "guard_draws": 40, "guard_harm": 0.5}
    outcomes, rows = {}, {}
    with SimServer(_world_config(), questions=validate_bench.questions) as sim:
        lines = [sim.world.insights_for(t)[0].canonical for t in helped]
        candidate = with_lines(incumbent, EditTarget.system(), lines)
        for clear in (0.05, None):
            path = gate_experiment(
                tmp_path / str(clear),
                validate_bench,
                sim,
                temperature=0.7,
                gate={**gate, "guard_clear": clear},
                task_types=helped,
            )
            async with train_context(path) as ctx:
                outcomes[clear] = await validate(
                    ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1
                )
                guard_rows = observations(ctx.store, ctx.run_id, 1, arm="guard")
            rows[clear] = {(r.draw_index, r.question_id, r.sample_idx) for r in guard_rows}
    clearing, full = outcomes[0.05], outcomes[None]
    assert clearing.reason is full.reason is GateReason.ACCEPT
    assert clearing.evidence == full.evidence  # the same gate: the guards differ only in clearing
    assert clearing.guard is not None
    assert full.guard is not None
    per_class, classes = full.guard["draws_per_class"], full.guard["classes"]
    assert full.guard["cleared"] == {}
    assert full.guard["draws"] == per_class * len(classes) == len(rows[None])
    cleared = clearing.guard["cleared"]
    assert cleared
    assert all(n % GUARD_STAGE == 0 and n < per_class for n in cleared.values())
    assert all(clearing.guard["classes"][t]["p"] == 1.0 for t in cleared)
    assert clearing.guard["draws"] == len(rows[0.05]) < full.guard["draws"]
    assert rows[0.05] < rows[None]
    assert clearing.guard["harmed"] == full.guard["harmed"] == []


@pytest.mark.slow
async def test_a_budget_stop_inside_the_guard_keeps_its_answers_and_resumes_to_the_same_verdict(
    tmp_path: Path, validate_bench: Bench, incumbent: Bundle
) -> None:
    """A guard over every class can cost more than a small budget: the budget is checked about
    every stage inside it, a stop there keeps what was answered, and the resume asks only the rest."""
    helped = ["Attribute Perception", "OCR Problems", "Object Reasoning"]
    gate = {"n_max": 64, "alpha": 0.05, "guard_draws": 40}
    with SimServer(_world_config(), questions=validate_bench.questions) as sim:
        lines = [sim.world.insights_for(t)[0].canonical for t in helped]
        candidate = with_lines(incumbent, EditTarget.system(), lines)
        checks: list[int] = []
        clean_path = gate_experiment(
            tmp_path / "clean", validate_bench, sim, temperature=0.7, gate=gate, task_types=helped
        )
        async with train_context(clean_path) as ctx:
            before = agent_requests(sim)
            clean = await validate(
                ctx,
                incumbent,
                candidate,
                gate_index=1,
                alpha=0.05,
                first_sample=1,
                check_stop=lambda: checks.append(0),
            )
            clean_cost = agent_requests(sim) - before
            stage = ctx.stage_draws
        assert clean.reason is GateReason.ACCEPT
        assert clean.guard is not None
        guard_draws = clean.guard["draws"]
        assert guard_draws > 2 * stage  # the guard is asked in parts

        calls = 0

        def budget() -> None:  # spent at the clean run's last check: inside the guard
            nonlocal calls
            calls += 1
            if calls == len(checks):
                raise _Stopped

        path = gate_experiment(
            tmp_path / "cut", validate_bench, sim, temperature=0.7, gate=gate, task_types=helped
        )
        async with train_context(path) as ctx:
            with pytest.raises(_Stopped):
                await validate(
                    ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1, check_stop=budget
                )
            answered = sum(
                len(ctx.store.final_predictions(f"{ctx.run_id}.g0001.{arm}")) for arm in ("inc", "cand")
            )
        # Both arms' guard draws answered before the stop: some (it came inside the guard, which
        # was asked in parts), not all (the arm that checked had a part left). Either arm may be ahead.
        answered -= 2 * clean.evidence["draws"]
        assert 0 < answered < 2 * guard_draws
        async with train_context(path) as ctx:  # the resume
            before = agent_requests(sim)
            resumed = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
            resumed_cost = agent_requests(sim) - before
    assert (resumed.reason, resumed.decision, resumed.guard) == (clean.reason, clean.decision, clean.guard)
    assert resumed_cost <= clean_cost - answered  # each answered draw was read back, not asked again


@pytest.mark.slow
async def test_useless_edits_are_accepted_at_most_at_rate_alpha(
    tmp_path: Path, validate_bench: Bench, sim: SimServer, incumbent: Bundle
) -> None:
    """Many gates of edits the oracle proves useless (true effect exactly 0): every accept is false.

    16 gates at alpha = 0.05: P(Binomial(16, 0.05) >= 4) < 0.01, so more than 3 accepts refutes
    the gate's level. The long version of this figure is benchmarks/gate.py.
    """
    classes = ["Action Reasoning", "Counting Problem", "OCR Problems", "Object Reasoning"]
    gate = {"n_max": 32, "first_stage": 8}
    path = gate_experiment(tmp_path, validate_bench, sim, temperature=0.7, gate=gate)
    outcomes = []
    async with train_context(path) as ctx:
        for k in range(16):
            task_type = classes[k % len(classes)]
            candidate = with_lines(incumbent, EditTarget.skill(task_type), [f"{USELESS} ({k})"])
            truth = sim.oracle.edit_effect(incumbent, candidate.bundle, ctx.val_by_type[task_type])
            assert truth.delta == 0.0
            outcomes.append(
                await validate(ctx, incumbent, candidate, gate_index=k + 1, alpha=0.05, first_sample=1)
            )
    reasons = Counter(o.reason for o in outcomes)
    assert reasons[GateReason.ACCEPT] <= 3
    assert sum(reasons.values()) == 16
    assert all(o.decision is not None and o.decision.terminal for o in outcomes)


@pytest.mark.slow
async def test_at_temperature_0_the_guard_draws_a_trained_class_questions_the_gate_did_not(
    tmp_path: Path, validate_bench: Bench, incumbent: Bundle
) -> None:
    """At temperature 0 the guard skips only the questions the gate drew, not its whole plan: a system
    edit that drops what one *trained* class relies on ends ``reject_guard``."""
    helped = [
        "OCR Problems",
        "Object Reasoning",
        "Counting Problem",
        "Temporal Reasoning",
        "Object Recognition",
        "Action Reasoning",
    ]
    harmed = "Attribute Perception"  # trained too: the gate's plan is a permutation of its questions
    # Without its insight a class is always wrong, with it always right: every draw is decisive.
    with SimServer(_world_config(base=0.0, gain=1.0), questions=validate_bench.questions) as sim:
        insight = {t: sim.world.insights_for(t)[0].canonical for t in [*helped, harmed]}
        system = EditTarget.system()
        standing = with_lines(incumbent, system, [insight[harmed]]).bundle
        body = incumbent.system_prompt.rstrip("\n") + "\n" + "\n".join(insight[t] for t in helped) + "\n"
        harmful = rewrite(standing, system, body)
        # Holm over 12 classes at 0.25: six losses and no win on one class are harm (p = 0.016).
        gate = {"n_max": 24, "first_stage": 8, "mcnemar_alpha": 0.25, "guard_draws": 12}
        path = gate_experiment(
            tmp_path, validate_bench, sim, temperature=0.0, gate=gate, task_types=[*helped, harmed]
        )
        async with train_context(path) as ctx:
            assert harmed in ctx.task_types
            outcome = await validate(ctx, standing, harmful, gate_index=1, alpha=0.05, first_sample=1)
            guard_rows = observations(ctx.store, ctx.run_id, 1, arm="guard")
            target_rows = observations(ctx.store, ctx.run_id, 1)
            harmed_val = {q.question_id for q in ctx.val_by_type[harmed]}
    assert outcome.decision is not None
    assert outcome.decision.kind is DecisionKind.ACCEPT
    drawn = {r.question_id for r in target_rows}
    guarded = [r for r in guard_rows if r.task_type == harmed]
    assert guarded, "the guard drew nothing from the trained class"
    assert {r.question_id for r in guarded} == harmed_val - drawn  # every question the gate left, once
    assert not drawn & {r.question_id for r in guard_rows}
    assert outcome.reason is GateReason.REJECT_GUARD
    assert outcome.guard is not None
    assert outcome.guard["harmed"] == [harmed]


def _body_sizes(sim: SimServer, questions: Sequence[Any]) -> dict[str, int]:
    """The largest request body (bytes, as the client encodes it) the sim got for each question."""
    sizes: dict[str, int] = {}
    for body in sim.state.recorded:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        for q in questions:
            if json.dumps(q.question, ensure_ascii=False)[1:-1] in text:
                sizes[q.question_id] = max(sizes.get(q.question_id, 0), len(text.encode()))
    return sizes


@pytest.mark.slow
async def test_a_candidate_the_server_refuses_on_some_questions_stops_the_run_naming_the_limit(
    tmp_path: Path, validate_bench: Bench, incumbent: Bundle
) -> None:
    """A 4xx the candidate's own request provokes (here 413: its prompt is too long for some
    questions) is the server's limit, not a wrong answer: never scored either way (no win on the
    questions it survives, no loss the loop could learn a shorter prompt from), counted, and past
    infer.max_refused_share the run stops naming the limit (train/state/refusals.py)."""
    trained = ["OCR Problems", "Object Reasoning", "Counting Problem", "Temporal Reasoning"]
    pad = "Read every caption twice before you answer the question. " * 120
    gate = {"n_max": 40, "first_stage": 8, "guard_draws": 0}
    with SimServer(
        _world_config(base=0.5, gain=0.5, record_requests=True), questions=validate_bench.questions
    ) as probe:
        insights = [probe.world.insights_for(t)[0].canonical for t in trained]
        candidate = with_lines(incumbent, EditTarget.system(), [*insights, pad])
        path = gate_experiment(
            tmp_path / "probe", validate_bench, probe, temperature=0.0, gate=gate, task_types=trained
        )
        async with train_context(path) as ctx:
            pooled = [q for t in trained for q in ctx.val_by_type[t]]
            await ctx.rollout(incumbent, [(q, 0) for q in pooled], "inc", kind=RunKind.INFER, pool=Pool.VAL)
            incumbent_sizes = _body_sizes(probe, pooled)
            probe.state.recorded.clear()
            await ctx.rollout(
                candidate.bundle, [(q, 0) for q in pooled], "cand", kind=RunKind.INFER, pool=Pool.VAL
            )
            candidate_sizes = _body_sizes(probe, pooled)
    limit = sorted(candidate_sizes.values())[len(candidate_sizes) // 2]
    assert limit > max(incumbent_sizes.values())  # the incumbent is never refused
    with SimServer(
        _world_config(base=0.5, gain=0.5, max_body_bytes=limit), questions=validate_bench.questions
    ) as sim:
        path = gate_experiment(
            tmp_path / "gate", validate_bench, sim, temperature=0.0, gate=gate, task_types=trained
        )
        async with train_context(path) as ctx:
            with pytest.raises(RequestsRefused) as caught:
                await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
        with RunReader(load_config(path).store) as reader:
            answers = reader.predictions("train-test.g0001.cand")
    refused = [p for p in answers if p.error_class == REQUEST_REFUSED]
    assert 0 < len(refused) < len(answers)  # a subset of the questions
    assert all(p.correct is None and p.status is PredictionStatus.INFRA_ERROR for p in refused)
    context = caught.value.context
    assert context["by_arm"]["candidate"]["refused"] == len(refused)
    assert context["by_arm"].get("incumbent", {}).get("refused", 0) == 0  # (its arm may be cut short)
    assert (context["status"], context["likely_limit"]) == (413, "body_size")
