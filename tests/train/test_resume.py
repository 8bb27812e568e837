"""Exact resume: kill -9 at random moments (audit P1-7), momentum once (audit P0-6), faults."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from loop_support import MOMENTUM_ON, decisions, loop_config, train_once

from bench_support import Bench
from skillharness.config import load_config
from skillharness.errors import ConfigError
from skillharness.sim import FaultConfig, FaultKind, SimServer, decisive_world
from skillharness.skills import VersionReason, Workspace
from skillharness.store import GateDecisionRow, RunReader
from skillharness.store.engine import parse_store_url
from skillharness.train.loop.training import run_folder
from skillharness.train.state.checkpoint import Checkpoint, RunState

pytestmark = pytest.mark.slow


def _train_cmd(config: Path, run_id: str, resume: bool) -> list[str]:
    flag = ["--resume", run_id] if resume else ["--run-id", run_id]
    return [
        sys.executable,
        "-m",
        "skillharness.cli",
        "train",
        "--config",
        str(config),
        "--skip-preflight",
        *flag,
    ]


def _final_hash(config: Path, run_id: str) -> str:
    folder = run_folder(config.parent, run_id)
    ckpt = Checkpoint.load(folder)
    return Workspace.open(folder / "workspace").load(ckpt.version).bundle_hash


def _no_duplicates(config: Path) -> None:
    settings = load_config(config)
    with RunReader(settings.store) as reader, reader.engine.connect() as conn:
        for table, key in (
            ("predictions", "run_id, question_id, sample_idx"),
            ("traces", "run_id, question_id, sample_idx, step_idx"),
            ("gate_observations", "train_run_id, gate_index, draw_index"),
            ("gate_decisions", "train_run_id, gate_index"),
            ("dual_metric", "train_run_id, epoch, step, target"),
        ):
            rows = conn.exec_driver_sql(
                f"SELECT {key}, COUNT(*) FROM {table} GROUP BY {key} HAVING COUNT(*) > 1"
            )
            assert rows.fetchall() == [], table


def _wait_for_open_tests(folder: Path, child: subprocess.Popen[bytes]) -> None:
    """Return once the run's checkpoint holds open tests (or the run has ended)."""
    deadline = time.monotonic() + 120
    while child.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(ConfigError, OSError):
            if Checkpoint.load(folder).open:
                return
        time.sleep(0.02)


def _stored_predictions(config: Path) -> int:
    """Answers stored so far in the store of ``config`` (every child run): the run's progress, read
    as a bystander would (a run killed mid-write leaves the store readable)."""
    path = parse_store_url(load_config(config).store.url).sqlite_path
    if path is None or not path.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM predictions").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not written yet
        return 0


def _wait_for_progress(config: Path, child: subprocess.Popen[bytes], answers: int) -> None:
    """Return once at least ``answers`` answers are stored, and at least one more than now (or the
    run has ended).

    The kill moments are counted in the run's own progress, not in seconds: on a loaded machine a
    wall-clock moment lands in start-up more often, and fewer kills then cut the run short.
    """
    target = max(answers, _stored_predictions(config) + 1)
    deadline = time.monotonic() + 300
    while child.poll() is None and time.monotonic() < deadline:
        if _stored_predictions(config) >= target:
            return
        time.sleep(0.02)


