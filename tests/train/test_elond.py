"""The e-LOND level rule in the loop: each test's level carries the run's accepts before it, the
count survives a stop and a resume, and the run states its guarantee (docs/gate.md)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from loop_support import MOMENTUM_ON, Spending, decisions, loop_config

from bench_support import Bench
from skillharness.config import load_config
from skillharness.llm.types import SamplingParams
from skillharness.sim import SimServer, decisive_world
from skillharness.skills import EditTarget
from skillharness.store import GateDecisionRow, RunMetric, RunReader
from skillharness.train.config import GateConfig
from skillharness.train.gate import gate_alpha, run_guarantee
from skillharness.train.loop.training import TrainOutcome, TrainRequest, run_folder, run_training
from skillharness.train.preflight.gate_row import spending_summary
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.checkpoint import CHECKPOINT_FILE, Checkpoint, RunState
from skillharness.train.state.records import CasePack
from skillharness.train.validate.coverage import ClassCoverage, TrainedClasses
from skillharness.train.validate.reach import Screened, screen_packs

ALPHA = 0.4
GATE = {"n_max": 48, "first_stage": 8, "guard_draws": 8, "alpha": ALPHA, "alpha_spending": "elond"}


def test_an_older_checkpoint_reads_no_accepts_and_the_count_round_trips(tmp_path: Path) -> None:
    ckpt = Checkpoint(run_id="r", baseline_run_id="r.baseline", gates_run=5, accepts=2, step_accepts=1)
    ckpt.save(tmp_path)
    assert Checkpoint.load(tmp_path) == ckpt
    data = ckpt.model_dump(mode="json")
    del data["accepts"], data["step_accepts"]
    (tmp_path / CHECKPOINT_FILE).write_text(json.dumps(data))
    loaded = Checkpoint.load(tmp_path)
    # Zero counts fewer accepts than the run had: lower levels, so the guarantee still holds.
    assert (loaded.accepts, loaded.step_accepts) == (0, None)


def _screen(val_questions: int, *, accepts: int, spending: str = "elond") -> Screened:
    """One OCR skill pack screened at the run's gate 11, at temperature 0 (one draw per question)."""
    ctx: Any = SimpleNamespace(
        config=SimpleNamespace(gate=GateConfig(alpha_spending=spending)),
        task_types=("OCR Problems",),
        val_by_type={"OCR Problems": [SimpleNamespace(question_id=f"q{i}") for i in range(val_questions)]},
        session=SimpleNamespace(agent_config=SimpleNamespace(sampling=SamplingParams(temperature=0))),
    )
    pack = CasePack(EditTarget.skill("OCR Problems"), ())
    return screen_packs(ctx, [pack], gates_run=10, retired={}, accepts=accepts)


def test_under_elond_a_class_out_of_reach_now_waits_for_accepts_and_retires_only_for_good() -> None:
    # Gate 11 at alpha 0.05 needs 22 wins with no accept before it, 18 with three; no later test,
    # whatever accepts come, gets past 16 (docs/gate.md).
    waiting = _screen(18, accepts=0)
    assert waiting.packs == ()
    assert waiting.retired == {}
    assert "at gate 11 with 0 accept(s) before it" in waiting.deferred["skill:ocr_problems"]
    assert len(_screen(18, accepts=3).packs) == 1
    hopeless = _screen(15, accepts=3)
    assert "at any gate from 11 on, whatever accepts come" in hopeless.retired["skill:ocr_problems"]
    # Geometric levels only shrink: out of reach at the next gate is out for good, as before.
    assert "at gate 11 (alpha" in _screen(18, accepts=3, spending="geometric").retired["skill:ocr_problems"]


def test_preflight_names_the_last_gate_with_no_accept_and_says_accepts_move_it() -> None:
    coverage = ClassCoverage("OCR Problems", 10, 18, 15, True, drawable=18, last_gate=4)
    classes = TrainedClasses(trained=(coverage,), excluded_micro=(), unknown=(), explicit=True)
    summary = spending_summary(classes, GateConfig(alpha_spending="elond"))
    assert "alpha_spending=elond" in summary
    assert "with no accept these classes can accept only up to the run's gate shown" in summary
    assert "each accept moves it later" in summary
    assert summary.endswith("OCR Problems (gate 4)")


