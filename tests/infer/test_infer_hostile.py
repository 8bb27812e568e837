"""Inference against endpoints that cannot work: stop before spending, fail loudly, stay resumable."""

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
from typing import Any

import pytest
import yaml
from infer_support import PACED_WORLD, Bench, write_config

from cli_support import run_cli as cli
from net_support import free_port
from skillharness.config import load_config
from skillharness.data.loader import load_questions
from skillharness.errors import AuthError, ConfigError, DataError, FatalLLMError
from skillharness.infer import load_job, run_inference
from skillharness.llm.roles import Role
from skillharness.sim import FaultKind, LatencyConfig, SimConfig, SimServer
from skillharness.store import RunReader, RunStatus

pytestmark = pytest.mark.sim_world(PACED_WORLD)


def _config(
    tmp_path: Path, bench: Bench, sim: SimServer, *, llm: dict[str, Any] | None = None, **top: Any
) -> Path:
    path = write_config(tmp_path / "exp.yaml", bench, sim)
    doc = yaml.safe_load(path.read_text())
    doc["llm"].update(llm or {})
    for section, values in top.items():
        doc.setdefault(section, {}).update(values)
    path.write_text(yaml.safe_dump(doc))
    return path


def _run_status(tmp_path: Path, run_id: str) -> str | None:
    store = tmp_path / "runs.sqlite"
    if not store.exists():
        return None
    with sqlite3.connect(store) as conn:
        row = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return row[0] if row else None


