"""The training loop, as SPEC section 4 says it, on one screen.

    for each epoch (until the last, or patience in epochs runs out):
        for each step (train units shuffled from the seed):
            rollout → diagnose → case packs → evolve and rank → open a test per candidate
            evidence round: each open test one more stage, strongest first; decided ones close
            checkpoint after every opening and every stage
        last epoch: evidence rounds, no new proposals, until no test is open (or the budget ends)
        epoch end: slow momentum, consolidate_system, the val score, patience in epochs
    after patience ran out: the same rounds until no test is open

Every step is a module of its own (step, open_gates, rounds, decide, epoch_end, validate, evolve,
diagnose); this module only sequences them and saves the checkpoint between them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from skillharness.skills import Workspace
from skillharness.train.loop.batches import plan_steps
from skillharness.train.loop.epoch_end import end_epoch, patience_reason
from skillharness.train.loop.rounds import evidence_round
from skillharness.train.loop.step import run_step
from skillharness.train.state.checkpoint import Checkpoint, RunState
from skillharness.train.state.context import TrainContext

__all__ = ["LoopObserver", "train_epochs"]


class LoopObserver(Protocol):
    """What the loop tells a progress display (all optional to act on)."""

    def on_start(self, ctx: TrainContext) -> None: ...
    def on_step(self, ckpt: Checkpoint, steps_in_epoch: int) -> None: ...
    def on_checkpoint(self, ckpt: Checkpoint) -> None: ...


async def train_epochs(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    *,
    save: Callable[[Checkpoint], Checkpoint],
    check_stop: Callable[[], None],
    observer: LoopObserver,
) -> Checkpoint:
    """Run from ``ckpt``'s cursor to the last epoch or an early stop, then until no test is open;
    return the final checkpoint. ``save`` writes a checkpoint and returns it as written.

    ``check_stop`` raises to stop cleanly (budget, stop file); it is called before every unit that
    spends calls (a step, a ladder stage, a guard, each epoch-end test, each decision's and the
    epoch end's val score), where the saved checkpoint is exactly resumable.
    """

    def saved(state: Checkpoint) -> None:
        observer.on_checkpoint(save(state))  # as saved: with the run's spending

    while ckpt.state is RunState.RUNNING and ckpt.epoch <= ctx.config.epochs and not _patience_out(ctx, ckpt):
        steps = plan_steps(ctx.train_units, ctx.config.batch_size, seed=ctx.config.seed, epoch=ckpt.epoch)
        while ckpt.step < len(steps):
            check_stop()
            observer.on_step(ckpt, len(steps))
            ckpt = await run_step(ctx, ws, ckpt, steps[ckpt.step], save=saved, before_decision=check_stop)
            saved(ckpt)
        if ckpt.epoch == ctx.config.epochs:  # the last epoch's accepts get its momentum and score
            ckpt = await _drain(ctx, ws, ckpt, saved, check_stop)
        if ckpt.epoch_end_done < ckpt.epoch:
            ckpt = await end_epoch(ctx, ws, ckpt, save=saved, check_stop=check_stop)
            saved(ckpt)
        if not _patience_out(ctx, ckpt):
            ckpt = ckpt.model_copy(update={"epoch": ckpt.epoch + 1, "step": 0, "accepted_this_epoch": {}})
            saved(ckpt)
    ckpt = await _drain(ctx, ws, ckpt, saved, check_stop)  # after patience ran out
    if ckpt.state is RunState.RUNNING:
        ckpt = ckpt.model_copy(update=_ended(ctx, ckpt))
        saved(ckpt)
    return ckpt


def _ended(ctx: TrainContext, ckpt: Checkpoint) -> dict[str, object]:
    """The state a run ends in, and why. The patience reason is said again here: a resume clears
    the stop reason its interruption left, so one resumed in the drain after patience ran out
    would otherwise end ``stopped_early`` with none."""
    if not _patience_out(ctx, ckpt):
        return {"state": RunState.FINISHED}
    return {"state": RunState.STOPPED_EARLY, "stop_reason": patience_reason(ckpt.epochs_without_improvement)}


def _patience_out(ctx: TrainContext, ckpt: Checkpoint) -> bool:
    return ckpt.epochs_without_improvement >= ctx.config.early_stop_patience


async def _drain(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    saved: Callable[[Checkpoint], None],
    check_stop: Callable[[], None],
) -> Checkpoint:
    """Evidence rounds, no new proposals, until no test is open: the budget drives the run."""
    while ckpt.open:
        check_stop()
        cursor = _drain_cursor(ctx, ckpt)
        ckpt = await evidence_round(ctx, ws, ckpt, cursor=cursor, save=saved, before_decision=check_stop)
        ckpt = ckpt.model_copy(update={"drain_rounds": ckpt.drain_rounds + 1})
        saved(ckpt)
    return ckpt


def _drain_cursor(ctx: TrainContext, ckpt: Checkpoint) -> dict[str, int]:
    """Rounds after the steps count on as steps of the last epoch run (past its planned steps)."""
    epoch = min(ckpt.epoch, ctx.config.epochs)
    steps = plan_steps(ctx.train_units, ctx.config.batch_size, seed=ctx.config.seed, epoch=epoch)
    return {"epoch": epoch, "step": len(steps) + ckpt.drain_rounds}