async def _train(config_path: Path, run_id: str, observer: Spending, *, resume: bool = False) -> TrainOutcome:
    request = TrainRequest(run_id=run_id, folder=run_folder(config_path.parent, run_id), resume=resume)
    return await run_training(load_config(config_path), request, observer=observer)


def _accepts_in_store(config_path: Path, run_id: str) -> int:
    return sum(1 for row in decisions(config_path, run_id) if row[2] == "accept")


def _checked_levels(config_path: Path, run_id: str) -> list[int]:
    """Every decided test got the level of its place in the run with some count of accepts decided
    before it; returns those counts, one per test (the smallest that matches)."""
    config = load_config(config_path)
    with RunReader(config.store) as reader:
        rows = reader.ledger(GateDecisionRow, train_run_id=run_id)
    counts, accepted = [], 0
    # A test's place is its rank among the run's tests by gate index: a decision that drew nothing
    # (a refusal, a declined proposal: level 0) has a gate index but spends no level. A test rebased
    # onto a moved incumbent restarts under a new index and level; the one it left drew under its
    # own and has no decision row, only its name in the restarted test's ``rebased_from``.
    rebased = {k for r in rows for k in r.evidence.get("rebased_from") or ()}
    tests = sorted({r.gate_index for r in rows if r.evidence.get("alpha")} | rebased)
    for row in rows:
        if row.evidence.get("alpha"):
            t = tests.index(row.gate_index) + 1
            levels = [gate_alpha(ALPHA, "elond", t, accepts=j) for j in range(accepted + 1)]
            matching = [j for j, level in enumerate(levels) if level == pytest.approx(row.evidence["alpha"])]
            assert matching, (row.gate_index, row.evidence["alpha"], levels)
            counts.append(matching[0])
        accepted += row.reason == "accept"
    return counts


async def test_elond_levels_carry_the_accepts_across_a_budget_stop_and_resume(
    train_bench: Bench, experiment: Path
) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        # Slow momentum on, as this run was built: without its epoch-end tests it ends under 600 calls.
        on = {"momentum": MOMENTUM_ON}
        cut = loop_config(experiment, train_bench, sim, gate=GATE, budget={"max_calls": 600}, **on)
        first = Spending()
        with pytest.raises(TrainingStopped, match="call budget"):
            await _train(cut, "t-elond", first)
        stopped = Checkpoint.load(run_folder(cut.parent, "t-elond"))
        assert stopped.state is RunState.INTERRUPTED
        assert stopped.accepts == _accepts_in_store(cut, "t-elond")
        resumed_config = loop_config(experiment, train_bench, sim, gate=GATE, **on)
        second = Spending()
        outcome = await _train(resumed_config, "t-elond", second, resume=True)
    assert outcome.checkpoint.state is RunState.FINISHED
    assert stopped.accepts > 0
    # The count survives the resume: its first save adds only the accept of the unit it finished.
    assert second.saved[0].accepts == stopped.accepts + (second.saved[0].version != stopped.version)
    assert outcome.checkpoint.accepts == _accepts_in_store(resumed_config, "t-elond") > 0
    checked = _checked_levels(resumed_config, "t-elond")
    assert len(checked) >= 3
    assert max(checked) > 0  # a test opened after an accept got the larger level
    with RunReader(load_config(resumed_config).store) as reader:
        metrics: dict[str, Any] = {m.name: m.value for m in reader.ledger(RunMetric, run_id="t-elond")}
    bound = metrics["alpha_spent"]
    assert bound["bound"] == run_guarantee(load_config(resumed_config).train.gate)
    assert bound["bound"] == "run-wide: at most 40% of accepts are false, in expectation (e-LOND)"
    assert bound["accepts"] == outcome.checkpoint.accepts
