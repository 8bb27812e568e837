"""Audit P0-3 in the loop: it evolves exactly preflight's classes, and never a gate that cannot accept.

``train_bench`` at temperature 0 gives each class's gate its distinct val questions as budget.
With alpha 0.2 and bet cap 1/2 a gate needs 4 wins (1.5^4 = 5.06 >= 5), so the split holds
classes with train questions but too few val questions to ever be accepted (micro), next to
trainable ones. Geometric alpha spending then halves the level at every gate, so the trainable
classes become unreachable one after another as the run goes on.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from loop_support import train_once
from train_support import write_train_config

from bench_support import Bench
from skillharness.config import load_config
from skillharness.data import Pool, load_pool_questions
from skillharness.sim import SimServer, decisive_world
from skillharness.skills import EditTarget
from skillharness.store import DiagnosisRow, GateDecisionRow, RunMetric, RunReader, TrainStepRow
from skillharness.train.loop.experiment import trained_task_types
from skillharness.train.preflight.checks import run_preflight_async
from skillharness.train.preflight.report import CheckStatus

# Train and val questions of train_bench per class (seed 5, split 12/12/6 videos).
TRAINABLE = ("Counting Problem", "Information Synopsis", "Object Reasoning", "Temporal Reasoning")  # val 4-6
MICRO_WITH_TRAIN = ("Action Recognition", "Attribute Perception", "OCR Problems")  # val 2-3, train 3-7


def _config(
    folder: Path, bench: Bench, sim: SimServer, task_types: tuple[str, ...] | None = None, **gate: Any
) -> Path:
    """Every class left to the default rule (unless ``task_types`` names them), temperature 0, one
    epoch."""
    return write_train_config(
        folder,
        bench,
        sim,
        agent={"sampling": {"temperature": 0.0}, "concurrency": 8},
        train={
            "task_types": task_types,
            "epochs": 1,
            "batch_size": 4,
            # min_distinct 1: these classes are micro or not by reachability alone.
            "gate": {
                "alpha": 0.2,
                "n_max": 48,
                "first_stage": 4,
                "guard_draws": 0,
                "min_distinct": 1,
                **gate,
            },
            "evolve": {"candidates": 1, "rank": False},
        },
    )


def _ledger(config_path: Path, run_id: str) -> tuple[list[GateDecisionRow], list[TrainStepRow]]:
    with RunReader(load_config(config_path).store) as reader:
        return (
            reader.ledger(GateDecisionRow, train_run_id=run_id),
            reader.ledger(TrainStepRow, train_run_id=run_id),
        )


def _defect_targets(config_path: Path) -> set[str]:
    """Every target a diagnosed defect of the experiment's store pointed at."""
    with RunReader(load_config(config_path).store) as reader:
        return {r.target for r in reader.ledger(DiagnosisRow) if r.cause == "defect" and r.target}


def _skills(names: tuple[str, ...]) -> set[str]:
    return {EditTarget.skill(t).label() for t in names}


@pytest.mark.slow
async def test_p0_3_loop_trains_only_preflight_classes(train_bench: Bench, experiment: Path) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = _config(experiment, train_bench, sim)
        report = await run_preflight_async(load_config(config_path), endpoint_timeout_s=5.0)
        assert report.ok, report.problems
        gate_line = next(r.message for r in report.rows() if r.check == "gate")
        assert all(t in gate_line.partition("micro classes left out")[2] for t in MICRO_WITH_TRAIN)
        outcome = await train_once(config_path, "t-classes")
    rows, steps = _ledger(config_path, "t-classes")
    evolved = {r.target for r in rows}
    # The micro classes did have wrong train answers diagnosed as defects of their skills...
    assert _defect_targets(config_path) & _skills(MICRO_WITH_TRAIN)
    assert evolved & _skills(TRAINABLE)
    # ...and still not one of them was evolved: the loop trains preflight's classes, no others.
    assert not evolved & _skills(MICRO_WITH_TRAIN), evolved
    assert {t for t in evolved if t.startswith("skill:")} <= _skills(TRAINABLE)
    assert not [r for r in rows if "unreachable" in r.detail]
    assert outcome.checkpoint.retired == {}
    assert all(s.summary["deferred"] == {} for s in steps)


@pytest.mark.slow
async def test_p0_3_alpha_spending_retires_a_class_before_paying_for_it(
    train_bench: Bench, experiment: Path
) -> None:
    """Geometric spending: gate k gets 0.4 / 2^k, so a class of 4 val questions is out after gate 1."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = _config(experiment, train_bench, sim, alpha=0.4, alpha_spending="geometric")
        outcome = await train_once(config_path, "t-spend")
    rows, steps = _ledger(config_path, "t-spend")
    retired = outcome.checkpoint.retired
    assert retired, "no class ran out of reach: the test lost its point"
    # No evolve call, no gate, ever ends as "unreachable": each gate could accept at its own level.
    assert not [r for r in rows if "unreachable" in r.detail], [r.detail for r in rows]
    # Each retired target is reported once, by the step that found it out of reach...
    reported = [label for s in steps for label in s.summary["retired"]]
    assert sorted(reported) == sorted(retired)
    for label, entry in retired.items():
        assert "unreachable at gate" in entry.detail
        # ...and never evolved from then on.
        later = [r for r in rows if r.target == label and (r.epoch, r.step) >= (entry.epoch, entry.step)]
        assert later == [], label
    # Preflight's classes were all reachable at gate 1: these ran out of reach at later gates.
    assert set(retired) <= _skills(TRAINABLE)


@pytest.mark.slow
async def test_micro_classes_named_in_task_types_are_trained_and_set_apart_in_the_final_metrics(
    train_bench: Bench, experiment: Path
) -> None:
    """min_distinct 5: the trainable classes with 4 val questions are micro (their gates can still
    accept), so only naming them trains them, and the run's final metrics list them apart."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = _config(experiment, train_bench, sim, task_types=TRAINABLE, min_distinct=5)
        config = load_config(config_path)
        report = await run_preflight_async(config, endpoint_timeout_s=5.0)
        assert report.ok, report.problems
        chosen, frozen = load_pool_questions(config.data, (Pool.TRAIN, Pool.VAL), purpose="training")
        classes = trained_task_types(config, (*chosen[Pool.TRAIN], *chosen[Pool.VAL]), frozen)
        micro = set(classes.micro_trained)
        assert micro, "no trainable class has fewer than 5 val questions: the test lost its point"
        assert micro < set(TRAINABLE)
        gate_row = next(r for r in report.rows() if r.check == "gate")
        assert gate_row.status is CheckStatus.WARN
        warning = gate_row.message.partition("micro classes trained because train.task_types names them")[2]
        assert all(f"{t}: 4 distinct val question(s) < train.gate.min_distinct=5" in warning for t in micro)
        await train_once(config_path, "t-named")
    with RunReader(load_config(config_path).store) as reader:
        metrics = {m.name: m.value for m in reader.ledger(RunMetric, run_id="t-named")}
    assert set(metrics["final"]["micro_trained"]) == micro
    # What each trained class's claims rest on: its distinct val questions.
    val_counts = Counter(q.task_type for q in chosen[Pool.VAL])
    assert metrics["final"]["distinct_val"] == {t: val_counts[t] for t in classes.names}
    assert all(metrics["final"]["distinct_val"][t] == 4 for t in micro)
