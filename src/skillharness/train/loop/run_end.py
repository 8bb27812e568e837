"""What a training run leaves at a stop or its end: the checkpoint with its spending, the budget
metric, and the final metrics (marked ``budget`` when the budget stopped it, without a val score)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillharness.errors import ConfigError
from skillharness.skills import Workspace
from skillharness.store import RunMetric
from skillharness.train.gate import run_guarantee
from skillharness.train.state.budget import StopGuard
from skillharness.train.state.checkpoint import Checkpoint, RunState, Spent
from skillharness.train.state.context import TrainContext
from skillharness.train.state.rank_trial import rank_mode
from skillharness.train.validate.final_score import FinalValScore

__all__ = ["checkpoint_saver", "final_metrics", "mark_interrupted", "stop_metrics"]


def mark_interrupted(folder: Path, reason: str, guard: StopGuard) -> Checkpoint | None:
    """The last checkpoint, marked interrupted, with everything this invocation spent: the calls
    made since it was saved are in the response cache, so its resume replays them for nothing."""
    try:
        ckpt = Checkpoint.load(folder)
    except ConfigError:
        return None
    ckpt = ckpt.model_copy(
        update={"state": RunState.INTERRUPTED, "stop_reason": reason, "spent": guard.spent()}
    )
    ckpt.save(folder)
    return ckpt


def checkpoint_saver(ctx: TrainContext, folder: Path, guard: StopGuard) -> Callable[[Checkpoint], Checkpoint]:
    """Save a checkpoint with the run's spending up to now (the budget a resume goes on from), and
    once a step the ``budget`` metric that ``runs show`` and the report read."""
    last_step: list[tuple[int, int]] = []

    def save(ckpt: Checkpoint) -> Checkpoint:
        stamped = ckpt.model_copy(update={"spent": guard.spent()})
        stamped.save(folder)
        if last_step != [(stamped.epoch, stamped.step)]:
            last_step[:] = [(stamped.epoch, stamped.step)]
            ctx.store.upsert([budget_metric(ctx, stamped.spent, guard)])
        return stamped

    return save


def budget_metric(ctx: TrainContext, spent: Spent, guard: StopGuard) -> RunMetric:
    return RunMetric(
        run_id=ctx.run_id,
        name="budget",
        value={"spent": spent.model_dump(mode="json"), "limits": guard.limits()},
    )


def stop_metrics(
    ctx: TrainContext, ws: Workspace, ckpt: Checkpoint, guard: StopGuard, *, stop: str
) -> list[RunMetric]:
    """A stop's ``final`` metric, marked with why (``budget``, ``stop_file``, ``interrupted``): the
    incumbent it reached, the tests it left open, the budget; no val score (it would spend past a
    budget). Written at every stop the process sees, so that a resumed run stopped again never
    leaves an earlier stop's incumbent standing as its final bundle; a resume goes on and
    replaces it."""
    return [
        RunMetric(run_id=ctx.run_id, name=name, value=value)
        for name, value in _common_metrics(ctx, ws, ckpt, guard, stop=stop).items()
    ]


def _common_metrics(
    ctx: TrainContext, ws: Workspace, ckpt: Checkpoint, guard: StopGuard, *, stop: str
) -> dict[str, Any]:
    """What every end of a run stores: the incumbent, why it ended, Σα, usage and the budget."""
    spent = guard.spent()  # one reading: the usage and the budget count the same calls
    return {
        "final": {
            "workspace": str(ws.path),
            "version": ckpt.version,
            "bundle_hash": ws.load(ckpt.version).bundle_hash,
            "state": ckpt.state.value,
            "stop": stop,  # "end", or why it stopped (budget, stop_file, interrupted): resumable
            "stop_reason": ckpt.stop_reason,
            "baseline_run": ckpt.baseline_run_id,
            "open_candidates": len(ckpt.open),  # tests still open (a budget stop leaves some)
            # Micro classes trained because train.task_types names them: their accepts stand apart.
            "micro_trained": list(ctx.micro_trained),
            # What each trained class's claims rest on: its distinct val questions (draws with
            # replacement add observations, not questions).
            "distinct_val": _distinct_val(ctx),
            # How proposals were chosen at the end; with train.evolve.rank auto, the trial that chose it.
            "rank_design": rank_mode(ctx.config.evolve.rank, ckpt.rank_trial).value,
            "rank_trial": ckpt.rank_trial.summary() if ctx.config.evolve.rank == "auto" else None,
        },
        "alpha_spent": {
            "sum": ckpt.alpha_spent,
            "gates": ckpt.gates_run,
            "accepts": ckpt.accepts,
            # Each opened test (a rebase opens a new one) spends its level once, however many
            # rounds it is continued over.
            "bound": run_guarantee(ctx.config.gate),
        },
        "usage": spent.usage,  # every invocation's, as the budget counts them
        # Agent requests the server refused (a limit below the run's requests), by arm and cause:
        # never scored, so they show here and nowhere in a score (train/state/refusals.py).
        "refusals": ctx.refusals.record(),
        "budget": budget_metric(ctx, spent, guard).value,
    }


def _distinct_val(ctx: TrainContext) -> dict[str, int]:
    # What gates could draw: the reserve (train.gate.reserve) is no part of any claim.
    return {task: len(ctx.val_by_type.get(task, ())) for task in ctx.task_types}


def final_metrics(
    ctx: TrainContext, ws: Workspace, ckpt: Checkpoint, guard: StopGuard, scored: FinalValScore
) -> list[RunMetric]:
    baseline, final = scored.baseline, scored.final
    values = _common_metrics(ctx, ws, ckpt, guard, stop="end")
    values["final"]["val_runs"] = scored.runs  # the runs the val gain pairs (fresh samples)
    values |= {
        "val_gain": scored.gain,
        "val_scores": {
            "baseline": {"correct": baseline.correct, "n": baseline.n, "per_class": baseline.per_class},
            "final": {"correct": final.correct, "n": final.n, "per_class": final.per_class},
        },
    }
    return [RunMetric(run_id=ctx.run_id, name=name, value=value) for name, value in values.items()]
