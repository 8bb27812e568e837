"""`skillharness infer` on a store a demanding user brings: one written by an older skillharness, one
full of a training run's parts, a run id that is already taken."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from infer_support import PACED_WORLD, Bench, write_config

from bench_support import store_runs
from cli_support import run_cli as cli
from skillharness.data import Pool
from skillharness.sim import SimServer
from skillharness.store import RunKind, RunStatus

pytestmark = pytest.mark.sim_world(PACED_WORLD)


def _as_version_3(store: Path) -> None:
    """The store as skillharness wrote it at schema version 3: version 4 only added ``llm_events``."""
    with sqlite3.connect(store) as conn:
        conn.execute("DROP TABLE llm_events")
        conn.execute("UPDATE schema_version SET version = 3 WHERE id = 1")


def _version(store: Path) -> int:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT version FROM schema_version WHERE id = 1").fetchone()[0]


async def _runs(store: Path, sim: SimServer, *runs: dict[str, object]) -> None:
    await store_runs(store, sim, *runs, status=RunStatus.INTERRUPTED)


@pytest.mark.slow
def test_a_resume_on_a_store_of_an_older_schema_continues_the_run(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    store = tmp_path / "runs.sqlite"
    args = ("infer", "--config", str(config), "--pool", "val", "--run-id", "old")
    assert cli(*args).returncode == 0
    _as_version_3(store)
    # The reader refuses an older store ("run any writing command once"); the resume is one.
    resumed = cli(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "already final 12" in " ".join(resumed.stdout.split())
    assert _version(store) == 4


@pytest.mark.slow
async def test_a_taken_run_id_is_refused_up_front_with_advice_that_fits_its_run(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    store = tmp_path / "runs.sqlite"
    await _runs(
        store,
        sim,
        {"run_id": "t1", "kind": RunKind.TRAIN, "pool": Pool.TRAIN},
        {"run_id": "t1.baseline", "parent_run_id": "t1"},
        {"run_id": "mine"},
    )
    part = cli("infer", "--config", str(config), "--pool", "val", "--run-id", "t1.baseline")
    assert part.returncode == 2
    assert "--run-id 't1.baseline': the run store already holds this run (interrupted)" in part.stderr
    assert "part of training run 't1'" in part.stderr
    assert "--resume" not in part.stderr, "infer --resume refuses a training run's part: never advise it"
    own = cli("infer", "--config", str(config), "--pool", "val", "--run-id", "mine")
    assert own.returncode == 2
    assert "continue it with --resume" in own.stderr
    assert "Traceback" not in part.stderr + own.stderr


@pytest.mark.slow
async def test_an_unknown_resume_names_the_latest_infer_runs_not_every_part(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    store = tmp_path / "runs.sqlite"
    parts = [{"run_id": f"t1.g{i:04d}.cand", "kind": RunKind.GATE, "parent_run_id": "t1"} for i in range(30)]
    mine = [{"run_id": f"mine-{i:02d}"} for i in range(12)]
    await _runs(store, sim, {"run_id": "t1", "kind": RunKind.TRAIN, "pool": Pool.TRAIN}, *parts, *mine)
    typo = cli("infer", "--config", str(config), "--pool", "val", "--run-id", "mine-1", "--resume")
    assert typo.returncode == 2
    message = " ".join(typo.stderr.split())
    assert "cannot resume run 'mine-1': the run store holds no such run" in message
    assert "mine-11 (the latest 10 of 12)" in message
    assert "mine-01" not in message
    assert "t1.g0000.cand" not in message
    assert "drop --resume to start a new run" in message


@pytest.mark.slow
def test_a_resume_on_a_store_of_a_newer_schema_says_so_and_no_new_run(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    store = tmp_path / "runs.sqlite"
    args = ("infer", "--config", str(config), "--pool", "val", "--run-id", "new")
    assert cli(*args).returncode == 0
    with sqlite3.connect(store) as conn:
        conn.execute("UPDATE schema_version SET version = 99 WHERE id = 1")
    refused = cli(*args, "--resume")
    assert refused.returncode == 2
    assert "newer than this skillharness knows" in refused.stderr
    assert "drop --resume" not in refused.stderr, "a new run cannot be started in that store either"