def test_an_unset_api_key_env_is_refused_before_any_call(
    tmp_path: Path, bench: Bench, sim: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SH_UNSET_KEY", raising=False)
    endpoint = {"base_url": sim.base_url, "api_key_env": "SH_UNSET_KEY", "name": "gpu-a"}
    config = load_config(_config(tmp_path, bench, sim, llm={"endpoints": [endpoint]}))
    with pytest.raises(ConfigError) as info:
        asyncio.run(run_inference(load_job(config, pool="val", run_id="nokey", resume=False)))
    assert "gpu-a" in str(info.value)
    assert "SH_UNSET_KEY" in str(info.value)
    assert sim.stats()["requests"] == 0, "no question was asked"
    assert _run_status(tmp_path, "nokey") is None, "no run was recorded"


def test_a_401_stops_the_run_at_the_first_refused_answer_and_leaves_it_resumable(
    tmp_path: Path, bench: Bench, sim: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SH_TEST_KEY", "sk-wrong-key-0123456789")
    endpoint = {"base_url": sim.base_url, "api_key_env": "SH_TEST_KEY", "name": "gpu-a"}
    config = load_config(_config(tmp_path, bench, sim, llm={"endpoints": [endpoint]}))
    sim.force_fault(FaultKind.HTTP_401, count=1000, roles=(Role.AGENT,))
    with pytest.raises(AuthError) as info:
        asyncio.run(run_inference(load_job(config, pool=None, run_id="auth", resume=False)))
    message = str(info.value)
    assert "gpu-a" in message
    assert "SH_TEST_KEY" in message
    assert "0123456789" not in message
    refused = sim.stats()["statuses"].get("401", 0)
    assert 1 <= refused <= 4, f"the run stopped at the first refusal, not after every question: {refused}"
    assert _run_status(tmp_path, "auth") == RunStatus.FAILED.value
    sim.clear_faults()
    resumed = asyncio.run(run_inference(load_job(config, pool=None, run_id="auth", resume=True)))
    assert resumed.status_counts.get("infra_error", 0) == 0
    assert sum(resumed.status_counts.values()) == 36
    assert _run_status(tmp_path, "auth") == RunStatus.FINISHED.value


def test_a_dead_endpoint_is_refused_before_the_first_question(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    # The default retry policy: a refused connection is tried 3 times quickly, then final.
    config = load_config(_config(tmp_path, bench, sim, llm={"endpoints": [{"base_url": dead}]}))
    with pytest.raises(FatalLLMError) as info:
        asyncio.run(run_inference(load_job(config, pool="val", run_id="dead", resume=False)))
    assert f"nothing accepts them at {dead}/models" in str(info.value)
    assert "3 attempts 0.5 s apart" in str(info.value)
    assert _run_status(tmp_path, "dead") is None


@pytest.mark.parametrize(
    ("base_url", "needle"),
    [
        ("127.0.0.1:8000/v1", "needs a scheme"),
        ("http://127.0.0.1:0/v1", "port 0"),
        ("http://:81/v1", "no host"),
    ],
)
def test_a_malformed_base_url_is_refused_by_the_config(
    tmp_path: Path, bench: Bench, sim: SimServer, base_url: str, needle: str
) -> None:
    path = _config(tmp_path, bench, sim, llm={"endpoints": [{"base_url": base_url}]})
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert needle in str(info.value)
    assert "llm.endpoints.0.base_url" in str(info.value)


@pytest.mark.slow
def test_a_run_past_max_infra_share_fails_with_a_nonzero_exit_and_counts_by_class(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    sim.configure_faults(rates={FaultKind.HTTP_500: 1.0}, roles=(Role.AGENT,))
    retry = {"max_attempts": 1}
    path = _config(tmp_path, bench, sim, llm={"retry": retry, "breaker": {"failure_threshold": 1000}})
    done = cli("infer", "--config", str(path), "--pool", "val", "--run-id", "sick")
    assert done.returncode == 1, done.stderr
    assert "run sick failed" in done.stderr
    assert "TransientLLMError" in done.stderr
    assert "infer.max_infra_share" in done.stderr
    assert _run_status(tmp_path, "sick") == RunStatus.FAILED.value


def test_a_run_with_few_infra_errors_finishes_with_errors_and_names_the_resume(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    sim.force_fault(FaultKind.HTTP_500, count=2, roles=(Role.AGENT,))
    config = load_config(
        _config(tmp_path, bench, sim, llm={"retry": {"max_attempts": 1}}, agent={"concurrency": 1})
    )
    result = asyncio.run(run_inference(load_job(config, pool=None, run_id="some", resume=False)))
    assert result.outcome is not None
    assert result.outcome.status is RunStatus.FINISHED_WITH_ERRORS
    assert result.outcome.by_class == {"TransientLLMError": 2}
    assert "--resume --run-id some" in result.outcome.describe("some")
    assert _run_status(tmp_path, "some") == RunStatus.FINISHED_WITH_ERRORS.value


def _agent_cache_hits(result: Any) -> float:
    return result.usage["agent"]["cache_hits"]


@pytest.mark.parametrize(
    ("temperature", "share", "replayed"),
    [(0.7, None, False), (0.7, True, True), (0.0, None, True), (0.0, False, False)],
)
def test_a_new_run_replays_another_runs_answers_only_when_sharing_is_chosen_or_safe(
    tmp_path: Path, bench: Bench, sim: SimServer, temperature: float, share: bool | None, replayed: bool
) -> None:
    # One seed salt for both runs: per-draw seeds (the default when sampling) salted by each run's id
    # would give the second run other requests, so only a pinned salt lets sharing replay anything.
    sampling = {"sampling": {"temperature": temperature}, "seed_salt": "shared"}
    config = load_config(_config(tmp_path, bench, sim, agent=sampling, cache={"share_across_runs": share}))
    first = asyncio.run(run_inference(load_job(config, pool="val", run_id="first", resume=False)))
    second = asyncio.run(run_inference(load_job(config, pool="val", run_id="second", resume=False)))
    assert _agent_cache_hits(first) == 0
    if replayed:
        # Every call: answers and parse errors alike are replayed (only infra errors are forgotten).
        assert _agent_cache_hits(second) == second.usage["agent"]["calls"] > 0
        assert "shared across runs" in second.cache_scope
    else:
        assert _agent_cache_hits(second) == 0
        assert "private to this run" in second.cache_scope


@pytest.mark.slow
def test_sigterm_marks_the_run_interrupted_flushes_and_exits_143(tmp_path: Path, bench: Bench) -> None:
    slow = SimServer(
        SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.1, per_token_s=0.0, jitter_s=0.0)),
        questions=bench.questions,
    )
    with slow:
        config = write_config(tmp_path / "exp.yaml", bench, slow, concurrency=2)
        store = tmp_path / "runs.sqlite"
        args = ["infer", "--config", str(config), "--pool", "all", "--run-id", "termed"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillharness.cli", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and _rows(store, "termed") < 4:
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before it could be stopped"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "terminated" in stderr
    assert "Traceback" not in stderr
    assert _run_status(tmp_path, "termed") == RunStatus.INTERRUPTED.value
    assert 4 <= _rows(store, "termed") < 36


def _rows(store: Path, run_id: str) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store) as conn:
            return conn.execute("SELECT COUNT(*) FROM predictions WHERE run_id = ?", (run_id,)).fetchone()[0]
    except sqlite3.OperationalError:  # the store is being created
        return 0


def _own_videos(tmp_path: Path, bench: Bench, sim: SimServer) -> tuple[Path, Path]:
    videos = tmp_path / "videos"
    shutil.copytree(bench.root / "videos", videos)
    path = _config(tmp_path, bench, sim, data={"videos_dir": str(videos)})
    return path, videos


def test_unreadable_videos_are_refused_at_the_start_with_the_list_of_bad_files(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path, videos = _own_videos(tmp_path, bench, sim)
    empty, fake = sorted(videos.glob("*.mp4"))[:2]
    empty.write_bytes(b"")
    fake.write_text("this is not a video\n")
    with pytest.raises(DataError) as info:
        load_job(load_config(path), pool=None, run_id="bad-media", resume=False)
    assert "2 video file(s) cannot be read" in str(info.value)
    assert empty.name in str(info.value)
    assert fake.name in str(info.value)
    assert sim.stats()["requests"] == 0


def test_a_video_that_breaks_mid_run_is_marked_degraded_and_never_retried(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path, videos = _own_videos(tmp_path, bench, sim)
    config = load_config(path)
    job = load_job(config, pool=None, run_id="broke", resume=False)
    victim = sorted(videos.glob("*.mp4"))[0]
    victim.write_bytes(b"")  # after the start-up check: the file breaks while the run is going
    result = asyncio.run(run_inference(job))
    assert result.status_counts.get("infra_error", 0) == 0
    of_victim = {q.question_id for q in load_questions(bench.questions) if q.videoID == victim.stem}
    reader = RunReader(config.store)
    try:
        stored = reader.predictions("broke")
    finally:
        reader.close()
    hit = [p for p in stored if p.question_id in of_victim]
    others = [p for p in stored if p.question_id not in of_victim]
    assert hit, "the broken video's questions were answered"
    assert all(p.degraded for p in hit)
    assert not any(p.degraded for p in others)
    shutil.copy(bench.root / "videos" / victim.name, victim)  # repaired: a resume may start again
    again = asyncio.run(run_inference(load_job(config, pool=None, run_id="broke", resume=True)))
    assert again.asked == 0, "nothing is retried: a degraded answer is final"


@pytest.mark.slow
def test_infer_names_the_frame_cache_it_writes_to_even_by_default(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = write_config(tmp_path / "exp.yaml", bench, sim)
    doc = yaml.safe_load(path.read_text())
    del doc["agent"]["frames"]  # the default frame cache: the user's cache folder
    path.write_text(yaml.safe_dump(doc))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "COLUMNS": "400"}
    done = cli("infer", "--config", str(path), "--pool", "val", "--run-id", "where", env=env)
    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.split())
    assert f"frame cache {tmp_path / 'xdg' / 'skillharness' / 'frames'} (the default" in shown
    assert f"store sqlite:///{tmp_path / 'runs.sqlite'}" in shown


def test_no_part_of_the_key_reaches_the_stored_error_messages(
    tmp_path: Path, bench: Bench, sim: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-live-" + "Zq8Lm3Rt" * 4
    monkeypatch.setenv("SH_TEST_KEY", secret)
    endpoint = {"base_url": sim.base_url, "api_key_env": "SH_TEST_KEY"}
    retry = {"max_attempts": 1}
    config = load_config(_config(tmp_path, bench, sim, llm={"endpoints": [endpoint], "retry": retry}))
    # Every cut position is covered over HTTP in tests/llm/test_redact.py; here the whole path to
    # the store: the echoed headers, the excerpt, the prediction row.
    sim.force_fault(FaultKind.ECHO_HEADERS, count=3, roles=(Role.AGENT,))
    asyncio.run(run_inference(load_job(config, pool="val", run_id="leak", resume=False)))
    reader = RunReader(config.store)
    try:
        failed = [p for p in reader.predictions("leak") if p.status.value == "infra_error"]
    finally:
        reader.close()
    assert failed, "the echoing endpoint did fail some questions"
    for prediction in failed:
        message = prediction.error_message or ""
        assert "***" in message
        assert not any(secret[i : i + 6] in message for i in range(len(secret) - 5)), message
