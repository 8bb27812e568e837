"""``gate plan`` and ``gate simulate`` refuse NaN and a class given twice instead of printing numbers."""

from __future__ import annotations

import importlib

import pytest
from typer.testing import CliRunner

from cli_support import command_app
from skillharness.commands.gate import parse_units, register
from skillharness.errors import ConfigError
from skillharness.train import EProcessGate
from skillharness.train.config import GateConfig

APP = command_app(register)


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("--p-plus", "nan", "--p-minus", "0.1"), "--p-plus"),
        (("--p-plus", "0.1", "--p-minus", "nan"), "--p-minus"),
        (("--p-plus", "-0.1", "--p-minus", "0.1"), "--p-plus"),
        (("--p-plus", "0.1", "--p-minus", "1.5"), "--p-minus"),
    ],
)
def test_simulate_refuses_a_rate_that_is_no_probability(args: tuple[str, ...], flag: str) -> None:
    result = CliRunner().invoke(APP, ["gate", "simulate", *args, "--runs", "10"], env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{flag}'" in result.output
    assert "accept" not in result.output  # no table


@pytest.mark.parametrize("effects", ["nan", "0.1,nan", "inf", "-inf,0.1"])
def test_plan_refuses_an_effect_that_is_no_finite_number(effects: str) -> None:
    result = CliRunner().invoke(
        APP, ["gate", "plan", "--units", "A=30", "--effects", effects, "--runs", "100"]
    )
    assert isinstance(result.exception, ConfigError), result.output
    assert str(result.exception) == f"--effects must be finite numbers, got {effects!r}"


def test_a_class_given_twice_in_units_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="--units gives class 'Object Reasoning' twice"):
        parse_units("Object Reasoning=5,OCR Problems=3, Object Reasoning =7", 1)
    assert parse_units("A=5,B=7", 2) == {"A": 10, "B": 14}


@pytest.mark.parametrize(
    ("command", "args", "said"),
    [
        (
            "plan",
            ("--budget", "0"),
            "gate settings: --budget: Input should be greater than or equal to 1",
        ),
        (
            "plan",
            ("--discordance", "1.5"),
            "gate settings: --discordance: Input should be less than or",
        ),
        (
            "plan",
            ("--guard-clear", "0.99"),
            "gate settings: --guard-power (0.8) + --guard-clear (0.99)",
        ),
        ("plan", ("--effects", "0.1,-0.5"), "--effects -0.5: no effect is larger in size than the share"),
        ("plan", ("--temperature", "0.7", "--budget", "1000000"), "lower --runs or --budget"),
        ("simulate", ("--n-max", "0"), "invalid gate settings: --n-max: Input should be greater than"),
        ("simulate", ("--growth", "0.5"), "invalid gate settings: --growth: Input should be greater than"),
        ("simulate", ("--p-plus", "0.7", "--p-minus", "0.6"), "--p-plus 0.7 + --p-minus 0.6 is above 1"),
        ("simulate", ("--n-max", "1000000"), "lower --runs or --n-max"),
    ],
)
def test_a_bad_flag_is_refused_by_the_flags_name(command: str, args: tuple[str, ...], said: str) -> None:
    """The refusals named train.gate's fields (n_max for --budget), a sum of rates without its flags,
    and a budget of 10^6 died of a MemoryError traceback (37 GiB asked at once)."""
    rates = ("--units", "A=30") if command == "plan" else ("--p-plus", "0.3", "--p-minus", "0.1")
    given = dict(zip(args[::2], args[1::2], strict=True))
    base = dict(zip(rates[::2], rates[1::2], strict=True))
    flags = [part for flag, value in {**base, **given}.items() for part in (flag, value)]
    result = CliRunner().invoke(APP, ["gate", command, *flags, "--runs", "5000"])
    assert isinstance(result.exception, ConfigError), result.output
    assert said in str(result.exception)


@pytest.mark.parametrize("command", ["plan", "simulate"])
def test_a_negative_seed_is_refused_by_its_flag(command: str) -> None:
    """numpy refuses a negative seed with a ValueError: it was a traceback."""
    rates = ["--units", "A=30"] if command == "plan" else ["--p-plus", "0.3", "--p-minus", "0.1"]
    result = CliRunner().invoke(APP, ["gate", command, *rates, "--seed", "-1", "--runs", "100"])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--seed'" in result.output


def test_simulating_in_chunks_gives_the_numbers_drawn_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gates are drawn a chunk at a time to bound memory; the generator's stream is the same."""
    module = importlib.import_module("skillharness.train.gate.simulate")
    rule = EProcessGate(GateConfig(n_max=200))
    whole = module.simulate(rule, 0.3, 0.15, n=200, runs=500, seed=3)
    monkeypatch.setattr(module, "_CHUNK", 200 * 37 + 5)  # 37 gates a chunk, the last one short
    assert module.simulate(rule, 0.3, 0.15, n=200, runs=500, seed=3) == whole
