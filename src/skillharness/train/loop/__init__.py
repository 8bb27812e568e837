"""The run: open it, loop over epochs and steps, decide each test, and store its end."""

from __future__ import annotations

from skillharness.train.loop.batches import plan_steps
from skillharness.train.loop.decide import decide
from skillharness.train.loop.experiment import default_train_run_id, open_training, trained_task_types
from skillharness.train.loop.open_gates import candidate_of, is_stale, open_candidate, rebase
from skillharness.train.loop.progress import TrainProgress
from skillharness.train.loop.seed_mode import checked_seed_mode
from skillharness.train.loop.training import (
    RunEnded,
    TrainOutcome,
    TrainRequest,
    ended_run,
    run_folder,
    run_training,
)

__all__ = [
    "RunEnded",
    "TrainOutcome",
    "TrainProgress",
    "TrainRequest",
    "candidate_of",
    "checked_seed_mode",
    "decide",
    "default_train_run_id",
    "ended_run",
    "is_stale",
    "open_candidate",
    "open_training",
    "plan_steps",
    "rebase",
    "run_folder",
    "run_training",
    "trained_task_types",
]
