"""A training run checks its endpoints before it spends anything, whatever its caller: a model name
of a training role the server does not serve, or a port nothing listens on, stops run_training
before the baseline's first question (the CLI's preflight says the same, but a library caller or
``--skip-preflight`` used to go on and fail every call)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from loop_support import loop_config, train_once

from bench_support import Bench
from net_support import free_port
from skillharness.errors import ConfigError, FatalLLMError, TemplateError
from skillharness.sim import SimServer


def _with_llm(path: Path, **changes: object) -> Path:
    doc = yaml.safe_load(path.read_text())
    for key, value in changes.items():
        section, _, name = key.partition(".")
        doc.setdefault(section, {})[name] = value
    path.write_text(yaml.safe_dump(doc))
    return path


async def test_a_role_model_the_server_does_not_serve_stops_training_before_any_question(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = loop_config(tmp_path, bench, sim, roles={"judge": {"model": "judge-xl"}})
    with pytest.raises(ConfigError) as info:
        await train_once(path, "typo")
    assert "model 'judge-xl' (train.roles.judge.model) is not served" in str(info.value)
    assert "it lists 'sim-vl'" in str(info.value)
    assert "agent" not in sim.stats()["roles"], "no question was asked"


async def test_a_port_nothing_listens_on_stops_training_in_about_a_second(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    path = _with_llm(loop_config(tmp_path, bench, sim), **{"llm.endpoints": [{"base_url": dead}]})
    started = time.monotonic()
    with pytest.raises(FatalLLMError) as info:
        await train_once(path, "dead")
    assert time.monotonic() - started < 10.0
    assert f"nothing accepts them at {dead}/models" in str(info.value)


async def test_a_prompts_dir_that_is_a_file_names_its_setting_without_preflight(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    """``--skip-preflight`` met it in the loop as "prompt folder X does not exist", naming no setting."""
    prompts = tmp_path / "prompts.md"
    prompts.write_text("a file, not the folder of templates\n")
    path = loop_config(tmp_path, bench, sim, prompts_dir=str(prompts))
    with pytest.raises(TemplateError) as info:
        await train_once(path, "prompts")
    assert str(info.value) == f"train.prompts_dir: prompt folder {prompts} is a file, not a folder"
    assert "agent" not in sim.stats()["roles"], "no question was asked"
