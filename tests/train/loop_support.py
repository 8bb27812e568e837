"""Helpers of the loop tests: a small, fast training config over a bench and a simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from train_support import write_train_config

from bench_support import Bench
from skillharness.config import load_config
from skillharness.sim import SimServer
from skillharness.store import GateDecisionRow, RunReader
from skillharness.train.loop.training import TrainOutcome, TrainRequest, run_folder, run_training
from skillharness.train.state.checkpoint import Checkpoint

TRAINED = ("Counting Problem", "Object Recognition", "OCR Problems")
# Slow momentum is off by default; the runs that exercise the epoch end turn it on.
MOMENTUM_ON: dict[str, Any] = {"enabled": True}


def loop_config(folder: Path, bench: Bench, sim: SimServer, **train: Any) -> Path:
    """Sampling at temperature 0.7 (gates draw with replacement, one pinned seed per draw), three
    trained classes, small gates."""
    settings: dict[str, Any] = {
        "epochs": 2,
        "batch_size": 4,
        "early_stop_patience": 3,
        "task_types": list(TRAINED),
        "gate": {"n_max": 48, "first_stage": 8, "guard_draws": 8},
        # The ranked design from the first step (the defaults run the rank trial first): these runs
        # exercise the rank role's calls, its records and their resume as well.
        "evolve": {"candidates": 2, "rank": True, "rank_may_decline": True},
        "roles": {"evolve": {"temperature": 0.7}},  # two candidates that can differ
        **train,
    }
    return write_train_config(
        folder,
        bench,
        sim,
        # One seed per draw (the default when sampling), its salt pinned: two runs of one config
        # (a reference and a cut one) draw the same seeds, as a user pairs two runs.
        agent={"sampling": {"temperature": 0.7}, "concurrency": 8, "seed_salt": "loop"},
        train=settings,
    )


async def train_once(config_path: Path, run_id: str, *, resume: bool = False) -> TrainOutcome:
    config = load_config(config_path)
    folder = run_folder(config_path.parent, run_id)
    return await run_training(config, TrainRequest(run_id=run_id, folder=folder, resume=resume))


class Spending:
    """A loop observer keeping each checkpoint as saved (with the run's spending), in order."""

    def __init__(self) -> None:
        self.saved: list[Checkpoint] = []

    def on_start(self, ctx: object) -> None:
        return None

    def on_step(self, ckpt: Checkpoint, steps_in_epoch: int) -> None:
        return None

    def on_checkpoint(self, ckpt: Checkpoint) -> None:
        self.saved.append(ckpt)


async def train_observed(config_path: Path, run_id: str, observer: Spending) -> TrainOutcome:
    config = load_config(config_path)
    request = TrainRequest(run_id=run_id, folder=run_folder(config_path.parent, run_id))
    return await run_training(config, request, observer=observer)


def decisions(config_path: Path, run_id: str) -> list[tuple[Any, ...]]:
    """The run's gate decisions without timestamps: what must match between two runs."""
    config = load_config(config_path)
    with RunReader(config.store) as reader:
        rows = reader.ledger(GateDecisionRow, train_run_id=run_id)
    return [
        (r.gate_index, r.target, r.reason, r.version_before, r.version_after, r.document_after) for r in rows
    ]
