"""``train --baseline RUN``: a reused baseline must have been answered under this run's settings."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from loop_support import loop_config

from bench_support import Bench
from skillharness.config import load_config
from skillharness.data import Pool
from skillharness.errors import ConfigError, StoreError
from skillharness.infer import load_job, run_inference
from skillharness.sim import SimServer, decisive_world
from skillharness.store import RunReader
from skillharness.train.loop.training import TrainRequest, run_folder, run_training
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.checkpoint import Checkpoint

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def _agent_changed(config: Path, **agent: object) -> Iterator[None]:
    """``config`` with ``agent`` settings changed inside the block, restored after it."""
    original = config.read_text()
    doc = yaml.safe_load(original)
    doc["agent"].update(agent)
    config.write_text(yaml.safe_dump(doc))
    try:
        yield
    finally:
        config.write_text(original)


async def _infer_val(config: Path, run_id: str, **agent: object) -> None:
    """The initial bundle on val as an infer run, with ``agent`` settings changed for this run only."""
    with _agent_changed(config, **agent):
        await run_inference(load_job(load_config(config), pool=Pool.VAL, run_id=run_id, resume=False))


async def _train(config: Path, run_id: str, baseline: str | None, *, resume: bool = False) -> None:
    """Up to the baseline: the stop file is there from the start, so the loop stops before a step."""
    folder = run_folder(config.parent, run_id)
    stop = config.parent / f"{run_id}.STOP"
    stop.write_text("")
    request = TrainRequest(run_id=run_id, folder=folder, baseline_run=baseline, stop_file=stop, resume=resume)
    await run_training(load_config(config), request)


async def test_baseline_reuse_compares_the_agent_settings(train_bench: Bench, experiment: Path) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=1)
        await _infer_val(config, "base-frames", initial_frames=4)
        await _infer_val(config, "base-same")
        with pytest.raises(StoreError, match=r"agent\.initial_frames: stored 4, now 8") as refused:
            await _train(config, "t-other", "base-frames")
        assert refused.value.context["fields"] == ["agent.initial_frames"]
        with pytest.raises(TrainingStopped, match="stop file"):
            await _train(config, "t-same", "base-same")
    ckpt = Checkpoint.load(run_folder(config.parent, "t-same"))
    assert ckpt.baseline_run_id == "base-same"
    assert ckpt.best_score is not None  # the reused baseline was read and scored
    with RunReader(load_config(config).store) as reader:
        children = {r.run_id for r in reader.children("t-same")}
    assert "t-same.baseline" not in children  # reused, not run afresh


async def test_a_refused_baseline_loses_no_run_id(train_bench: Bench, experiment: Path) -> None:
    """The checkpoint is saved before the baseline is read: until it is scored, a resume may name
    another --baseline, or none to run it afresh."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=1)
        await _infer_val(config, "base-same")
        for run_id in ("t-typo", "t-typo-2"):
            with pytest.raises(StoreError, match="no run 'infer-typo'"):
                await _train(config, run_id, "infer-typo")
        with pytest.raises(TrainingStopped, match="stop file"):
            await _train(config, "t-typo", "base-same", resume=True)
        with pytest.raises(TrainingStopped, match="stop file"):
            await _train(config, "t-typo-2", None, resume=True)
    reused = Checkpoint.load(run_folder(config.parent, "t-typo"))
    assert reused.baseline_run_id == "base-same"
    assert reused.best_score is not None
    afresh = Checkpoint.load(run_folder(config.parent, "t-typo-2"))
    assert afresh.baseline_run_id == "t-typo-2.baseline"  # afresh: the stop file stops it as it starts
    with RunReader(load_config(config).store) as reader:
        assert "t-typo-2.baseline" in {r.run_id for r in reader.children("t-typo-2")}


async def test_a_baseline_that_is_no_infer_run_is_refused_by_its_kind(
    train_bench: Bench, experiment: Path
) -> None:
    """A training run given as --baseline was refused with every train.* setting listed as
    differing ("stored 8, now (not set)", 60 of them), which named no fault a user can fix."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=1)
        with pytest.raises(TrainingStopped, match="stop file"):
            await _train(config, "t-first", None)
        with pytest.raises(ConfigError) as refused:
            await _train(config, "t-second", "t-first")
    assert str(refused.value) == (
        "--baseline t-first is a train run, not an infer run of the initial bundle on val "
        "(skillharness infer --pool val); omit --baseline to run the baseline afresh"
    )
