"""Resume and interruption edges of `skillharness infer`: Ctrl-C, unknown runs, changed inputs."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from infer_support import PACED_WORLD, Bench, write_config

from bench_support import store_runs
from cli_support import run_cli as cli
from skillharness.data import Pool
from skillharness.sim import LatencyConfig, SimConfig, SimServer
from skillharness.store import RunKind, RunReader, RunStatus

pytestmark = pytest.mark.sim_world(PACED_WORLD)


def _predictions(store: Path, run_id: str) -> int:
    try:
        with sqlite3.connect(store) as conn:
            return conn.execute("SELECT COUNT(*) FROM predictions WHERE run_id = ?", (run_id,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background shell may have ignored it


@pytest.mark.slow
def test_ctrl_c_marks_the_run_interrupted_exits_130_and_resume_completes(
    tmp_path: Path, bench: Bench
) -> None:
    slow = SimServer(
        SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.2, per_token_s=0.0, jitter_s=0.0)),
        questions=bench.questions,
    )
    with slow:
        config = write_config(tmp_path / "exp.yaml", bench, slow, concurrency=2)
        store = tmp_path / "runs.sqlite"
        args = ["infer", "--config", str(config), "--pool", "val", "--run-id", "ctrl-c"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillharness.cli", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_default_sigint,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and _predictions(store, "ctrl-c") < 2:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        with RunReader(f"sqlite:///{store}") as reader:
            assert reader.run("ctrl-c").status is RunStatus.INTERRUPTED
        partial = _predictions(store, "ctrl-c")
        resumed = cli(*args, "--resume")
        assert resumed.returncode == 0, resumed.stderr
        assert f"already final {partial}" in " ".join(resumed.stdout.split())
        with RunReader(f"sqlite:///{store}") as reader:
            assert reader.run("ctrl-c").status is RunStatus.FINISHED
        assert _predictions(store, "ctrl-c") == 12


@pytest.mark.slow
def test_resume_of_an_unknown_run_is_refused_and_starts_nothing(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    first = cli("infer", "--config", str(config), "--pool", "val", "--run-id", "real")
    assert first.returncode == 0, first.stderr
    typo = cli("infer", "--config", str(config), "--pool", "val", "--run-id", "reel", "--resume")
    assert typo.returncode == 2
    assert "cannot resume run 'reel'" in typo.stderr
    assert "Traceback" not in typo.stderr
    assert _predictions(tmp_path / "runs.sqlite", "reel") == 0
    with RunReader(f"sqlite:///{tmp_path / 'runs.sqlite'}") as reader:
        assert [info.run_id for info in reader.runs()] == ["real"]


@pytest.mark.slow
def test_resume_with_a_changed_bundle_is_refused_naming_it(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    first = cli("infer", "--config", str(config), "--pool", "val", "--run-id", "v1")
    assert first.returncode == 0, first.stderr
    changed = tmp_path / "bundle"
    shutil.copytree(bench.bundle, changed)
    (changed / "system.md").write_text((changed / "system.md").read_text() + "\nBe brief.\n")
    again = cli(
        "infer",
        "--config",
        str(config),
        "--pool",
        "val",
        "--run-id",
        "v1",
        "--resume",
        "--bundle",
        str(changed),
    )
    assert again.returncode == 2
    assert "provenance differs" in again.stderr
    assert "bundle_hash" in again.stderr


@pytest.mark.slow
def test_a_malformed_run_id_is_one_clear_error(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    bad = cli("infer", "--config", str(config), "--pool", "val", "--run-id", "bad id!")
    assert bad.returncode == 2
    assert "invalid --run-id 'bad id!'" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.slow
def test_resume_accepts_operational_changes_and_refuses_edited_questions(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    questions = tmp_path / "questions.json"
    shutil.copy(bench.questions, questions)
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    args = (
        "infer",
        "--config",
        str(config),
        "--pool",
        "val",
        "--run-id",
        "ops",
        "--questions",
        str(questions),
    )
    assert cli(*args).returncode == 0
    # Lower concurrency after a crash is how a user resumes: it changes no answer, so it is allowed.
    slower = cli(*args, "--resume", "--concurrency", "1")
    assert slower.returncode == 0, slower.stderr
    assert "asked 0" in slower.stdout
    # The same path with other content is another question set: refused, never mixed into one run.
    questions.write_text(questions.read_text().replace('"question": "', '"question": "Edited: ', 1))
    edited = cli(*args, "--resume")
    assert edited.returncode == 2
    assert "provenance differs" in edited.stderr
    assert "data.questions: stored" in edited.stderr, "the changed setting is named, not two hashes"


@pytest.mark.slow
async def test_resume_of_a_training_runs_part_is_refused_naming_the_command_that_continues_it(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    parts = (
        {"run_id": "t1", "kind": RunKind.TRAIN, "pool": Pool.TRAIN},
        {"run_id": "t1.baseline", "parent_run_id": "t1"},
    )
    await store_runs(tmp_path / "runs.sqlite", sim, *parts, status=RunStatus.INTERRUPTED)
    refused = cli("infer", "--config", str(config), "--pool", "val", "--run-id", "t1.baseline", "--resume")
    assert refused.returncode == 2
    assert "cannot resume run 't1.baseline' (kind infer, part of run 't1')" in refused.stderr
    assert "skillharness train --resume t1" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert _predictions(tmp_path / "runs.sqlite", "t1.baseline") == 0
