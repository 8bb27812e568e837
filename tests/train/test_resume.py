"""Exact resume: kill -9 at random moments (audit P1-7), momentum once (audit P0-6), faults."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from loop_support import decisions, loop_config, train_once

from bench_support import Bench
from skillharness.config import load_config
from skillharness.errors import ConfigError
from skillharness.sim import FaultConfig, FaultKind, SimServer, decisive_world
from skillharness.skills import VersionReason, Workspace
from skillharness.store import GateDecisionRow, RunReader
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


def test_kill_minus_9_twenty_times_resumes_exactly(train_bench: Bench, experiment: Path) -> None:
    """A run killed at 20 random moments ends with the uninterrupted run's bundle and decisions."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        reference = loop_config(experiment / "ref", train_bench, sim, epochs=1)
        started = time.monotonic()
        ref = subprocess.run(
            _train_cmd(reference, "t-ref", False), capture_output=True, timeout=600, check=False
        )
        whole = time.monotonic() - started  # kill moments are drawn within this machine's run time
        assert ref.returncode == 0, ref.stderr.decode()[-2000:]
        killed = loop_config(experiment / "kill", train_bench, sim, epochs=1)
        rng = random.Random(20)
        kills = 0
        held_open = False  # some kill left tests open in the checkpoint: their resume is exercised
        resume = False
        for _ in range(40):  # bounded: each attempt either is killed or finishes
            child = subprocess.Popen(
                _train_cmd(killed, "t-kill", resume), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            if (
                not resume
            ):  # the first kill comes once the run exists (before that, there is nothing to resume)
                checkpoint = run_folder(killed.parent, "t-kill") / "checkpoint.json"
                deadline = time.monotonic() + 120
                while not checkpoint.exists() and time.monotonic() < deadline and child.poll() is None:
                    time.sleep(0.05)
            resume = True
            if kills < 20:
                try:
                    if not held_open:  # one kill is aimed at a checkpoint with tests open
                        _wait_for_open_tests(run_folder(killed.parent, "t-kill"), child)
                        child.wait(timeout=0.01)
                    else:
                        child.wait(timeout=rng.uniform(0.3, 0.3 * whole))
                except subprocess.TimeoutExpired:
                    os.kill(child.pid, signal.SIGKILL)
                    child.wait()
                    kills += 1
                    with contextlib.suppress(ConfigError):  # killed before its first checkpoint
                        saved = Checkpoint.load(run_folder(killed.parent, "t-kill"))
                        held_open = held_open or bool(saved.open)
                    continue
            else:
                child.wait(timeout=600)
            assert child.returncode == 0, child.stderr.read().decode()[-2000:] if child.stderr else ""
            break
        assert Checkpoint.load(run_folder(killed.parent, "t-kill")).state is RunState.FINISHED
    assert kills >= 10  # most attempts were cut short: the test exercised resume
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
        config = loop_config(experiment, train_bench, sim, epochs=1, momentum={"gated": False})
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
