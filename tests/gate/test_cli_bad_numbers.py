"""``gate plan`` and ``gate simulate`` refuse NaN and a class given twice instead of printing numbers."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli_support import command_app
from skillharness.commands.gate import parse_units, register
from skillharness.errors import ConfigError

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
