"""The training loop end to end against the simulator (audit P0-5, P2-5) and its stopping rules."""

from __future__ import annotations

import asyncio
import itertools

import pytest
import yaml
from loop_support import MOMENTUM_ON, TRAINED, Spending, decisions, loop_config, train_observed, train_once

from bench_support import Bench
from skillharness.config import load_config
from skillharness.data.pools import load_pools
from skillharness.sim import SimServer, decisive_world
from skillharness.skills import Workspace
from skillharness.store import (
    DualMetricRow,
    GateDecisionRow,
    GateObservationRow,
    RunMetric,
    RunReader,
    TrainStepRow,
)
from skillharness.train.loop.training import TrainRequest, run_folder, run_training
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.checkpoint import Checkpoint, RunState


async def test_training_accepts_real_insights_in_a_decisive_world(train_bench: Bench, experiment) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim)
        outcome = await train_once(config_path, "t-e2e")
        assert outcome.checkpoint.state is RunState.FINISHED
        rows = decisions(config_path, "t-e2e")
        accepted = [r for r in rows if r[2] == "accept"]
        assert accepted, rows
        ws = Workspace.open(outcome.workspace)
        initial, final = ws.load("v0000"), ws.load(outcome.checkpoint.version)
        val = list(load_pools(train_bench.pools).questions["val"])
        truth_initial = sim.oracle.expected_accuracy(initial, val)
        truth_final = sim.oracle.expected_accuracy(final, val)
        assert truth_final > truth_initial  # the accepted edits really help, by the simulator's truth
        with RunReader(load_config(config_path).store) as reader:
            names = {m.name for m in reader.ledger(RunMetric, run_id="t-e2e")}
            assert {"final", "val_gain", "alpha_spent", "usage", "epoch_end/001", "epoch_end/002"} <= names
            children = {r.run_id for r in reader.children("t-e2e")}
            assert "t-e2e.baseline" in children


@pytest.mark.parametrize("batch_size", [3, 6])
async def test_p0_5_patience_counts_epochs(train_bench: Bench, experiment, batch_size: int) -> None:
    """Only useless edits: patience 2 stops two epochs after the last epoch that improved, not steps.

    No edit helps, but the gate may falsely accept a useless one (at most alpha per gate) and the
    epoch-end score of the changed bundle is a fresh noisy sample: an epoch may then "improve". So
    the stop is counted from the last improving epoch (the baseline, epoch 0, when none did).
    """
    world = decisive_world(5, insight_rate=0.0, harmful_rate=0.0)
    with SimServer(world, questions=train_bench.questions) as sim:
        config_path = loop_config(
            experiment, train_bench, sim, epochs=6, early_stop_patience=2, batch_size=batch_size
        )
        outcome = await train_once(config_path, "t-patience")
    ckpt = outcome.checkpoint
    with RunReader(load_config(config_path).store) as reader:
        ends = {
            m.name: m.value
            for m in reader.ledger(RunMetric, run_id="t-patience")
            if m.name.startswith("epoch_end")
        }
        steps = {
            (r.epoch, r.step) for r in reader.ledger(DualMetricRow, train_run_id="t-patience") if r.step >= 0
        }
        # Every step of the run (a decision may come steps after its candidate opened).
        ran = {(r.epoch, r.step) for r in reader.ledger(TrainStepRow, train_run_id="t-patience")}
    last = max((value["epoch"] for value in ends.values() if value["improved"]), default=0)
    assert last <= 4  # the run has epochs left to stop early in
    assert ckpt.state is RunState.STOPPED_EARLY
    assert ckpt.epoch_end_done == last + 2
    assert ckpt.epochs_without_improvement == 2
    assert sorted(ends) == [f"epoch_end/{e:03d}" for e in range(1, last + 3)]
    assert max(epoch for epoch, _ in steps) == last + 2
    assert len({step for epoch, step in ran if epoch == 1}) >= 2  # counting steps would stop sooner


