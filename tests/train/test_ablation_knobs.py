"""The ablation knobs SimLab compares: the baseline gate rules and training without diagnosis."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

import numpy as np
import pytest
from diagnose_support import AGENT, rollout
from loop_support import TRAINED
from train_support import train_context, write_train_config
from validate_support import agent_requests, gate_experiment, observations, with_lines

from bench_support import Bench
from skillharness.sim import SimConfig, SimServer
from skillharness.sim.evolve_role import pack_support
from skillharness.sim.prompt import extract_document
from skillharness.skills import Bundle, EditTarget
from skillharness.store import DiagnosisRow
from skillharness.train.diagnose.casepack import build_case_packs
from skillharness.train.diagnose.diagnoser import diagnose
from skillharness.train.evolve.prompts import render_evolve_prompts
from skillharness.train.gate import DecisionKind
from skillharness.train.state.records import Cause, GateReason
from skillharness.train.validate.paired_gate import validate

USELESS = "Keep a steady pace through the checklist."
_KIND_OF = {
    DecisionKind.ACCEPT: GateReason.ACCEPT,
    DecisionKind.REJECT_EVIDENCE: GateReason.REJECT_EVIDENCE,
    DecisionKind.REJECT_INERTIA: GateReason.REJECT_INERTIA,
}


def _differences(rows: list) -> list[int]:
    return [r.candidate - r.incumbent for r in rows if r.candidate is not None and r.incumbent is not None]


async def test_minibatch_rule_decides_on_three_draws(tmp_path: Path, train_bench: Bench) -> None:
    incumbent = Bundle.load(train_bench.bundle)
    with SimServer(SimConfig(seed=2), questions=train_bench.questions) as sim:
        path = gate_experiment(tmp_path, train_bench, sim, temperature=0.7, gate={"rule": "minibatch"})
        async with train_context(path) as ctx:
            candidate = with_lines(incumbent, EditTarget.skill(TRAINED[0]), [USELESS])
            before = agent_requests(sim)
            outcome = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=1)
            rows = observations(ctx.store, ctx.run_id, 1)
        assert agent_requests(sim) > before
    assert len(rows) == 3
    d = _differences(rows)
    total = sum(d)
    expected = GateReason.ACCEPT if total > 0 else GateReason.REJECT_EVIDENCE if total < 0 else None
    assert outcome.reason is (expected or GateReason.REJECT_INERTIA)
    assert outcome.decision is not None
    assert outcome.decision.n == len(d)
    assert "strictly better on 3" in outcome.detail
    assert outcome.evidence["rule"] == "minibatch"


async def test_fixed_n_rule_uses_n_max_draws_and_two_standard_errors(
    tmp_path: Path, train_bench: Bench
) -> None:
    incumbent = Bundle.load(train_bench.bundle)
    with SimServer(SimConfig(seed=2), questions=train_bench.questions) as sim:
        gate = {"rule": "fixed_n", "n_max": 20}
        path = gate_experiment(tmp_path, train_bench, sim, temperature=0.7, gate=gate)
        async with train_context(path) as ctx:
            candidate = with_lines(incumbent, EditTarget.skill(TRAINED[1]), [USELESS])
            outcome = await validate(ctx, incumbent, candidate, gate_index=2, alpha=0.05, first_sample=1)
            rows = observations(ctx.store, ctx.run_id, 2)
    assert len(rows) == 20
    d = np.array(_differences(rows), dtype=float)
    se = d.std(ddof=1) / np.sqrt(len(d))
    kind = (
        DecisionKind.ACCEPT
        if d.mean() > 2 * se
        else DecisionKind.REJECT_EVIDENCE
        if d.mean() < -2 * se
        else None
    )
    assert outcome.reason is _KIND_OF[kind or DecisionKind.REJECT_INERTIA]
    assert outcome.decision is not None
    assert outcome.decision.n == len(d)


async def test_diagnosis_disabled_makes_unsettled_wrong_answers_defects(
    tmp_path: Path, train_bench: Bench
) -> None:
    with SimServer(SimConfig(seed=2), questions=train_bench.questions) as sim:
        path = write_train_config(
            tmp_path, train_bench, sim, train={"diagnosis": {"enabled": False}, "task_types": list(TRAINED)}
        )
        async with train_context(path) as ctx:
            bundle = Bundle.load(train_bench.bundle)
            run_id, predictions = await rollout(ctx, bundle)
            report = await diagnose(ctx, bundle, run_id, predictions)
            stored = ctx.store.select(DiagnosisRow, run_id=run_id)
        judge_requests = int(sim.stats()["roles"].get("judge", 0))
    assert report.judge_calls == 0
    assert judge_requests == 0
    defects = [d for d in report.diagnoses if d.cause is Cause.DEFECT]
    assert defects, report.counts
    assert {d.cause for d in report.diagnoses} <= {
        Cause.DEFECT,
        Cause.FORMAT,
        Cause.TOOL,
        Cause.INFRA,
        Cause.DEGRADED,
    }
    for d in defects:
        assert d.target == EditTarget.skill(d.case.question.task_type)
        assert "diagnosis disabled" in d.reason
    # Nothing was judged, so nothing is stored as a verdict that a later judged run would reuse.
    assert not [r for r in stored if r.cause == Cause.DEFECT.value]


def _half_taught(bundle: Bundle, sim: SimServer) -> Bundle:
    """``bundle`` whose skills hold two of their three insights: a wrong answer to a question that
    needs only those is a lapse (about half the questions need only those), the others are defects."""
    for task_type in sorted({q.task_type for q in sim.world.questions.values()}):
        lines = [f"- {rule.canonical}" for rule in sim.world.insights_for(task_type)[:2]]
        bundle = with_lines(bundle, EditTarget.skill(task_type), lines).bundle
    return bundle


@pytest.mark.slow
async def test_i6_diagnosis_disabled_gives_the_evolve_role_noisier_packs(
    tmp_path: Path, train_bench: Bench
) -> None:
    """Without the judge, lapses reach the skill packs: the simulated evolve role, reading the cases
    from the rendered prompt, finds fewer of them explained by a gap, and so states insights less
    often (its rate falls with the share, see docs/simulator.md)."""
    explained: dict[bool, list[bool]] = {}
    with SimServer(SimConfig(seed=2), questions=train_bench.questions) as sim:
        bundle = _half_taught(Bundle.load(train_bench.bundle), sim)
        for enabled in (True, False):
            train = {"diagnosis": {"enabled": enabled}, "task_types": list(TRAINED)}
            folder = tmp_path / f"diagnosis-{enabled}"
            path = write_train_config(folder, train_bench, sim, agent=AGENT, train=train)
            async with train_context(path) as ctx:
                run_id, predictions = await rollout(ctx, bundle)
                report = await diagnose(ctx, bundle, run_id, predictions)
                packs = build_case_packs(report.diagnoses, max_cases=64, seed=0, salt="ablation")
                prompts = await render_evolve_prompts(
                    ctx, bundle, [p for p in packs if p.target.kind == "skill"]
                )
            explained[enabled] = [  # per case the evolve role recognises in a prompt: does a gap explain it?
                pack_support(sim.world, extract_document(p.user) or "", (q,)) == 1.0
                for p in prompts
                for q in sim.world.index.find_all(p.user)
            ]
    with_judge, without = explained[True], explained[False]
    assert len(with_judge) >= 10, with_judge
    assert len(without) > len(with_judge)  # the lapses the judge kept out
    assert mean(with_judge) > 0.85, with_judge
    assert mean(without) < mean(with_judge) - 0.1, (mean(without), mean(with_judge))
