"""Preflight never passes what it did not check (issue 49, item 4), against real parts: the synthetic
bench's mp4 files, the simulator over loopback HTTP, SQLite stores.

Every pool's videos are read whole (a cut train or test video fails, naming the file and the pool);
the run's model names are asked by name (a wrong one fails, naming what the server offers; a server
without a listing is a warning); a check that could not run is reported as not run, and preflight
does not pass; a refused connection fails in about a second, naming the URL.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from preflight_support import FAST_RETRY, Bench, config_of, write_config
from starlette.applications import Starlette
from starlette.routing import Route

from net_support import free_port
from skillharness.data import Pool, load_pools, load_questions
from skillharness.sim import SimConfig, SimServer, build_state
from skillharness.sim.server import ChatCompletions
from skillharness.train.preflight.checks import CheckStatus, PreflightReport, run_preflight
from skillharness.util.asgi import BackgroundServer


def _rows(report: PreflightReport, check: str) -> list[tuple[CheckStatus, str]]:
    return [(row.status, row.message) for row in report.rows() if row.check == check]


def _video_of(bench: Bench, pool: Pool) -> str:
    """The video id of the first question of ``pool``."""
    first = load_pools(bench.pools).questions[pool][0]
    return next(q.videoID for q in load_questions(bench.questions) if q.question_id == first)


def _videos_with_one_cut(tmp_path: Path, bench: Bench, video_id: str) -> tuple[Path, Path]:
    """A copy of the bench's videos in which ``video_id``'s mp4 lost its last fifth (a stopped copy)."""
    videos = tmp_path / "videos"
    shutil.copytree(bench.root / "videos", videos)
    cut = videos / f"{video_id}.mp4"
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) * 4 // 5])
    return videos, cut


@pytest.mark.parametrize("pool", [Pool.TRAIN, Pool.TEST])
def test_a_cut_video_of_any_pool_fails_preflight_naming_the_file_and_the_pool(
    tmp_path: Path, bench: Bench, shared_sim: SimServer, pool: Pool
) -> None:
    videos, cut = _videos_with_one_cut(tmp_path, bench, _video_of(bench, pool))
    path = write_config(
        tmp_path, bench, shared_sim.base_url, shared_sim.model_name, data={"videos_dir": str(videos)}
    )
    report = run_preflight(config_of(path), endpoint_timeout_s=3.0)
    [(status, message)] = _rows(report, "data")
    assert status is CheckStatus.FAIL
    assert message.startswith(f"pool {pool}:")
    assert str(cut) in message
    assert "cut short" in message
    assert not report.ok


def test_a_model_the_server_does_not_serve_fails_naming_what_it_serves(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    path = write_config(tmp_path, bench, shared_sim.base_url, "no-such-model")
    report = run_preflight(config_of(path), endpoint_timeout_s=3.0)
    [(status, message)] = _rows(report, "model")
    assert status is CheckStatus.FAIL
    assert "'no-such-model' (llm.model) is not served" in message
    assert "'sim-vl'" in message, "the names the server offers"
    assert _rows(report, "endpoint")[0][0] is CheckStatus.PASS, "it answers: only the name is wrong"
    assert _rows(report, "request")[0][0] is CheckStatus.SKIP, "one problem for one cause"
    assert {p.check for p in report.problems} == {"model"}


def test_each_training_role_model_is_asked_by_name(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    path = write_config(
        tmp_path,
        bench,
        shared_sim.base_url,
        shared_sim.model_name,
        train={"roles": {"judge": {"model": "judge-xl"}}},
    )
    report = run_preflight(config_of(path), endpoint_timeout_s=3.0)
    [(status, message)] = _rows(report, "model")
    assert status is CheckStatus.FAIL
    assert "'judge-xl' (train.roles.judge.model) is not served" in message


@pytest.fixture
def unlisted(bench: Bench) -> Iterator[str]:
    """The simulator's chat route alone, on a server that has no ``GET /models`` (it answers 404)."""
    state = build_state(SimConfig(seed=3), bench.questions)
    app = Starlette(routes=[Route("/v1/chat/completions", ChatCompletions(state))])
    server = BackgroundServer(app, name="no-models").start()
    yield f"http://127.0.0.1:{server.port}/v1"
    server.stop()


def test_a_server_without_a_model_listing_is_a_warning_not_a_pass(
    tmp_path: Path, bench: Bench, unlisted: str
) -> None:
    report = run_preflight(
        config_of(write_config(tmp_path, bench, unlisted, "sim-vl")), endpoint_timeout_s=3.0
    )
    [(status, message)] = _rows(report, "model")
    assert status is CheckStatus.WARN
    assert "gives no model listing" in message
    assert "HTTP 404" in message
    assert "was not checked against one" in message
    assert report.ok, (
        report.problems
    )  # the name answered: training may start, and the row says what is unknown


def test_checks_that_could_not_run_on_a_dead_endpoint_are_not_run_and_preflight_does_not_pass(
    tmp_path: Path, bench: Bench
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    path = write_config(
        tmp_path,
        bench,
        dead,
        "sim-vl",
        agent={"sampling": {"temperature": 0.7, "seed": "per_draw"}},
        llm={"retry": FAST_RETRY},
    )
    report = run_preflight(config_of(path), endpoint_timeout_s=3.0)
    for check in ("seed", "model"):
        [(status, message)] = _rows(report, check)
        assert status is CheckStatus.SKIP, (check, message)
        assert message.startswith(f"not run on {dead}: it does not answer"), message
    assert not any(row.status is CheckStatus.PASS for row in report.rows() if row.check in ("seed", "model"))
    assert not report.ok
    assert any(line.startswith("seed: not run on") for line in report.unverified())


def test_a_refused_connection_fails_in_about_a_second_under_the_default_retry_policy(
    tmp_path: Path, bench: Bench
) -> None:
    """The default policy (8 attempts, backoff up to 30 s) spent about 40 s on a port no one serves."""
    dead = f"http://127.0.0.1:{free_port()}/v1"
    path = write_config(tmp_path, bench, dead, "sim-vl")
    started = time.monotonic()
    report = run_preflight(config_of(path), endpoint_timeout_s=3.0)
    elapsed = time.monotonic() - started
    [(status, message)] = _rows(report, "endpoint")
    assert status is CheckStatus.FAIL
    assert f"nothing accepts them at {dead}/models" in message
    assert "3 attempts" in message
    assert elapsed < 10.0, f"preflight took {elapsed:.1f} s on a refused connection"
