"""Shared helpers of the training tests: a config over a bench and a simulator, and a context."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml

from bench_support import Bench, experiment_doc
from skillharness.config import Config, load_config
from skillharness.sim import SimServer
from skillharness.skills import Bundle
from skillharness.train.loop.experiment import open_training
from skillharness.train.state.context import TrainContext


def write_train_config(folder: Path, bench: Bench, sim: SimServer, **sections: dict[str, Any]) -> Path:
    """An experiment YAML (text-only agent, small concurrency) with ``sections`` merged in."""
    doc = experiment_doc(
        folder, bench, model=sim.model_name, base_url=sim.base_url, concurrency=8, vision=False
    )
    doc["eval"] = {"run_holdout_eval": False}
    for name, values in sections.items():
        doc.setdefault(name, {}).update(values)
    path = folder / "experiment.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def load(path: Path) -> Config:
    return load_config(path)


@contextlib.asynccontextmanager
async def train_context(config_path: Path, *, run_id: str = "train-test") -> AsyncIterator[TrainContext]:
    """A training context over the config's pools (initial bundle from ``agent.bundle``)."""
    config = load_config(config_path)
    assert config.agent.bundle is not None
    bundle = Bundle.load(config.agent.bundle)
    async with open_training(config, bundle, run_id=run_id) as ctx:
        yield ctx
