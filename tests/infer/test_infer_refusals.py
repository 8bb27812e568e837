"""Inference against a server set up below the agent's requests (a 1 KB body limit in front of it):
the refusals are reported by cause and fail the run, never scored as wrong answers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from infer_support import PACED_WORLD, Bench, write_config

from skillharness.agent import Refusal
from skillharness.config import load_config
from skillharness.infer import load_job, run_inference
from skillharness.sim import SimServer
from skillharness.store import RunReader, RunStatus

pytestmark = pytest.mark.sim_world(PACED_WORLD)


def _config(tmp_path: Path, bench: Bench, sim: SimServer, **infer: object) -> Path:
    path = write_config(tmp_path / "exp.yaml", bench, sim, vision=False)
    doc = yaml.safe_load(path.read_text())
    doc["llm"]["endpoints"] = [{"base_url": sim.base_url, "name": "gpu-a"}]
    doc["infer"] = infer
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_server_refusing_every_agent_request_fails_the_run_naming_the_limit(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    sim.configure_faults(refuse_body_over=1024)
    config = load_config(_config(tmp_path, bench, sim))
    result = asyncio.run(run_inference(load_job(config, pool="val", run_id="small-body", resume=False)))
    outcome = result.outcome
    assert outcome is not None
    assert outcome.status is RunStatus.FAILED
    assert outcome.refused == {Refusal(413, "gpu-a", "body_size"): 12}
    message = outcome.describe("small-body")
    assert "12 of 12 refused by the server (HTTP 413 from gpu-a (body_size) ×12)" in message
    assert "client_max_body_size" in message
    assert "infer.max_refused_share" in message
    assert result.status_counts.get("parse_error", 0) == 0, "no refusal is scored as a wrong answer"
    with RunReader(config.store) as reader:
        assert all(p.correct is None for p in reader.predictions("small-body"))


def test_refusals_below_the_share_finish_with_errors_and_are_still_named(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    sim.configure_faults(refuse_body_over=1024)
    config = load_config(_config(tmp_path, bench, sim, max_refused_share=1.0, max_infra_share=1.0))
    result = asyncio.run(run_inference(load_job(config, pool="val", run_id="tolerated", resume=False)))
    assert result.outcome is not None
    assert result.outcome.status is RunStatus.FINISHED_WITH_ERRORS
    assert "refused by the server" in result.outcome.describe("tolerated")
