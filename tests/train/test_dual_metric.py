"""The ``dual_metric`` row of a decision holds the numbers of the version that stands (audit P2-5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from train_support import train_context, write_train_config

from bench_support import Bench
from skillharness.config import load_config
from skillharness.sim import SimServer, decisive_world
from skillharness.skills import Bundle, EditSet, EditTarget, Workspace
from skillharness.store import DualMetricRow, GateDecisionRow, RunReader
from skillharness.train.loop.decide import decide
from skillharness.train.state.checkpoint import Checkpoint
from skillharness.train.state.records import Candidate
from skillharness.train.validate.scoring import val_score


def _harmful_candidate(incumbent: Bundle, sim: SimServer) -> Candidate:
    """The system prompt with three harmful rules: every val question gets much less likely right."""
    target = EditTarget.system()
    rules = "\n".join(f"- {rule.canonical}" for rule in sim.world.harmful[:3])
    edit_set = EditSet(
        skill_update_mode="rewrite",
        edits=(),
        body=f"{incumbent.system_prompt.rstrip()}\n{rules}\n",
        rationale="harmful on purpose",
    )
    bundle = incumbent.apply(target, edit_set)
    assert isinstance(bundle, Bundle), bundle
    return Candidate(
        target, edit_set, bundle, incumbent.text_of(target), bundle.text_of(target), choice="only"
    )


@pytest.mark.slow
async def test_p2_5_a_rejected_edit_records_the_incumbents_numbers_not_the_candidates(
    train_bench: Bench, experiment: Path
) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = write_train_config(experiment, train_bench, sim)
        async with train_context(config_path, run_id="t-dual-reject") as ctx:
            ws = Workspace.create(experiment / "workspace", Bundle.load(train_bench.bundle))
            incumbent = ws.load("v0000")
            candidate = _harmful_candidate(incumbent, sim)
            ckpt = Checkpoint(run_id=ctx.run_id, baseline_run_id=f"{ctx.run_id}.baseline")
            cursor = {"epoch": 1, "step": 0, "target": 0}
            after = await decide(ctx, ws, ckpt, candidate, cursor=cursor, check_stop=lambda: None)
            standing = await val_score(ctx, incumbent)
            rejected = await val_score(ctx, candidate.bundle)
    # The test can tell the two apart only if the candidate's val numbers differ from the incumbent's.
    assert (rejected.correct, rejected.n) != (standing.correct, standing.n)
    assert after.version == "v0000"
    with RunReader(load_config(config_path).store) as reader:
        (gate,) = reader.ledger(GateDecisionRow, train_run_id="t-dual-reject")
        (row,) = reader.ledger(DualMetricRow, train_run_id="t-dual-reject")
    assert gate.reason != "accept"
    assert row.version == "v0000"
    # A system target's "target" numbers are all of val: both pairs must be the incumbent's.
    assert (row.target_correct, row.target_n) == (standing.correct, standing.n)
    assert (row.val_correct, row.val_n) == (standing.correct, standing.n)
    assert row.ema == {t: standing.class_accuracy(t) for t in ctx.task_types}