async def test_p2_5_dual_metric_rows_follow_the_decision(train_bench: Bench, experiment) -> None:
    """Every dual_metric row names the version that stands after its decision: rejects the incumbent."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim, epochs=1)
        await train_once(config_path, "t-dual")
    with RunReader(load_config(config_path).store) as reader:
        gates = reader.ledger(GateDecisionRow, train_run_id="t-dual")
        metrics = {
            (r.epoch, r.step, r.target): r for r in reader.ledger(DualMetricRow, train_run_id="t-dual")
        }
    assert any(g.reason != "accept" for g in gates)
    for gate in gates:
        row = metrics[(gate.epoch, gate.step, gate.target)]
        if gate.reason == "accept":
            assert row.version == gate.version_after
        else:
            assert row.version == gate.version_before  # a reverted candidate leaves the incumbent's row


async def test_a_call_budget_stops_cleanly_and_resume_ends_like_an_uninterrupted_run(
    train_bench: Bench, experiment
) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        reference = loop_config(experiment / "ref", train_bench, sim, epochs=1)
        whole = await train_once(reference, "t-whole")
        budgeted = loop_config(experiment / "cut", train_bench, sim, epochs=1, budget={"max_calls": 150})
        with pytest.raises(TrainingStopped, match="call budget"):
            await train_once(budgeted, "t-cut")
        folder = run_folder(budgeted.parent, "t-cut")
        assert Checkpoint.load(folder).state is RunState.INTERRUPTED
        # Resume without the budget (it is the run's: only a larger one goes on): same decisions,
        # same final bundle.
        resumed_config = loop_config(experiment / "cut", train_bench, sim, epochs=1)
        resumed = await train_once(resumed_config, "t-cut", resume=True)
    assert resumed.checkpoint.state is RunState.FINISHED
    final_whole = Workspace.open(whole.workspace).load(whole.checkpoint.version).bundle_hash
    final_resumed = Workspace.open(resumed.workspace).load(resumed.checkpoint.version).bundle_hash
    assert final_resumed == final_whole
    strip = [row[1:] for row in decisions(reference, "t-whole")]
    assert [row[1:] for row in decisions(resumed_config, "t-cut")] == strip
    assert TRAINED


@pytest.mark.slow
async def test_no_two_gates_of_a_run_share_a_sample(train_bench: Bench, experiment) -> None:
    """Each gate draws from sample indices no earlier gate used (the checkpoint keeps the counter)."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim, epochs=1)
        outcome = await train_once(config_path, "t-fresh")
    with RunReader(load_config(config_path).store) as reader:
        observed = reader.ledger(GateObservationRow, train_run_id="t-fresh")
        gates = sorted(reader.ledger(GateDecisionRow, train_run_id="t-fresh"), key=lambda g: g.gate_index)
    by_gate: dict[int, set[tuple[str, int]]] = {}
    for row in observed:
        by_gate.setdefault(row.gate_index, set()).add((row.question_id, row.sample_idx))
    assert len(by_gate) >= 2
    questions = [{q for q, _ in pairs} for pairs in by_gate.values()]
    assert any(a & b for i, a in enumerate(questions) for b in questions[i + 1 :])  # questions do recur
    pairs = [pair for gate in by_gate.values() for pair in gate]
    assert len(pairs) == len(set(pairs))  # but never under a sample index an earlier gate used
    ranges = [g.evidence["samples"] for g in gates if "samples" in g.evidence]
    assert ranges[0][0] == 1  # index 0 is the val score's
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))
    assert outcome.checkpoint.next_sample == ranges[-1][1] > max(s for _, s in pairs)


@pytest.mark.slow
async def test_shared_incumbent_samples_are_read_again_and_never_an_accepted_candidates(
    train_bench: Bench, experiment
) -> None:
    """``train.gate.share_incumbent``: tests of one target against one incumbent draw the same
    (question, sample) pairs and read the incumbent's answer there once; no test against a later
    incumbent of that target draws a pair an earlier test of it drew."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        gate = {"n_max": 48, "first_stage": 8, "guard_draws": 8, "share_incumbent": True}
        config_path = loop_config(experiment, train_bench, sim, epochs=2, gate=gate)
        await train_once(config_path, "t-share")
    with RunReader(load_config(config_path).store) as reader:
        observed = reader.ledger(GateObservationRow, train_run_id="t-share")
        gates = reader.ledger(GateDecisionRow, train_run_id="t-share")
    incumbent: dict[tuple[int, str, int], set[int | None]] = {}
    for row in observed:
        incumbent.setdefault((row.gate_index, row.question_id, row.sample_idx), set()).add(row.incumbent)
    drawn = [g for g in gates if "samples" in g.evidence]
    by_pair: dict[tuple[str, int], list[GateDecisionRow]] = {}
    for g in drawn:
        for q, s in {(q, s) for (k, q, s) in incumbent if k == g.gate_index}:
            by_pair.setdefault((q, s), []).append(g)
    shared = {pair: rows for pair, rows in by_pair.items() if len(rows) > 1}
    assert shared  # tests did share pairs
    for (q, s), rows in shared.items():
        assert len({g.target for g in rows}) == 1  # only tests of one target share
        answers = set().union(*(incumbent[(g.gate_index, q, s)] for g in rows)) - {None}
        assert len(answers) <= 1  # one answer of the incumbent, read by every test of the pair
    for accept in (g for g in drawn if g.version_after):
        later = [g for g in drawn if g.target == accept.target and g.version_before >= accept.version_after]
        assert all(g.evidence["samples"][0] >= accept.evidence["samples"][1] for g in later)


@pytest.mark.slow
async def test_two_experiments_train_concurrently_on_one_postgresql_store_and_one_redis_cache(
    train_bench: Bench, tmp_path, pg_url: str, redis_url: str
) -> None:
    """Different experiments share the services without interfering: each ends as it does alone."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        shared = {"store": {"url": pg_url}, "cache": {"url": redis_url, "namespace": "shared-test"}}
        first = loop_config(tmp_path / "a", train_bench, sim, epochs=1, seed=1)
        second = loop_config(tmp_path / "b", train_bench, sim, epochs=1, seed=2)
        alone = loop_config(tmp_path / "alone", train_bench, sim, epochs=1, seed=2)
        for path in (first, second):
            doc = yaml.safe_load(path.read_text())
            doc.update({k: {**doc.get(k, {}), **v} for k, v in shared.items()})
            path.write_text(yaml.safe_dump(doc))
        together = await asyncio.gather(train_once(first, "pg-a"), train_once(second, "pg-b"))
        reference = await train_once(alone, "alone-b")
    assert all(o.checkpoint.state is RunState.FINISHED for o in together)
    finals = [
        Workspace.open(o.workspace).load(o.checkpoint.version).bundle_hash for o in (*together, reference)
    ]
    assert finals[1] == finals[2]  # run b on shared services ends exactly as b alone on SQLite
    assert [r[1:] for r in decisions(second, "pg-b")] == [r[1:] for r in decisions(alone, "alone-b")]
    with RunReader(pg_url) as reader:
        runs = {r.run_id for r in reader.runs()}
        assert {"pg-a", "pg-b"} <= runs
        assert {c.run_id for c in reader.children("pg-a")}.isdisjoint(
            c.run_id for c in reader.children("pg-b")
        )


