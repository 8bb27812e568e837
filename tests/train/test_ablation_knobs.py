"""The ablation knobs SimLab compares: the baseline gate rules and training without diagnosis."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from diagnose_support import rollout
from loop_support import TRAINED
from train_support import train_context, write_train_config
from validate_support import agent_requests, gate_experiment, observations, with_lines

from bench_support import Bench
from skillharness.sim import SimConfig, SimServer
from skillharness.skills import Bundle, EditTarget
from skillharness.store import DiagnosisRow
from skillharness.train.diagnose import diagnose
from skillharness.train.gate import DecisionKind
from skillharness.train.records import Cause, GateReason
from skillharness.train.validate import validate

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
