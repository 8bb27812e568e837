"""Shared helpers of the inference tests."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench_support import Bench, experiment_doc
from skillharness.sim import SimServer


def write_config(path: Path, bench: Bench, sim: SimServer, **agent: object) -> Path:
    """An experiment YAML pointing at the bench, the simulator and stores under ``path``'s folder."""
    agent = {"concurrency": 4, **agent}
    doc = experiment_doc(path.parent, bench, model=sim.model_name, base_url=sim.base_url, **agent)
    path.write_text(yaml.safe_dump(doc))
    return path
