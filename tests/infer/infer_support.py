"""Shared helpers of the inference tests."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench_support import Bench, experiment_doc
from skillharness.sim import LatencyConfig, SimConfig, SimServer

# The world of the inference tests' ``sim`` (marked ``sim_world``): every reply takes 20 ms to its
# first token, as a real server does.
PACED_WORLD = SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.02, per_token_s=0.0, jitter_s=0.0))


def write_config(path: Path, bench: Bench, sim: SimServer, **agent: object) -> Path:
    """An experiment YAML pointing at the bench, the simulator and stores under ``path``'s folder."""
    agent = {"concurrency": 4, **agent}
    doc = experiment_doc(path.parent, bench, model=sim.model_name, base_url=sim.base_url, **agent)
    path.write_text(yaml.safe_dump(doc))
    return path
