"""The gate: an anytime-valid betting e-process on paired outcomes (see docs/gate.md).

The training loop builds one :class:`Ladder` per candidate edit (it refuses an unreachable gate
before anything is spent), feeds it stages of paired outcomes, and stops at the first terminal
:class:`Decision`; :func:`mcnemar_guard` then runs once on the other classes the edit reaches
(a system or tool edit: every class with val questions), sized by :func:`plan_guard`.
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
from skillharness.train.gate.levels import best_gate_alpha, gate_alpha, lond_gamma, run_guarantee
from skillharness.train.gate.mcnemar import (
    McNemarResult,
    clearing_bet,
    harm_cleared,
    mcnemar_draws,
    mcnemar_guard,
    mcnemar_harm_p,
    mcnemar_power,
)
from skillharness.train.gate.planner import (
    ClassPlan,
    GuardClass,
    GuardPlan,
    GuardPromise,
    effect_rates,
    estimate_power,
    guard_draws_per_class,
    guard_power,
    guard_promise,
    guard_reach,
    plan_classes,
    plan_guard,
)
from skillharness.train.gate.power import coupled_discordance, independent_discordance, sized_draws
from skillharness.train.gate.reachability import (
    Reachability,
    ensure_reachable,
    last_reachable_gate,
    min_net_wins,
    min_wins,
    reachability,
    reachability_for,
    threshold,
)
from skillharness.train.gate.rules import EProcessGate, FixedNStandardError, GateRule, StrictlyBetterMinibatch
from skillharness.train.gate.simulate import MAX_OBSERVATIONS, SimulationSummary, simulate

__all__ = [
    "INFRA",
    "MAX_OBSERVATIONS",
    "AGrapa",
    "BetStrategy",
    "ClassPlan",
    "Decision",
    "DecisionKind",
    "EProcessGate",
    "FixedNStandardError",
    "GateRule",
    "GuardClass",
    "GuardPlan",
    "GuardPromise",
    "Ladder",
    "McNemarResult",
    "OnlineNewtonStep",
    "PairedOutcome",
    "Reachability",
    "SimulationSummary",
    "StrictlyBetterMinibatch",
    "WithoutReplacement",
    "best_gate_alpha",
    "clearing_bet",
    "coupled_discordance",
    "effect_rates",
    "ensure_reachable",
    "estimate_power",
    "gate_alpha",
    "guard_draws_per_class",
    "guard_power",
    "guard_promise",
    "guard_reach",
    "harm_cleared",
    "independent_discordance",
    "last_reachable_gate",
    "lond_gamma",
    "make_bet_strategy",
    "mcnemar_draws",
    "mcnemar_guard",
    "mcnemar_harm_p",
    "mcnemar_power",
    "min_net_wins",
    "min_wins",
    "plan_classes",
    "plan_guard",
    "reachability",
    "reachability_for",
    "run_guarantee",
    "simulate",
    "sized_draws",
    "stage_ends",
    "threshold",
    "wealth_paths",
]
