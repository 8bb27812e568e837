"""Open candidates: tests kept across steps, rebased when their incumbent moves, drained at the end."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from loop_support import Spending, decisions, loop_config, train_observed, train_once
from train_support import train_context
from validate_support import observations, with_lines

from bench_support import Bench
from skillharness.config import load_config
from skillharness.sim import SimServer, decisive_world
from skillharness.skills import Bundle, EditRecord, EditTarget, VersionReason, Workspace
from skillharness.store import GateDecisionRow, GateObservationRow, RunReader, TrainStepRow
from skillharness.train.gate import AGrapa, wealth_paths
from skillharness.train.loop.open_gates import candidate_of, is_stale, open_candidate, rebase
from skillharness.train.loop.rounds import _advance
from skillharness.train.loop.training import run_folder
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.checkpoint import CHECKPOINT_FILE, Checkpoint, RunState


def _go() -> None:
    """A budget that never runs out."""


def _ledger(config_path: Path, run_id: str) -> tuple[list[GateDecisionRow], list[GateObservationRow]]:
    with RunReader(load_config(config_path).store) as reader:
        return (
            reader.ledger(GateDecisionRow, train_run_id=run_id),
            reader.ledger(GateObservationRow, train_run_id=run_id),
        )


async def test_an_inconclusive_candidate_stays_open_and_is_accepted_later_with_its_wealth(
    train_bench: Bench, experiment: Path
) -> None:
    """A test not decided in its step's round continues in later rounds: its accept rests on every
    observation since it opened, and the wealth it reports is the e-process over all of them."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim, epochs=1)
        await train_once(config_path, "t-carry")
    gates, observed = _ledger(config_path, "t-carry")
    carried = [
        g
        for g in gates
        if g.reason == "accept"
        and g.evidence["rounds"] >= 2
        and tuple(g.evidence["opened"]) < (g.epoch, g.step)
    ]
    assert carried, [(g.reason, g.evidence.get("rounds"), g.evidence.get("opened"), g.step) for g in gates]
    for gate in carried:
        rows = sorted(
            (r for r in observed if r.gate_index == gate.gate_index and r.arm == "target"),
            key=lambda r: r.draw_index,
        )
        d = [r.candidate - r.incumbent for r in rows if r.candidate is not None and r.incumbent is not None]
        n = gate.evidence["decision"]["n"]
        assert 8 < n <= len(d)  # more than the first round's stage of 8
        paths = wealth_paths(np.asarray([d[:n]], dtype=np.int8), AGrapa(0.5))
        assert gate.evidence["decision"]["wealth"] == pytest.approx(float(paths.up[0, -1]))
        assert paths.up[0, -1] >= 20 > paths.up[0, :-1].max()  # it crossed at its last observation
    # Stages are drawn a window (agent.concurrency, 8 here) at a time: a test that crossed paid for
    # at most the rest of its window, never for the rest of a larger stage.
    window = load_config(config_path).agent.concurrency
    for gate in (g for g in gates if g.reason == "accept"):
        drawn = sum(1 for r in observed if r.gate_index == gate.gate_index and r.arm == "target")
        assert 0 <= drawn - gate.evidence["decision"]["n"] < window, (gate.gate_index, drawn)


