"""A run's frame-decoding processes end with the run, however it ends (issue: training under hostile
endpoints and restarts, item 5): SIGKILLed runs left their forkserver, resource tracker and decode
workers running forever, re-parented to init."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from infer_support import Bench, write_config

from proc_support import Proc, children, descendants, end, survivors
from skillharness.sim import LatencyConfig, SimConfig, SimServer

# Replies slow enough that the run is still going when its first frames are being decoded.
_SLOW_WORLD = SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.1, per_token_s=0.0, jitter_s=0.0))


def _infer(tmp_path: Path, bench: Bench, sim: SimServer, run_id: str, pool: str) -> subprocess.Popen[bytes]:
    """``skillharness infer`` in its own process; its stderr goes to a file, not a pipe, which a
    surviving child would hold open."""
    config = write_config(tmp_path / "exp.yaml", bench, sim, concurrency=2)
    args = ["infer", "--config", str(config), "--pool", pool, "--run-id", run_id]
    with (tmp_path / "stderr.txt").open("wb") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "skillharness.cli", *args], stdout=subprocess.DEVNULL, stderr=stderr
        )


def _tree_once_decoding(run: subprocess.Popen[bytes], timeout_s: float = 120) -> set[Proc]:
    """The run's process tree, recorded as soon as its forkserver has forked a decode worker.

    A worker is forked for a frame request already queued, so at that moment it is decoding.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and run.poll() is None:
        tree = descendants(run.pid)
        if any("forkserver" in p.args and children(p.pid) for p in tree):
            return tree | descendants(run.pid)
        time.sleep(0.02)
    raise AssertionError(f"the run never started a decode worker (exit {run.poll()})")


def _assert_none_survive(tree: set[Proc], what: str) -> None:
    left = survivors(tree)
    end(left)
    assert left == [], f"outlived {what}: {left}"


@pytest.mark.slow
def test_p5_a_run_killed_mid_decode_leaves_no_process_behind(tmp_path: Path, bench: Bench) -> None:
    with SimServer(_SLOW_WORLD, questions=bench.questions) as sim:
        run = _infer(tmp_path, bench, sim, "killed", "all")
        try:
            tree = _tree_once_decoding(run)
            assert run.poll() is None, "the run ended before it could be killed"
            os.kill(run.pid, signal.SIGKILL)
            assert run.wait(timeout=30) == -signal.SIGKILL
        finally:
            run.kill()
            run.wait()
    assert any("resource_tracker" in p.args for p in tree), tree
    assert sum("forkserver" in p.args for p in tree) >= 2, tree  # the server and a worker
    _assert_none_survive(tree, "the SIGKILLed run")


@pytest.mark.slow
def test_p5_a_finished_run_leaves_no_process_behind(tmp_path: Path, bench: Bench) -> None:
    with SimServer(_SLOW_WORLD, questions=bench.questions) as sim:
        run = _infer(tmp_path, bench, sim, "finished", "val")
        try:
            tree = _tree_once_decoding(run)
            code = run.wait(timeout=300)
        finally:
            run.kill()
            run.wait()
    assert code == 0, (tmp_path / "stderr.txt").read_text()
    _assert_none_survive(tree, "the finished run")
