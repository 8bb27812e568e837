"""How the loop ends a run, at its seam: ``train_epochs`` over a checkpoint with nothing left to run
(no step, no open test), so only its end is exercised, in milliseconds."""

from __future__ import annotations

from pathlib import Path

from loop_support import Spending
from unit_support import FakeContext, never, workspace

from skillharness.train.loop.epoch_end import patience_reason
from skillharness.train.loop.epochs import train_epochs
from skillharness.train.loop.training import TrainRequest, _prepare
from skillharness.train.state.checkpoint import Checkpoint, RunState


async def _end(ctx: FakeContext, ws_path: Path, ckpt: Checkpoint) -> tuple[Checkpoint, Spending]:
    ws, _ = workspace(ws_path)
    observer = Spending()
    ended = await train_epochs(ctx.typed(), ws, ckpt, save=lambda c: c, check_stop=never, observer=observer)
    return ended, observer


async def test_a_run_resumed_in_the_drain_after_patience_ran_out_ends_with_its_reason(
    tmp_path: Path,
) -> None:
    """Issue: the epoch end said why the run stops, a budget stop in the drain that follows wrote
    its own reason, and the resume cleared it: the run ended ``stopped_early`` with no reason."""
    ctx = FakeContext(train={"epochs": 5, "early_stop_patience": 2})
    folder = tmp_path / "run"
    folder.mkdir()
    # As the epoch end of epoch 3 left it, then as a budget stop in the drain marked it.
    Checkpoint(
        run_id="t-unit",
        baseline_run_id="t-unit.baseline",
        epoch=3,
        epoch_end_done=3,
        epochs_without_improvement=2,
        state=RunState.INTERRUPTED,
        stop_reason="call budget reached (40 ≥ 40, every invocation of the run)",
    ).save(folder)
    request = TrainRequest(run_id="t-unit", folder=folder, resume=True)
    _, resumed = _prepare(request, workspace(tmp_path / "initial")[1])
    assert (resumed.state, resumed.stop_reason) == (RunState.RUNNING, "")
    ended, observer = await _end(ctx, tmp_path, resumed)
    assert ended.state is RunState.STOPPED_EARLY
    assert ended.stop_reason == patience_reason(2) == "no val improvement for 2 epoch(s)"
    assert observer.saved[-1] == ended


async def test_a_run_that_ran_every_epoch_finishes_and_keeps_the_reason_it_has(tmp_path: Path) -> None:
    ctx = FakeContext(train={"epochs": 2, "early_stop_patience": 3})
    ckpt = Checkpoint(
        run_id="t-unit", baseline_run_id="t-unit.baseline", epoch=3, epochs_without_improvement=1
    )
    ended, observer = await _end(ctx, tmp_path, ckpt)
    assert (ended.state, ended.stop_reason) == (RunState.FINISHED, "")
    assert observer.saved == [ended]


async def test_a_run_that_has_ended_is_left_as_it_is(tmp_path: Path) -> None:
    ctx = FakeContext(train={"epochs": 2, "early_stop_patience": 1})
    ckpt = Checkpoint(
        run_id="t-unit",
        baseline_run_id="t-unit.baseline",
        state=RunState.FINISHED,
        epochs_without_improvement=4,
    )
    ended, observer = await _end(ctx, tmp_path, ckpt)
    assert ended == ckpt
    assert observer.saved == []
