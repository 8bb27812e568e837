"""Preflight's request check: one request of the run's size (a real question, agent.max_frames frames,
the real max_tokens) finds a server set up below the run's requests before anything is spent, where
the endpoint probe's one text-only token passes it."""

from __future__ import annotations

from pathlib import Path

from preflight_support import Bench, config_of, write_config

from bench_support import StartSim
from skillharness.sim import FaultConfig, SimConfig
from skillharness.train.preflight.checks import CheckStatus, PreflightReport, run_preflight


def _preflight(
    tmp_path: Path, bench: Bench, faults: FaultConfig, start: StartSim, **agent: object
) -> PreflightReport:
    sim = start(SimConfig(seed=3, faults=faults), bench.questions)
    llm = {"endpoints": [{"base_url": sim.base_url, "name": "gpu-a"}]}
    agent_section = {"bundle": str(bench.bundle), "max_frames": 8, **agent}
    path = write_config(tmp_path, bench, sim.base_url, sim.model_name, llm=llm, agent=agent_section)
    return run_preflight(config_of(path), endpoint_timeout_s=3.0)


def _rows(report: PreflightReport, check: str) -> list[tuple[CheckStatus, str]]:
    return [(row.status, row.message) for row in report.rows() if row.check == check]


def test_a_body_limit_below_the_runs_requests_fails_preflight_naming_it(
    tmp_path: Path, bench: Bench, sim_factory: StartSim
) -> None:
    report = _preflight(tmp_path, bench, FaultConfig(refuse_body_over=1024), sim_factory)
    assert _rows(report, "endpoint")[0][0] is CheckStatus.PASS, "the text-only probe cannot see it"
    [(status, message)] = _rows(report, "request")
    assert status is CheckStatus.FAIL
    assert "endpoint gpu-a refuses a request of the run's size" in message
    assert "8 image(s)" in message
    assert "HTTP 413" in message
    assert "client_max_body_size" in message


def test_an_image_limit_below_max_frames_fails_preflight_naming_it(
    tmp_path: Path, bench: Bench, sim_factory: StartSim
) -> None:
    report = _preflight(
        tmp_path, bench, FaultConfig(refuse_images_over=4), sim_factory, sampling={"max_tokens": 321}
    )
    [(status, message)] = _rows(report, "request")
    assert status is CheckStatus.FAIL
    assert "HTTP 400" in message
    assert "agent.max_frames" in message
    assert "max_tokens 321" in message


def test_a_server_that_takes_the_runs_requests_passes_and_says_their_size(
    tmp_path: Path, bench: Bench, sim_factory: StartSim
) -> None:
    report = _preflight(tmp_path, bench, FaultConfig(), sim_factory)
    [(status, message)] = _rows(report, "request")
    assert status is CheckStatus.PASS, report.problems
    assert "8 image(s)" in message


def test_the_request_check_is_skipped_never_passed_when_it_cannot_be_built(
    tmp_path: Path, bench: Bench, sim_factory: StartSim
) -> None:
    sim = sim_factory(SimConfig(seed=3), bench.questions)
    path = write_config(
        tmp_path, bench, sim.base_url, sim.model_name, data={"videos_dir": str(tmp_path / "none")}
    )
    report = run_preflight(config_of(path), endpoint_timeout_s=3.0)
    [(status, message)] = _rows(report, "request")
    assert status is CheckStatus.SKIP
    assert "see data" in message