@pytest.mark.slow
async def test_a_budget_that_runs_out_just_before_an_epoch_end_stops_within_one_stage(
    train_bench: Bench, experiment
) -> None:
    """The epoch end (momentum tests, consolidation, the val score) checks the budget like a step:
    a run whose budget ends as the epoch end begins overshoots by one stage at most, not by the
    epoch end's tests and two passes over val."""
    on = {"momentum": MOMENTUM_ON}  # the epoch end then has a test to cut
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        reference = loop_config(experiment / "ref", train_bench, sim, epochs=1, **on)
        seen = Spending()
        whole = await train_observed(reference, "t-ref", seen)
        assert whole.checkpoint.momentum_done, "no momentum test ran: the test needs an epoch end to cut"
        before_end = [c for c in seen.saved if c.epoch_end_done == 0 and not c.momentum_done][-1]
        budget = before_end.spent.calls + 1
        cut = loop_config(experiment / "cut", train_bench, sim, epochs=1, budget={"max_calls": budget}, **on)
        with pytest.raises(TrainingStopped, match="call budget"):
            await train_once(cut, "t-cut")
        stopped = Checkpoint.load(run_folder(cut.parent, "t-cut"))
    config = load_config(cut)
    # One stage: its first stage's draws, both arms, every turn of each; and the momentum call.
    stage = config.train.gate.first_stage * 2 * config.agent.max_steps + 1
    assert stopped.epoch_end_done == 0
    assert budget <= stopped.spent.calls <= budget + stage
    assert whole.checkpoint.spent.calls > budget + stage  # the epoch end it cut costs more than that


async def test_a_budget_stopped_run_spends_nothing_on_any_number_of_resumes(
    train_bench: Bench, experiment
) -> None:
    """The budget is the run's: three resumes of a run that spent it stop before any call, and the
    stop leaves final metrics marked ``budget`` with the open tests counted."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim, epochs=1, budget={"max_calls": 150})
        with pytest.raises(TrainingStopped, match="call budget"):
            await train_once(config_path, "t-spent")
        folder = run_folder(config_path.parent, "t-spent")
        first = Checkpoint.load(folder)
        requests = sim.stats()["requests"]
        for _ in range(3):
            with pytest.raises(TrainingStopped, match="call budget"):
                await train_once(config_path, "t-spent", resume=True)
            assert sim.stats()["requests"] == requests
        again = Checkpoint.load(folder)
        with RunReader(load_config(config_path).store) as reader:
            metrics = {m.name: m.value for m in reader.ledger(RunMetric, run_id="t-spent")}
        # Stopped again another way: the final metric is of this stop, not left standing from the first.
        stop = folder / "STOP"
        stop.write_text("")
        request = TrainRequest(run_id="t-spent", folder=folder, resume=True, stop_file=stop)
        with pytest.raises(TrainingStopped, match="stop file"):
            await run_training(load_config(config_path), request)
    assert 150 <= first.spent.calls == again.spent.calls
    assert again.state is RunState.INTERRUPTED
    assert metrics["final"]["stop"] == "budget"
    assert metrics["final"]["open_candidates"] == len(again.open)
    assert metrics["final"]["version"] == again.version
    assert metrics["budget"]["spent"]["calls"] == again.spent.calls
    assert metrics["budget"]["limits"]["calls"] == 150
    assert "val_gain" not in metrics  # no final val score: it would spend past the budget
    with RunReader(load_config(config_path).store) as reader:
        final = next(m.value for m in reader.ledger(RunMetric, run_id="t-spent") if m.name == "final")
    assert final["stop"] == "stop_file"
    assert final["version"] == again.version
