"""Sampling parameters outside the OpenAI API's ranges are refused by the config, not by every request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from skillharness.config import load_config
from skillharness.errors import ConfigError
from skillharness.llm import SamplingParams
from skillharness.llm.roles import Role
from skillharness.train.config import RoleSettings
from skillharness.train.state import role_sampling


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("temperature", -1.0),
        ("temperature", -0.01),
        ("temperature", 2.01),
        ("temperature", float("nan")),
        ("top_p", 0.0),
        ("top_p", -0.5),
        ("top_p", 1.01),
        ("top_p", float("nan")),
        ("max_tokens", 0),
        ("max_tokens", -5),
        ("presence_penalty", -2.01),
        ("presence_penalty", 2.01),
        ("presence_penalty", float("nan")),
        ("frequency_penalty", -2.01),
        ("frequency_penalty", 2.01),
        ("frequency_penalty", float("nan")),
    ],
)
def test_a_sampling_value_outside_its_range_is_refused(field: str, value: Any) -> None:
    with pytest.raises(ValidationError) as info:
        SamplingParams(**{field: value})
    assert field in str(info.value)


@pytest.mark.parametrize(
    "values",
    [
        {
            "temperature": 0.0,
            "top_p": 1.0,
            "max_tokens": 1,
            "presence_penalty": -2.0,
            "frequency_penalty": 2.0,
        },
        {"temperature": 2.0, "top_p": 1e-6, "presence_penalty": 2.0, "frequency_penalty": -2.0},
    ],
)
def test_the_ends_of_each_range_are_accepted(values: dict[str, Any]) -> None:
    assert SamplingParams(**values).model_dump(exclude_none=True) == values


def test_a_negative_agent_temperature_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "experiment.yaml"
    path.write_text("agent:\n  sampling:\n    temperature: -1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "agent.sampling.temperature" in message
    assert "greater than or equal to 0" in message
    assert str(path) in message


def test_a_role_temperature_has_the_agents_range() -> None:
    # Every role temperature the train config takes is one a request can carry, and no other.
    with pytest.raises(ValidationError, match="temperature"):
        RoleSettings(temperature=2.5)
    with pytest.raises(ValidationError, match="temperature"):
        RoleSettings(temperature=float("inf"))
    sampling = role_sampling({"evolve": RoleSettings(temperature=2.0)}, Role.EVOLVE)
    assert sampling.temperature == 2.0
