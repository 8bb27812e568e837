"""Training through a hostile endpoint, then through it again under repeated SIGKILL.

The bar: every fault kind a gateway or model server shows (503, 429 with Retry-After, streams cut
with and without a delta before the cut, SSE error frames, a slow first byte, a text/plain 200,
HTML 502/504 pages), on every role, and a scheduler that kills the job at random moments and
requeues the same command line. The run ends with the clean run's bundle and gate decisions, no
duplicate rows, and no process of its tree left running.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from loop_support import decisions, loop_config
from test_resume import _final_hash, _no_duplicates

from bench_support import Bench
from proc_support import Proc, descendants, end, survivors
from skillharness.sim import FaultConfig, FaultKind, SimServer, decisive_world
from skillharness.train.loop.training import run_folder
from skillharness.train.state.checkpoint import CHECKPOINT_FILE, Checkpoint, RunState

pytestmark = pytest.mark.slow

# 15 % of requests get a fault, every kind alike, on every role.
_KINDS = (
    FaultKind.HTTP_503,
    FaultKind.HTTP_429,
    FaultKind.TRUNCATE,
    FaultKind.RESET,
    FaultKind.VLLM_ERROR_FRAME,
    FaultKind.LLAMACPP_ERROR_FRAME,
    FaultKind.SLOW_FIRST_BYTE,
    FaultKind.TEXT_PLAIN_200,
    FaultKind.HTML_502,
    FaultKind.HTML_504,
)
HOSTILE = FaultConfig(
    rates=dict.fromkeys(_KINDS, 0.15 / len(_KINDS)),
    retry_after_s=0.2,
    slow_first_byte_s=0.3,
    cut_after_chunks=1,  # a cut stream carries a delta first: a decoy the client must not keep
)
FAST_RETRY = {"base_delay_s": 0.01, "max_delay_s": 0.1}


def _command(config: Path, run_id: str) -> list[str]:
    """What a scheduler requeues: the same line for the first start and every restart."""
    cli = [sys.executable, "-m", "skillharness.cli", "train", "--config", str(config)]
    return [*cli, "--skip-preflight", "--resume", run_id, "--run-id", run_id]


def _config(folder: Path, bench: Bench, sim: SimServer) -> Path:
    path = loop_config(folder, bench, sim, epochs=1)
    doc = yaml.safe_load(path.read_text())
    doc.setdefault("llm", {})["retry"] = FAST_RETRY
    path.write_text(yaml.safe_dump(doc))
    return path


def _run_to_end(config: Path, run_id: str) -> float:
    """Run to the end without interruption; returns the wall time it took."""
    start = time.monotonic()
    done = subprocess.run(_command(config, run_id), capture_output=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return time.monotonic() - start


def _checkpoint_bytes(config: Path, run_id: str) -> bytes:
    path = run_folder(config.parent, run_id) / CHECKPOINT_FILE
    return path.read_bytes() if path.exists() else b""


def _killed_until_done(
    config: Path, run_id: str, kills: int, seed: int, span: float
) -> tuple[int, set[Proc]]:
    """Start the run, SIGKILL it ``kills`` times (the first during start-up), requeue the same
    line after each, then let it finish; returns the kills and every process seen.

    After the first, each kill waits until the restarted run has checkpointed new progress, then
    a random further moment (a fraction of ``span``, the uninterrupted run's wall time). So on a
    fast machine and a loaded one alike the kills land inside the run, between and during steps."""
    rng = random.Random(seed)
    seen: set[Proc] = set()
    done = 0
    for attempt in range(kills + 1):
        before = _checkpoint_bytes(config, run_id)
        child = subprocess.Popen(_command(config, run_id), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if attempt < kills:
            extra = rng.uniform(0.0, 0.1) * span
            deadline = time.monotonic() + 0.5 if attempt == 0 else None
            while child.poll() is None:
                seen |= descendants(child.pid)
                if deadline is None and _checkpoint_bytes(config, run_id) != before:
                    deadline = time.monotonic() + extra
                if deadline is not None and time.monotonic() >= deadline:
                    break
                time.sleep(0.05)
            if child.poll() is None:
                os.kill(child.pid, signal.SIGKILL)
                child.wait()
                done += 1
                continue
        child.wait(timeout=900)
        assert child.returncode == 0, child.stderr.read().decode()[-3000:] if child.stderr else ""
        break
    return done, seen


def test_training_through_a_hostile_endpoint_and_repeated_sigkill_ends_like_the_clean_run(
    train_bench: Bench, experiment: Path
) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        clean = _config(experiment / "clean", train_bench, sim)
        _run_to_end(clean, "t-clean")
    world = decisive_world(5).model_copy(update={"faults": HOSTILE})
    with SimServer(world, questions=train_bench.questions) as sim:
        hostile = _config(experiment / "hostile", train_bench, sim)
        span = _run_to_end(hostile, "t-hostile")
        faults_hostile = dict(sim.stats()["faults"])
        killed = _config(experiment / "killed", train_bench, sim)
        kills, seen = _killed_until_done(killed, "t-killed", kills=6, seed=27, span=span)
        faults_total = dict(sim.stats()["faults"])
    assert set(faults_hostile) == {k.value for k in _KINDS}, faults_hostile  # every kind happened
    assert sum(faults_total.values()) > sum(faults_hostile.values())
    assert kills >= 4  # most attempts were cut short, the first one during start-up
    reference = decisions(clean, "t-clean")
    assert reference
    for config, run_id in ((hostile, "t-hostile"), (killed, "t-killed")):
        assert Checkpoint.load(run_folder(config.parent, run_id)).state is RunState.FINISHED
        assert _final_hash(config, run_id) == _final_hash(clean, "t-clean")
        assert [r[1:] for r in decisions(config, run_id)] == [r[1:] for r in reference]
        assert not any(r[2] == "reject_inertia" and "INFRA" in str(r) for r in decisions(config, run_id))
        _no_duplicates(config)
    left = survivors(seen)
    end(left)
    assert left == [], f"processes of a killed run still run: {left}"
