"""End to end: `skillharness infer` against the simulator over real loopback HTTP."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from infer_support import PACED_WORLD, Bench, write_config

from cli_support import run_cli as cli
from skillharness.config import load_config
from skillharness.data.pools import load_pools
from skillharness.infer import load_job, run_inference
from skillharness.sim import FaultKind, LatencyConfig, SimConfig, SimServer
from skillharness.store import PredictionStatus, RunReader
from skillharness.util.atomic import sha256_file

pytestmark = pytest.mark.sim_world(PACED_WORLD)


def row_counts(store: Path, run_id: str) -> tuple[int, int, int]:
    with sqlite3.connect(store) as conn:
        total, distinct = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT question_id || '/' || sample_idx) FROM predictions "
            "WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        traces = conn.execute("SELECT COUNT(*) FROM traces WHERE run_id = ?", (run_id,)).fetchone()[0]
    return total, distinct, traces


def test_infer_writes_one_prediction_per_question_with_traces(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = load_config(write_config(tmp_path / "exp.yaml", bench, sim))
    job = load_job(config, pool="val", run_id="val-1", resume=False)
    result = asyncio.run(run_inference(job))
    val = load_pools(bench.pools).questions["val"]
    assert result.asked == len(val)
    assert result.skipped == 0
    total, distinct, traces = row_counts(tmp_path / "runs.sqlite", "val-1")
    assert total == distinct == len(val)
    assert traces >= 2 * len(val), "every question has at least a model turn and a tool call traced"
    overall = result.summary["overall"][0]
    assert overall.n + overall.infra_errors == len(val)
    assert sum(c.n + c.infra_errors for c in result.summary["task_type"]) == len(val)
    reader = RunReader(config.store)
    info = reader.run("val-1")
    assert info.provenance.pools_sha256 == load_pools(bench.pools).sha256
    assert info.provenance.bundle_hash == job.bundle.bundle_hash
    assert info.status.value == "finished"
    reader.close()
    # A second invocation of the finished run asks nothing again.
    again = asyncio.run(run_inference(load_job(config, pool="val", run_id="val-1", resume=True)))
    assert again.asked == 0
    assert again.skipped == len(val)


def test_infer_survives_transient_faults(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    transient = (
        FaultKind.TRUNCATE,
        FaultKind.RESET,
        FaultKind.HTTP_429,
        FaultKind.HTTP_500,
        FaultKind.HTTP_503,
        FaultKind.VLLM_ERROR_FRAME,
        FaultKind.LLAMACPP_ERROR_FRAME,
        FaultKind.MALFORMED_CHUNK,
    )
    # About one request in nine fails: a flaky endpoint, well inside the global retry budget (20 %).
    sim.configure_faults(rates=dict.fromkeys(transient, 0.014), retry_after_s=0.05)
    path = write_config(tmp_path / "exp.yaml", bench, sim)
    doc = yaml.safe_load(path.read_text())
    doc["llm"]["retry"] = {"base_delay_s": 0.02, "max_delay_s": 0.2}
    path.write_text(yaml.safe_dump(doc))
    result = asyncio.run(run_inference(load_job(load_config(path), pool=None, run_id="faulty", resume=False)))
    faults = sim.stats()["faults"]
    assert sum(faults.values()) >= 3, f"the simulator must really have injected faults: {faults}"
    assert result.status_counts.get("infra_error", 0) == 0, (result.status_counts, faults)
    total, distinct, _ = row_counts(tmp_path / "runs.sqlite", "faulty")
    assert total == distinct == 36


@pytest.mark.slow
def test_p2_3_resume_writes_no_duplicate_rows(tmp_path: Path, bench: Bench) -> None:
    slow = SimServer(
        SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.1, per_token_s=0.0, jitter_s=0.0)),
        questions=bench.questions,
    )
    with slow:
        _kill_and_resume(tmp_path, bench, slow)


def _kill_and_resume(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim, concurrency=2)
    store = tmp_path / "runs.sqlite"
    args = ["infer", "--config", str(config), "--pool", "all", "--run-id", "killed"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillharness.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    written = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if store.exists():
            try:
                written = row_counts(store, "killed")[0]
            except sqlite3.OperationalError:
                written = 0
            if written >= 6:
                break
        time.sleep(0.1)
    assert proc.poll() is None, (
        f"the run ended before it could be killed: {proc.stderr.read() if proc.stderr else ''}"
    )
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    partial = row_counts(store, "killed")[0]
    assert 6 <= partial < 36, partial
    resumed = cli(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert (
        f"already final {partial}" in resumed.stdout.replace("\n", " ") or "already final" in resumed.stdout
    )
    total, distinct, _ = row_counts(store, "killed")
    assert total == distinct == 36
    with sqlite3.connect(store) as conn:
        statuses = dict(
            conn.execute("SELECT status, COUNT(*) FROM predictions WHERE run_id='killed' GROUP BY status")
        )
        dup_steps = conn.execute(
            "SELECT COUNT(*) FROM (SELECT question_id, sample_idx, step_idx, COUNT(*) c FROM traces "
            "WHERE run_id='killed' GROUP BY 1, 2, 3 HAVING c > 1)"
        ).fetchone()[0]
    assert statuses.get(PredictionStatus.INFRA_ERROR.value, 0) == 0
    assert dup_steps == 0


@pytest.mark.slow
def test_runs_commands_do_not_write(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    config = load_config(write_config(tmp_path / "exp.yaml", bench, sim))
    asyncio.run(run_inference(load_job(config, pool="test", run_id="t-1", resume=False)))
    store = tmp_path / "runs.sqlite"
    before = sha256_file(store)
    listed = cli("runs", "list", "--store", f"sqlite:///{store}")
    assert listed.returncode == 0, listed.stderr
    assert "t-1" in listed.stdout
    assert "finished" in listed.stdout
    shown = cli("runs", "show", "t-1", "--store", f"sqlite:///{store}")
    assert shown.returncode == 0
    assert '"pool": "test"' in shown.stdout
    missing = cli("runs", "show", "nope", "--store", f"sqlite:///{store}")
    assert missing.returncode == 2
    assert "t-1" in missing.stderr
    assert sha256_file(store) == before


@pytest.mark.slow
def test_infer_cli_prints_the_summary_table(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    done = cli("infer", "--config", str(config), "--pool", "val", "--run-id", "cli-1")
    assert done.returncode == 0, done.stderr
    for needle in ("Per task type", "Per duration", "95% CI", "parse err", "cli-1", "agent: ", "prompt +"):
        assert needle in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"agent": {"bundle": None}}, "agent.bundle is not set"),
        ({"data": {"pools": None}}, "needs data.pools"),
    ],
)
def test_infer_names_missing_settings(
    tmp_path: Path, bench: Bench, sim: SimServer, edit: dict, needle: str
) -> None:
    path = write_config(tmp_path / "exp.yaml", bench, sim)
    doc = yaml.safe_load(path.read_text())
    for section, values in edit.items():
        doc[section].update(values)
    path.write_text(yaml.safe_dump(doc))
    failed = cli("infer", "--config", str(path), "--pool", "val")
    assert failed.returncode == 2
    assert needle in failed.stderr


@pytest.mark.slow
def test_infer_refuses_to_start_when_videos_are_missing(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    path = write_config(tmp_path / "exp.yaml", bench, sim)
    doc = yaml.safe_load(path.read_text())
    videos = tmp_path / "videos"
    videos.mkdir()
    doc["data"]["videos_dir"] = str(videos)
    path.write_text(yaml.safe_dump(doc))
    failed = cli("infer", "--config", str(path), "--pool", "val")
    assert failed.returncode == 2
    assert "video(s) of the chosen questions are not in" in failed.stderr
    assert str(videos) in failed.stderr
    assert not (tmp_path / "runs.sqlite").exists(), "nothing was started, so no run was recorded"


def test_p0_4_a_parse_error_is_replayed_like_an_answer_and_never_loops(tmp_path: Path, bench: Bench) -> None:
    from skillharness.sim.config import AgentConfig as SimAgentConfig
    from skillharness.sim.config import AnswerShape

    # Every answer names two letters: a parse error, which is model output and stays cached.
    awkward = SimAgentConfig(awkward_rate=1.0, awkward_shapes={AnswerShape.TWO_LETTERS: 1.0})
    with SimServer(SimConfig(seed=3, agent=awkward), questions=bench.questions) as server:
        config = load_config(write_config(tmp_path / "exp.yaml", bench, server))
        first = asyncio.run(run_inference(load_job(config, pool="val", run_id="bad-1", resume=False)))
        n_val = len(load_pools(bench.pools).questions["val"])
        assert first.status_counts == {"ok": 0, "parse_error": n_val, "infra_error": 0}
        asked_first = server.stats()["requests"]
        # A resume has nothing left to ask: a parse error is final, never asked again in a loop.
        resumed = asyncio.run(run_inference(load_job(config, pool="val", run_id="bad-1", resume=True)))
        assert resumed.status_counts == first.status_counts
        assert server.stats()["requests"] == asked_first
        # Another run sharing the cache (temperature 0) replays the parse errors like answers.
        second = asyncio.run(run_inference(load_job(config, pool="val", run_id="bad-2", resume=False)))
        asked_second = server.stats()["requests"] - asked_first
    assert second.status_counts == first.status_counts
    assert asked_second == 0, "a complete response was asked again because its answer did not parse"
    reader = RunReader(config.store)
    try:
        assert all(p.cache_hit for p in reader.predictions("bad-2"))
    finally:
        reader.close()


@pytest.mark.slow
def test_infer_refuses_to_start_on_a_malformed_subtitle_file(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    subtitles = tmp_path / "subtitles"
    shutil.copytree(bench.root / "subtitles", subtitles)
    victim = sorted(subtitles.glob("*.srt"))[0]
    victim.write_text("1\nthis is not a timing line\nhello\n")
    path = write_config(tmp_path / "exp.yaml", bench, sim)
    doc = yaml.safe_load(path.read_text())
    doc["data"]["subtitles_dir"] = str(subtitles)
    path.write_text(yaml.safe_dump(doc))
    failed = cli("infer", "--config", str(path), "--pool", "all")
    assert failed.returncode == 2
    assert "subtitle file(s) do not parse" in failed.stderr
    assert victim.name in failed.stderr
    assert not (tmp_path / "runs.sqlite").exists()
