"""Commands read the gate's defaults from ``GateConfig``; none restates them."""

from __future__ import annotations

import typer
import typer.main

from skillharness.commands.gate import gate_app
from skillharness.commands.split import split_gate
from skillharness.train.config import GateConfig

_FLAG_FIELD = {
    "--alpha": "alpha",
    "--bet-cap": "bet_cap",
    "--strategy": "bet_strategy",
    "--budget": "n_max",
    "--n-max": "n_max",
    "--first-stage": "first_stage",
    "--growth": "stage_growth",
    "--min-distinct": "min_distinct",
}


def test_gate_plan_and_simulate_defaults_are_the_configs() -> None:
    defaults = GateConfig()
    command = typer.main.get_command(gate_app)
    assert isinstance(command, typer.core.TyperGroup)
    seen = set()
    for name in ("plan", "simulate"):
        for param in command.commands[name].params:
            flag = next((o for o in param.opts if o in _FLAG_FIELD), None)
            if flag is not None:
                assert param.default == getattr(defaults, _FLAG_FIELD[flag]), (name, flag)
                seen.add(flag)
    assert seen == set(_FLAG_FIELD)


def test_split_micro_report_uses_the_gates_defaults() -> None:
    defaults = GateConfig()
    assert split_gate() == defaults
    assert split_gate(0.2, None) == defaults.model_copy(update={"alpha": 0.2})
    assert split_gate(min_distinct=6, n_max=64) == defaults.model_copy(
        update={"min_distinct": 6, "n_max": 64}
    )
    assert split_gate(reserve=0.25) == defaults.model_copy(update={"reserve": 0.25})