def test_kill_minus_9_twenty_times_resumes_exactly(train_bench: Bench, experiment: Path) -> None:
    """A run killed at 20 random moments ends with the uninterrupted run's bundle and decisions.

    The kills come at twenty answer counts drawn over the first nine tenths of the reference run
    (each attempt at least one answer past the last), so that every attempt makes progress and
    twenty kills fit in the run however loaded the machine is."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        reference = loop_config(experiment / "ref", train_bench, sim, epochs=1)
        ref = subprocess.run(
            _train_cmd(reference, "t-ref", False), capture_output=True, timeout=600, check=False
        )
        assert ref.returncode == 0, ref.stderr.decode()[-2000:]
        total = _stored_predictions(reference)
        killed = loop_config(experiment / "kill", train_bench, sim, epochs=1)
        rng = random.Random(20)
        moments = sorted(rng.sample(range(1, total * 9 // 10), 20))
        kills = 0
        held_open = False  # some kill left tests open in the checkpoint: their resume is exercised
        resume = False
        for _ in range(40):  # bounded: each attempt either is killed or finishes
            child = subprocess.Popen(
                _train_cmd(killed, "t-kill", resume), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            if kills < 20:
                if not held_open:  # one kill is aimed at a checkpoint with tests open
                    _wait_for_open_tests(run_folder(killed.parent, "t-kill"), child)
                else:
                    _wait_for_progress(killed, child, moments[kills])
                    time.sleep(rng.uniform(0.0, 0.05))  # anywhere inside the next write
                if child.poll() is None:
                    os.kill(child.pid, signal.SIGKILL)
                    child.wait()
                    kills += 1
                    with contextlib.suppress(ConfigError):  # killed before its first checkpoint
                        saved = Checkpoint.load(run_folder(killed.parent, "t-kill"))
                        held_open = held_open or bool(saved.open)
                    resume = (
                        resume or run_folder(killed.parent, "t-kill").joinpath("checkpoint.json").exists()
                    )
                    continue
            child.wait(timeout=600)
            assert child.returncode == 0, child.stderr.read().decode()[-2000:] if child.stderr else ""
            break
        assert Checkpoint.load(run_folder(killed.parent, "t-kill")).state is RunState.FINISHED
    assert kills == 20  # every kill landed inside the run: the test exercised resume twenty times
    assert held_open
    assert _final_hash(killed, "t-kill") == _final_hash(reference, "t-ref")
    assert [r[1:] for r in decisions(killed, "t-kill")] == [r[1:] for r in decisions(reference, "t-ref")]
    _no_duplicates(killed)


_MOMENTUM_CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from pathlib import Path
    from skillharness.config import load_config
    from skillharness.train.state import checkpoint as ckpt_mod
    from skillharness.train.loop.training import TrainRequest, run_folder, run_training

    real_save = ckpt_mod.Checkpoint.save
    def save(self, folder):
        if self.momentum_done:  # the momentum version is committed; die before the checkpoint says so
            os.kill(os.getpid(), signal.SIGKILL)
        real_save(self, folder)
    ckpt_mod.Checkpoint.save = save
    config_path = Path(sys.argv[1])
    config = load_config(config_path)
    request = TrainRequest(run_id="t-mom", folder=run_folder(config_path.parent, "t-mom"))
    asyncio.run(run_training(config, request))
    """
)


async def test_p0_6_slow_momentum_is_idempotent_on_resume(train_bench: Bench, experiment: Path) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=1, momentum={**MOMENTUM_ON, "gated": False})
        child = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", _MOMENTUM_CHILD, str(config)],
            capture_output=True,
            timeout=600,
            check=False,
        )
        assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
        folder = run_folder(config.parent, "t-mom")
        assert Checkpoint.load(folder).momentum_done == []
        before = Workspace.open(folder / "workspace").history()
        assert before[-1].edit.details["cursor"].get("epoch_end")  # the momentum version landed
        outcome = await train_once(config, "t-mom", resume=True)
    history = Workspace.open(folder / "workspace").history()
    momentum = [v for v in history if v.edit.details.get("cursor", {}).get("epoch_end")]
    assert len(momentum) == len({v.edit.details["cursor"]["epoch_end"] for v in momentum})  # one per skill
    landed = [v.version for v in before if v.edit.details.get("cursor", {}).get("epoch_end")]
    assert [v.version for v in momentum][: len(landed)] == landed  # adopted, not made again
    final = Workspace.open(folder / "workspace").load(outcome.checkpoint.version)
    for version in momentum:
        assert version.edit.reason is VersionReason.MOMENTUM
        assert version.edit.target is not None
        skill = final.skill(version.edit.target.name or "")
        assert skill.momentum.count("\n") < 40  # written once, not appended twice
    assert outcome.checkpoint.momentum_done


async def test_training_under_faults_ends_like_the_fault_free_run(
    train_bench: Bench, experiment: Path
) -> None:
    faults = FaultConfig(
        rates={
            FaultKind.TRUNCATE: 0.03,
            FaultKind.RESET: 0.03,
            FaultKind.HTTP_429: 0.03,
            FaultKind.HTTP_503: 0.03,
            FaultKind.VLLM_ERROR_FRAME: 0.03,
        },
        retry_after_s=0.0,
    )
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        clean = loop_config(experiment / "clean", train_bench, sim, epochs=1)
        clean_outcome = await train_once(clean, "t-clean")
    with SimServer(
        decisive_world(5).model_copy(update={"faults": faults}), questions=train_bench.questions
    ) as sim:
        faulty = loop_config(experiment / "faulty", train_bench, sim, epochs=1)
        faulty_outcome = await train_once(faulty, "t-faulty")
        assert sum(sim.stats()["faults"].values()) > 20  # the faults really happened
    assert _final_hash(faulty, "t-faulty") == _final_hash(clean, "t-clean")
    assert faulty_outcome.checkpoint.version == clean_outcome.checkpoint.version
    with RunReader(load_config(faulty).store) as reader:
        assert reader.ledger(GateDecisionRow, train_run_id="t-faulty")
