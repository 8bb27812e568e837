"""``skillharness train`` as a user runs it, in a subprocess: its output away from a terminal, a
mistyped ``--resume``, a budget stop and ``--max-calls``, and Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from loop_support import loop_config

from bench_support import Bench
from cli_support import run_cli
from skillharness.commands.train import BUDGET_SETTINGS
from skillharness.config import load_config
from skillharness.errors import StoreError
from skillharness.sim import SimServer, decisive_world
from skillharness.store import RunMetric, RunReader, RunStatus
from skillharness.train.loop.training import run_folder
from skillharness.train.state.budget import BUDGET_REASONS
from skillharness.train.state.checkpoint import Checkpoint, RunState

pytestmark = pytest.mark.slow


def _statuses(config: Path) -> dict[str, str]:
    """Each stored run's status (none before the store exists)."""
    try:
        with RunReader(load_config(config).store) as reader:
            return {r.run_id: r.status.value for r in reader.runs()}
    except StoreError:
        return {}


def _train(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("train", "--config", str(config), "--skip-preflight", *args, timeout=600)


def test_every_budget_stop_reason_names_the_setting_to_raise() -> None:
    assert set(BUDGET_SETTINGS) == BUDGET_REASONS
    assert all(setting.startswith("train.budget.") for setting in BUDGET_SETTINGS.values())


def test_a_budget_stop_names_the_limit_and_max_calls_raises_it_on_resume(
    train_bench: Bench, experiment: Path
) -> None:
    """Issue items 1 and 5: with stdout a pipe, one plain line per step or decision (calls, budget,
    ETA); a budget stop says which setting to raise, and ``--max-calls`` raises it on resume."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=1)
        stopped = _train(config, "--run-id", "t-budget", "--max-calls", "150")
        assert stopped.returncode == 3, stopped.stdout[-2000:] + stopped.stderr[-2000:]
        said = " ".join(stopped.stdout.split())
        assert "raise train.budget.max_calls" in said
        assert "--resume t-budget --max-calls 300" in said
        # One entry per step or decision, its continuation lines (indented) within the width.
        entries = re.findall(r"^train t-budget · epoch.*(?:\n  .*)*", stopped.stdout, flags=re.MULTILINE)
        assert len(entries) >= 2, stopped.stdout[-3000:]
        assert all("/ 150 calls" in entry and "ETA" in entry for entry in entries), entries
        width = int(os.environ.get("COLUMNS", "80"))
        assert all(len(line) <= width for entry in entries for line in entry.splitlines()), entries
        folder = run_folder(config.parent, "t-budget")
        assert Checkpoint.load(folder).state is RunState.INTERRUPTED
        # The budget is operational: a resume with another limit is no other run, so not refused.
        resumed = _train(config, "--resume", "t-budget", "--max-calls", "100000")
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    assert Checkpoint.load(folder).state.ended
    assert _statuses(config)["t-budget"] == RunStatus.FINISHED.value
    # Issue item 6: one cost count. The usage the report shows is the run's, both invocations', and
    # agrees with the budget it spent (model calls are calls less cache hits).
    with RunReader(load_config(config).store) as reader:
        metrics = {m.name: m.value for m in reader.ledger(RunMetric, run_id="t-budget")}
    spent = metrics["budget"]["spent"]
    assert spent["calls"] >= 150
    usage = metrics["usage"]
    assert sum(u["calls"] - u["cache_hits"] for u in usage.values()) == spent["calls"]


def test_a_mistyped_resume_is_refused_naming_the_runs_and_run_id_starts_it(
    train_bench: Bench, experiment: Path
) -> None:
    """Issue item 2: ``--resume`` of an unknown id started a new run, as if it resumed one."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=1)
        run_folder(config.parent, "t-real").mkdir(parents=True)  # a run of this experiment
        before = _statuses(config)
        typo = _train(config, "--resume", "t-rael")
        assert typo.returncode == 2, typo.stdout[-2000:] + typo.stderr[-2000:]
        said = " ".join(typo.stderr.split())
        assert "--resume t-rael: no run of that id" in said
        assert "known: t-real" in said
        assert "skillharness runs list --config" in said
        assert "--run-id t-rael" in said
        assert not run_folder(config.parent, "t-rael").exists()
        assert _statuses(config) == before
        # The requeue form: --resume with --run-id starts the run when it is new.
        started = _train(config, "--resume", "t-new", "--run-id", "t-new", "--max-calls", "1")
    assert started.returncode == 3, started.stdout[-2000:] + started.stderr[-2000:]
    assert run_folder(config.parent, "t-new").is_dir()


def _wait_for(config: Path, run_id: str, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    """Until the store holds ``run_id`` running (or the process ended, or the time is up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if _statuses(config).get(run_id) == RunStatus.RUNNING.value:
            return
        time.sleep(0.1)
    raise AssertionError(f"{run_id} never ran")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background shell may have ignored it


def test_ctrl_c_in_the_baseline_ends_cleanly_and_leaves_every_run_interrupted(
    train_bench: Bench, experiment: Path
) -> None:
    """Issue item 8: Ctrl-C printed tracebacks and left the run and its baseline ``running``."""
    with SimServer(decisive_world(5, latency_s=0.3), questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=1)
        doc = yaml.safe_load(config.read_text())
        doc["agent"]["vision"] = True  # frames decoded in worker processes: Ctrl-C reaches them too
        config.write_text(yaml.safe_dump(doc))
        args = ["train", "--config", str(config), "--skip-preflight", "--run-id", "t-int"]
        # A session of its own: the signal goes to the whole group, as a terminal's Ctrl-C does.
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillharness.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=_default_sigint,
        )
        try:
            _wait_for(config, "t-int.baseline", proc)
            time.sleep(0.5)
            os.killpg(proc.pid, signal.SIGINT)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, out[-2000:] + err[-2000:]
    assert "Traceback" not in out + err, err[-3000:]
    assert "KeyboardInterrupt" not in out + err
    said = " ".join(out.split())
    assert "--resume t-int" in said
    assert (out + err).count("interrupted") == 1  # one line says it stopped and how to resume
    statuses = _statuses(config)
    assert statuses["t-int"] == RunStatus.INTERRUPTED.value, statuses
    assert statuses["t-int.baseline"] == RunStatus.INTERRUPTED.value, statuses


# The frame-decoding pool's owner, its workers idle (as between a run's decodes), waiting for Ctrl-C.
_POOL_OWNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from skillharness.video.config import FramesConfig
    from skillharness.video.workers import DecodePool

    pool = DecodePool(FramesConfig(cache_enabled=False), workers=2)
    list(pool.map_uniform([Path(sys.argv[1]) / "missing.mp4"] * 2, 4))  # the workers started
    print("ready", flush=True)
    try:
        time.sleep(60)
    except KeyboardInterrupt:
        pool.close()
        print("stopped", flush=True)
    """
)


def test_ctrl_c_is_the_decode_pools_owners_to_handle_not_its_workers(tmp_path: Path) -> None:
    """Issue item 8: each worker took the terminal's SIGINT and printed a traceback of its own."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _POOL_OWNER, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "stopped" in out, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert "KeyboardInterrupt" not in err


def test_the_hint_after_a_stop_file_names_the_file_to_remove(tmp_path: Path) -> None:
    """Left in place, the stop file stops the resume the hint gives at once, every time."""
    from skillharness.commands.train import _resume_hint
    from skillharness.config import Config
    from skillharness.train import TrainRequest

    stop = tmp_path / "runs" / "r" / "STOP"
    request = TrainRequest(run_id="r", folder=stop.parent, stop_file=stop)
    hint = _resume_hint(Config(), tmp_path / "e.yaml", request, "stop_file")
    resume = f"skillharness train --config {tmp_path / 'e.yaml'} --resume r"
    assert hint == f"remove the stop file {stop}, then resume with: {resume}"
    assert "remove" not in _resume_hint(Config(), tmp_path / "e.yaml", request, "interrupted")