async def test_the_run_goes_on_after_its_epochs_until_no_candidate_is_open(
    train_bench: Bench, experiment: Path
) -> None:
    """Epochs end with tests still open: the loop keeps running evidence rounds (no new proposals)
    until each one closes, numbering them as steps past the last epoch's planned steps."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        # Tests sized to outlast the one epoch's few proposals (declined ones open none).
        gate = {"n_max": 96, "first_stage": 8, "guard_draws": 8}
        config_path = loop_config(experiment, train_bench, sim, epochs=1, gate=gate)
        outcome = await train_once(config_path, "t-drain")
    ckpt = outcome.checkpoint
    assert ckpt.state is RunState.FINISHED
    assert ckpt.open == []
    assert ckpt.drain_rounds >= 1
    gates, _ = _ledger(config_path, "t-drain")
    with RunReader(load_config(config_path).store) as reader:
        steps = len(reader.ledger(TrainStepRow, train_run_id="t-drain"))
    drained = [g for g in gates if g.epoch == 1 and g.step >= steps]
    assert drained, [(g.epoch, g.step, g.reason) for g in gates]
    assert all(g.evidence["rounds"] >= 1 for g in drained)


@pytest.mark.parametrize("share", [False, True], ids=["fresh", "shared-incumbent"])
async def test_a_budget_stop_with_open_candidates_resumes_to_the_same_decisions(
    train_bench: Bench, experiment: Path, share: bool
) -> None:
    """The checkpoint holds the open tests (their observations, cursor and level) and, when tests
    share the incumbent's samples, where each target's shared plan starts: a run stopped with tests
    open and resumed decides exactly as the run that was never stopped."""
    gate = {"n_max": 48, "first_stage": 8, "guard_draws": 8, "share_incumbent": share}
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        reference = loop_config(experiment / "ref", train_bench, sim, epochs=1, gate=gate)
        seen = Spending()
        whole = await train_observed(reference, "t-whole", seen)
        # Checkpoints grouped by the calls spent when saved: a budget of one group's count + 1 stops
        # the run among the next group's checkpoints. Cut before the first group whose every
        # checkpoint holds an open test with evidence.
        groups = [list(g) for _, g in itertools.groupby(seen.saved, key=lambda c: c.spent.calls)]
        cut_at = next(
            before[0].spent.calls + 1
            for before, after in itertools.pairwise(groups)
            if all(any(o.observed for o in c.open) for c in after)
        )
        budgeted = loop_config(
            experiment / "cut", train_bench, sim, epochs=1, gate=gate, budget={"max_calls": cut_at}
        )
        with pytest.raises(TrainingStopped, match="call budget"):
            await train_once(budgeted, "t-cut")
        saved = json.loads((run_folder(budgeted.parent, "t-cut") / CHECKPOINT_FILE).read_text())
        assert saved["open"], "the stop must come while tests are open"
        assert any(o["observed"] for o in saved["open"])
        resumed_config = loop_config(experiment / "cut", train_bench, sim, epochs=1, gate=gate)
        resumed = await train_once(resumed_config, "t-cut", resume=True)
    final_whole = Workspace.open(whole.workspace).load(whole.checkpoint.version).bundle_hash
    final_resumed = Workspace.open(resumed.workspace).load(resumed.checkpoint.version).bundle_hash
    assert final_resumed == final_whole
    assert [r[1:] for r in decisions(resumed_config, "t-cut")] == [
        r[1:] for r in decisions(reference, "t-whole")
    ]


async def test_an_accept_rebases_the_open_tests_of_its_class_only(
    train_bench: Bench, experiment: Path
) -> None:
    """When a class's incumbent changes, its open tests start over against the new one (new gate
    index, new level, fresh samples, no evidence carried); another class's test is untouched."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim)
        async with train_context(config_path, run_id="t-rebase") as ctx:
            initial = Bundle.load(load_config(config_path).agent.bundle)
            ws = Workspace.create(experiment / "ws", initial, reason="initial bundle")
            ckpt = Checkpoint(run_id="t-rebase", baseline_run_id="t-rebase.baseline")
            counting, ocr = EditTarget.skill("Counting Problem"), EditTarget.skill("OCR Problems")
            cursor = {"epoch": 1, "step": 0, "target": 0}
            first = with_lines(initial, counting, ["Count every object twice."])
            for candidate in (
                first,
                with_lines(initial, counting, ["Count slowly, frame by frame."]),
                with_lines(initial, ocr, ["Read each caption twice."]),
            ):
                ckpt, status = await open_candidate(ctx, ws, ckpt, candidate, cursor=cursor, check_stop=_go)
                assert status == "opened"
            _, duplicate = await open_candidate(ctx, ws, ckpt, first, cursor=cursor, check_stop=_go)
            assert duplicate == "duplicate"
            # The second counting test has evidence; then the first counting edit is accepted.
            second = ckpt.open[1].model_copy(
                update={"observed": [1, 1, 0], "stage_ends": [3], "cursor": 3, "wealth": 2.25}
            )
            ckpt = ckpt.model_copy(update={"open": [ckpt.open[0], second, ckpt.open[2]]})
            record = EditRecord(target=counting, reason=VersionReason.ACCEPTED, detail="test")
            version = ws.commit(first.bundle, "v0000", record)
            ckpt = ckpt.model_copy(update={"version": version, "open": ckpt.open[1:]})
            assert is_stale(ctx, ws, ckpt, second)
            assert not is_stale(ctx, ws, ckpt, ckpt.open[1])  # OCR sees nothing of a counting edit
            before = ckpt
            ckpt = rebase(ctx, ws, ckpt, second)
            restarted = ckpt.open[0]
            rebuilt = candidate_of(ctx, ws, restarted)
    assert restarted.key == before.decision_index != second.key
    assert restarted.rebased_from == [second.key]
    assert (restarted.observed, restarted.stage_ends, restarted.cursor, restarted.wealth) == ([], [], 0, 1.0)
    assert restarted.base_version == version
    assert restarted.first_sample == before.next_sample > second.first_sample
    assert ckpt.gates_run == before.gates_run + 1
    assert ckpt.alpha_spent == pytest.approx(before.alpha_spent + restarted.alpha)
    assert ckpt.open[1] == before.open[1]
    assert "Count every object twice." in rebuilt.document_before  # tested against the new incumbent
    assert "Count slowly, frame by frame." in rebuilt.document_after


async def test_a_budget_stop_comes_before_the_guard_of_an_accepted_system_edit(
    train_bench: Bench, experiment: Path
) -> None:
    """The guard of a system edit draws on every class (thousands of calls): the budget is checked
    between the accepting stage and the guard, so a spent budget stops there and draws nothing more."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim)
        async with train_context(config_path, run_id="t-guard-stop") as ctx:
            initial = Bundle.load(load_config(config_path).agent.bundle)
            ws = Workspace.create(experiment / "ws", initial, reason="initial bundle")
            ckpt = Checkpoint(run_id="t-guard-stop", baseline_run_id="t-guard-stop.baseline")
            lines = [sim.world.insights_for(t)[0].canonical for t in ctx.task_types]
            cursor = {"epoch": 1, "step": 0, "target": 0}
            proposal = with_lines(initial, EditTarget.system(), lines)
            ckpt, status = await open_candidate(ctx, ws, ckpt, proposal, cursor=cursor, check_stop=_go)
            assert status == "opened"
            key = ckpt.open[0].key

            def spent() -> None:
                raise TrainingStopped("call budget reached", reason="max_calls")

            stopped = None
            for _ in range(12):  # stages until the ladder accepts; then the check stops the pick
                try:
                    ckpt = await _advance(ctx, ws, ckpt, ckpt.open[0], cursor, spent)
                except TrainingStopped as exc:
                    stopped = exc
                    break
            assert stopped is not None, "the ladder accepted and the check stopped the pick"
            assert [o.key for o in ckpt.open] == [key]  # nothing of the stopped pick was kept
            drawn = observations(ctx.store, "t-guard-stop", key)
            guarded = observations(ctx.store, "t-guard-stop", key, arm="guard")
    assert drawn, "the accepting stage was drawn"
    assert guarded == []
