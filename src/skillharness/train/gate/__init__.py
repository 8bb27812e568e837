"""The gate: an anytime-valid betting e-process on paired outcomes (see docs/gate.md).

The training loop builds one :class:`Ladder` per candidate edit (it refuses an unreachable gate
before anything is spent), feeds it stages of paired outcomes, and stops at the first terminal
:class:`Decision`; :func:`mcnemar_guard` then runs once on the untargeted classes.
"""

from skillharness.train.gate.bets import (
    AGrapa,
    BetStrategy,
    OnlineNewtonStep,
    WithoutReplacement,
    make_bet_strategy,
)
from skillharness.train.gate.eprocess import INFRA, PairedOutcome, wealth_paths
from skillharness.train.gate.ladder import Decision, DecisionKind, Ladder, stage_ends
from skillharness.train.gate.mcnemar import McNemarResult, mcnemar_guard, mcnemar_harm_p
from skillharness.train.gate.planner import ClassPlan, effect_rates, estimate_power, plan_classes
from skillharness.train.gate.reachability import (
    Reachability,
    ensure_reachable,
    gate_alpha,
    min_net_wins,
    min_wins,
    reachability,
    reachability_for,
)
from skillharness.train.gate.rules import EProcessGate, FixedNStandardError, GateRule, StrictlyBetterMinibatch
from skillharness.train.gate.simulate import SimulationSummary, simulate

__all__ = [
    "INFRA",
    "AGrapa",
    "BetStrategy",
    "ClassPlan",
    "Decision",
    "DecisionKind",
    "EProcessGate",
    "FixedNStandardError",
    "GateRule",
    "Ladder",
    "McNemarResult",
    "OnlineNewtonStep",
    "PairedOutcome",
    "Reachability",
    "SimulationSummary",
    "StrictlyBetterMinibatch",
    "WithoutReplacement",
    "effect_rates",
    "ensure_reachable",
    "estimate_power",
    "gate_alpha",
    "make_bet_strategy",
    "mcnemar_guard",
    "mcnemar_harm_p",
    "min_net_wins",
    "min_wins",
    "plan_classes",
    "reachability",
    "reachability_for",
    "simulate",
    "stage_ends",
    "wealth_paths",
]
