"""The public surface of skillharness.sim is small and pinned; the runner starts and stops cleanly."""

from __future__ import annotations

import httpx
import pytest

import skillharness.sim as sim_pkg
from skillharness.sim import FaultKind, SimConfig, run_sim_server


def test_public_surface_is_pinned():
    assert sim_pkg.__all__ == sorted(sim_pkg.__all__)
    assert set(sim_pkg.__all__) == {
        "AgentPath",
        "AnswerShape",
        "BundleText",
        "EditEffect",
        "FaultConfig",
        "FaultKind",
        "LatencyConfig",
        "Oracle",
        "PlainShape",
        "SimConfig",
        "SimServer",
        "World",
        "build_state",
        "create_app",
        "decisive_world",
        "run_sim_server",
    }


def test_runner_frees_its_port_and_handles_are_independent(questions):
    server = run_sim_server(SimConfig(seed=1), questions)
    with server as sim:
        url = sim.base_url
        assert url.endswith("/v1")
        assert sim.url.startswith("http://127.0.0.1:")
        sim.force_fault(FaultKind.HTTP_500)
        assert httpx.get(f"{sim.url}/health").json()["simulator"] is True
    with pytest.raises(httpx.TransportError):
        httpx.get(url.replace("/v1", "/health"), timeout=1)
    with run_sim_server(SimConfig(seed=1), questions) as fresh:  # forced faults do not leak across servers
        body = {"model": "sim-vl", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(f"{fresh.base_url}/chat/completions", json=body).status_code == 200
        fresh.reset_stats()
        assert fresh.stats()["requests"] == 0
