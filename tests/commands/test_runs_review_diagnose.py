"""`skillharness diagnose` on runs it must refuse (a training run, a test-pool run) and at a pipe's
80 columns."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from bench_support import Bench, experiment_doc, store_runs
from cli_support import run_cli
from skillharness.data import Pool
from skillharness.sim import LatencyConfig, SimConfig, SimServer
from skillharness.store import RunKind, RunStatus

pytestmark = pytest.mark.sim_world(
    SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.0, per_token_s=0.0, jitter_s=0.0))
)


def _config(folder: Path, bench: Bench, sim: SimServer) -> Path:
    path = folder / "exp.yaml"
    doc = experiment_doc(folder, bench, model=sim.model_name, base_url=sim.base_url, concurrency=4)
    path.write_text(yaml.safe_dump(doc))
    return path


async def _stored(store: Path, sim: SimServer, *runs: dict[str, object]) -> None:
    await store_runs(store, sim, *runs, status=RunStatus.FINISHED)


@pytest.mark.slow
async def test_a_training_run_and_a_test_pool_run_are_refused_before_the_bundle(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = _config(tmp_path, bench, sim)
    await _stored(
        tmp_path / "runs.sqlite",
        sim,
        {"run_id": "t1", "kind": RunKind.TRAIN, "pool": Pool.TRAIN},
        {"run_id": "e1.final", "kind": RunKind.EVAL, "pool": Pool.TEST, "parent_run_id": "t1"},
    )
    # A training run holds no answers of its own: its waterfall would read "no wrong answer".
    train = await asyncio.to_thread(run_cli, "diagnose", "--config", str(config), "--run", "t1")
    assert train.returncode == 2
    assert "run 't1' is a training run" in train.stderr
    assert "t1.baseline" in train.stderr
    holdout = await asyncio.to_thread(run_cli, "diagnose", "--config", str(config), "--run", "e1.final")
    assert holdout.returncode == 2
    assert "answered the test pool" in holdout.stderr, "not a bundle mismatch the user would chase first"
    assert "Traceback" not in train.stderr + holdout.stderr


@pytest.mark.slow
def test_the_waterfall_fits_a_pipes_80_columns(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    config = _config(tmp_path, bench, sim)
    ran = run_cli("infer", "--config", str(config), "--pool", "val", "--run-id", "v")
    assert ran.returncode == 0, ran.stderr
    shown = run_cli("diagnose", "--config", str(config), "--run", "v")
    assert shown.returncode == 0, shown.stderr
    assert "diagnosis of v" in shown.stdout
    wide = [line for line in shown.stdout.splitlines() if len(line) > 80]
    assert not wide, wide
    for title in ("wrong", "infra", "parse", "defect", "lapse", "uncertain", "failed judge"):
        assert title in shown.stdout, title
