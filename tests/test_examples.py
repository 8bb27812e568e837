"""Every example experiment in examples/ is a valid config (a typo there would mislead every user)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillharness.config import load_config

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_config_loads(path: Path) -> None:
    config = load_config(path)
    assert config.eval.run_holdout_eval is not None  # every example decides about the holdout
    assert config.llm.model


def test_the_training_example_samples_above_temperature_zero() -> None:
    config = load_config(Path(__file__).resolve().parents[1] / "examples" / "videomme-train.yaml")
    assert (config.agent.sampling.temperature or 0) > 0  # gates then draw with replacement
    assert config.train.budget.max_calls is not None
