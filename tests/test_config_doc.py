"""A config as commented YAML: it loads back to the same values, and its comments are the models'."""

from __future__ import annotations

import pytest
import yaml

from skillharness.config_doc import commented_yaml
from skillharness.errors import ConfigError
from skillharness.llm.config import EndpointConfig
from skillharness.train.config import RoleSettings, TrainConfig

_VALUES = {
    "llm": {
        "model": "m",
        "endpoints": [{"base_url": "http://h:1/v1", "api_key_env": "K"}, {"base_url": "http://g:2/v1"}],
    },
    "agent": {"sampling": {"temperature": 0.7}},
    "train": {"task_types": ["OCR Problems", "Counting Problem"], "roles": {"evolve": {"temperature": 0.7}}},
    "eval": {"run_holdout_eval": None},
}


def test_commented_yaml_loads_back_to_the_same_values() -> None:
    assert yaml.safe_load(commented_yaml(_VALUES)) == _VALUES


def test_every_key_carries_its_model_description_and_notes_add_a_line() -> None:
    text = commented_yaml(_VALUES, notes={"train.roles.evolve.temperature": "A note."}, width=1000)
    lines = text.splitlines()
    # Inside a list item (an endpoint) and inside a mapping of free names (a role) too.
    for description, key in (
        (EndpointConfig.model_fields["api_key_env"].description, "api_key_env:"),
        (RoleSettings.model_fields["temperature"].description, "temperature: 0.7"),
        (TrainConfig.model_fields["task_types"].description, "task_types:"),
    ):
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(key) and "#" in lines[i - 1])
        above = [line.strip() for line in lines[max(0, at - 2) : at]]
        assert f"# {description}" in above, key
    assert "# A note." in [line.strip() for line in lines]


def test_a_key_the_config_does_not_know_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"train\.epoch"):
        commented_yaml({"train": {"epoch": 3}})
