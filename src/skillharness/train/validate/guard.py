"""The McNemar guard after an accepted system or tool edit: fresh paired draws of every class with
val questions, sized by power at the discordance the run has measured, tested with Holm.

Its draws avoid those the gate consumed (at temperature 0 only those: a question the gate never reached
is still fresh), and its rows share the gate's table from :data:`GUARD_DRAW_BASE` on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from skillharness.infer import Draw
from skillharness.train.config import GateConfig
from skillharness.train.gate import Decision, guard_draws_per_class, mcnemar_guard, mcnemar_power
from skillharness.train.gate.power import measured_discordance
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import DrawPlan, draw_temperature, plan_guard_draws
from skillharness.train.state.records import Candidate
from skillharness.train.validate.arms import GUARD_DRAW_BASE, Arms, observation_rows
from skillharness.train.validate.scope import GateScope, scope_pool

__all__ = ["guard_discordance", "guard_size", "run_guard"]


def guard_size(config: GateConfig, scope: GateScope) -> int:
    """Guard draws per class this scope's gate may use (0: no guard): the room its samples need.

    A guard sized by power is sized when it runs, from the discordance measured by then, so the
    room is its cap (``guard_max_draws``), whatever size it takes.
    """
    if not scope.guard_classes:
        return 0
    return config.guard_draws if config.guard_draws is not None else config.guard_max_draws


def guard_discordance(
    config: GateConfig, counts: Mapping[str, Sequence[int]], classes: Sequence[str]
) -> float:
    """The discordance a guard over ``classes`` is sized by: the run's measured one (its paired
    observations of those classes, shrunk toward the prior), else the planning assumption."""
    seen = [counts[t] for t in classes if t in counts]
    if not seen:
        return config.guard_discordance
    return measured_discordance(sum(c[0] for c in seen), sum(c[1] for c in seen))


def _fresh_draws(
    ctx: TrainContext,
    scope: GateScope,
    candidate: Candidate,
    plan: DrawPlan,
    gate_index: int,
    *,
    per_class: int,
    drawn: int,
) -> list[Draw]:
    """``per_class`` draws of each guarded class that avoid the plan's first ``drawn`` draws."""
    draws: list[Draw] = []
    for task_type in scope.guard_classes:
        draws += plan_guard_draws(
            scope_pool(ctx, (task_type,), candidate.evidence_ids),
            seed=ctx.config.seed,
            gate_index=gate_index,
            temperature=draw_temperature(ctx.session.agent_config.sampling),
            n=per_class,
            used=plan.draws[:drawn],
            label=task_type,
            first_sample=plan.first_sample,
        )
    return draws


async def run_guard(
    ctx: TrainContext,
    arms: Arms,
    scope: GateScope,
    candidate: Candidate,
    plan: DrawPlan,
    gate_index: int,
    final: Decision,
    *,
    drawn: int,
    counts: Mapping[str, Sequence[int]],
    check_stop: Callable[[], None],
) -> dict[str, Any]:
    """The McNemar guard on fresh draws of each guarded class (run once, after an accept).

    Its draws avoid the ``drawn`` draws of the plan the gate consumed (only those: at temperature
    0 a question the gate never reached is still fresh), and it is sized by the discordance of the
    run's paired ``counts`` (``[discordant, observed]`` per class). ``check_stop`` (the budget)
    runs before it and about every stage's worth of draws inside it: a guard over every class can
    cost more than a small budget, and a stop inside it keeps what was answered for the resume.
    """
    check_stop()
    gate = ctx.config.gate
    discordance = guard_discordance(gate, counts, scope.guard_classes)
    per_class, sized = guard_draws_per_class(gate, len(scope.guard_classes), discordance=discordance)
    draws = _fresh_draws(ctx, scope, candidate, plan, gate_index, per_class=per_class, drawn=drawn)
    outcomes = await arms.outcomes(draws, check_stop)
    wealth = [(final.wealth, final.harm_wealth)] * len(draws)
    await ctx.store.aupsert(
        observation_rows(ctx, gate_index, GUARD_DRAW_BASE, draws, outcomes, wealth, "guard")
    )
    wins_losses = {t: [0, 0] for t in scope.guard_classes}
    for (q, _), o in zip(draws, outcomes, strict=True):
        if o.d:
            wins_losses[q.task_type][0 if o.d > 0 else 1] += 1
    results = mcnemar_guard({t: (w, lo) for t, (w, lo) in wins_losses.items()}, alpha=gate.mcnemar_alpha)
    return {
        "alpha": gate.mcnemar_alpha,
        "draws": len(draws),
        "draws_per_class": per_class,
        # What the size was chosen for (None: guard_draws fixed it, or guard_max_draws capped it).
        "sized_for": None
        if sized is None
        else {"harm": gate.guard_harm, "power": gate.guard_power, "discordance": discordance},
        # Its power at the discordance measured by now (the planning figure until there is one).
        "power": mcnemar_power(
            per_class, gate.guard_harm, discordance, gate.mcnemar_alpha / max(len(scope.guard_classes), 1)
        ),
        "infra": sum(o.d is None for o in outcomes),
        "classes": {
            r.label: {"wins": r.wins, "losses": r.losses, "p": r.p_value, "harmed": r.harmed} for r in results
        },
        "harmed": [r.label for r in results if r.harmed],
    }
