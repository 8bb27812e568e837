"""Power planning: how big must a class's val pool be for its gate to accept a real improvement?

An effect is the true accuracy gain ``delta = p_plus - p_minus`` at a given discordance rate
``r = p_plus + p_minus`` (the share of draws where exactly one side is right), so
``p_plus = (r + delta) / 2`` and ``p_minus = (r - delta) / 2``. Power is estimated by seeded
simulation of the configured gate with the class's drawable observations as its budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillharness.errors import ConfigError
from skillharness.train.config import GateConfig
from skillharness.train.gate.reachability import Reachability, reachability_for
from skillharness.train.gate.rules import EProcessGate
from skillharness.train.gate.simulate import simulate

__all__ = ["ClassPlan", "effect_rates", "estimate_power", "plan_classes"]


def effect_rates(delta: float, discordance: float) -> tuple[float, float]:
    """``(p_plus, p_minus)`` for an accuracy gain ``delta`` at discordance rate ``discordance``."""
    if not 0 < discordance <= 1 or abs(delta) > discordance:
        raise ConfigError(
            f"need 0 < discordance <= 1 and |delta| <= discordance; got delta={delta}, "
            f"discordance={discordance}",
            field="effects/discordance",
        )
    return (discordance + delta) / 2, (discordance - delta) / 2


def estimate_power(
    config: GateConfig, drawable: int, delta: float, discordance: float, *, runs: int = 2000, seed: int = 0
) -> float:
    """Probability that the gate accepts within ``min(n_max, drawable)`` observations."""
    budget = min(config.n_max, drawable)
    if budget < 1:
        return 0.0
    p_plus, p_minus = effect_rates(delta, discordance)
    gate = EProcessGate(config.model_copy(update={"n_max": budget}))
    return simulate(gate, p_plus, p_minus, n=budget, runs=runs, seed=seed).accept_rate


@dataclass(frozen=True)
class ClassPlan:
    """Reachability and power of one class's gate."""

    label: str
    drawable: int
    reach: Reachability
    power: tuple[tuple[float, float], ...]


def plan_classes(
    drawable: Mapping[str, int],
    config: GateConfig,
    *,
    effects: Sequence[float] = (0.05, 0.10, 0.20),
    discordance: float = 0.3,
    runs: int = 2000,
    seed: int = 0,
) -> tuple[ClassPlan, ...]:
    """Plan every class: reachable?, minimum wins, power at each effect size."""
    plans = []
    for label, n in drawable.items():
        reach = reachability_for(config, n)
        power = tuple(
            (
                delta,
                estimate_power(config, n, delta, discordance, runs=runs, seed=seed)
                if reach.reachable
                else 0.0,
            )
            for delta in effects
        )
        plans.append(ClassPlan(label, n, reach, power))
    return tuple(plans)
