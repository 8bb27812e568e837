"""The McNemar guard after an accepted system or tool edit: fresh paired draws of every class with
val questions, sized by power at the discordance the run has measured, asked in stages so that a
class the draws clear of the planned drop stops early, and tested with Holm.

Its draws avoid those the gate consumed (at temperature 0 only those: a question the gate never reached
is still fresh), and its rows share the gate's table from :data:`GUARD_DRAW_BASE` on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from typing import Any

from skillharness.infer import Draw
from skillharness.train.config import GateConfig
from skillharness.train.gate import Decision, guard_draws_per_class, guard_power, harm_cleared, mcnemar_guard
from skillharness.train.gate.power import measured_discordance
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import DrawPlan, draw_temperature, plan_guard_draws
from skillharness.train.state.records import Candidate
from skillharness.train.validate.arms import GUARD_DRAW_BASE, Arms, observation_rows
from skillharness.train.validate.scope import GateScope, scope_pool

__all__ = ["GUARD_STAGE", "guard_discordance", "guard_size", "run_guard"]

# Draws asked of each open class between clearing looks: a look costs a stage's slowest draw, and a
# class needs several discordant pairs before it can clear.
GUARD_STAGE = 16


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
    observations of those classes, shrunk toward the prior), else the planning assumption.

    Never below ``guard_harm``: a drop of that size makes at least that share of draws discordant,
    and arms that mostly agree (greedy answers, shared seeds) measure less."""
    seen = [counts[t] for t in classes if t in counts]
    if not seen:
        return max(config.guard_discordance, config.guard_harm)
    return max(measured_discordance(sum(c[0] for c in seen), sum(c[1] for c in seen)), config.guard_harm)


def _fresh_draws(
    ctx: TrainContext,
    scope: GateScope,
    candidate: Candidate,
    plan: DrawPlan,
    gate_index: int,
    *,
    per_class: int,
    drawn: int,
) -> dict[str, tuple[Draw, ...]]:
    """``per_class`` draws of each guarded class that avoid the plan's first ``drawn`` draws."""
    return {
        task_type: plan_guard_draws(
            scope_pool(ctx, (task_type,), candidate.evidence_ids),
            seed=ctx.config.seed,
            gate_index=gate_index,
            temperature=draw_temperature(ctx.session.agent_config.sampling),
            n=per_class,
            used=plan.draws[:drawn],
            label=task_type,
            first_sample=plan.first_sample,
        )
        for task_type in scope.guard_classes
    }


async def _ask_in_stages(
    ctx: TrainContext,
    arms: Arms,
    planned: Mapping[str, Sequence[Draw]],
    gate_index: int,
    wealth: tuple[float, float],
    discordance: float,
    check_stop: Callable[[], None],
) -> tuple[dict[str, list[int]], dict[str, int], dict[str, int], int]:
    """``(wins and losses, draws asked, cleared classes, INFRA outcomes)`` per class, asking each open
    class :data:`GUARD_STAGE` draws at a time until it has all its draws or is cleared."""
    gate = ctx.config.gate
    # Rows keep the index each draw has in the whole plan, however many stages reached it.
    offsets = dict(zip(planned, accumulate((len(d) for d in planned.values()), initial=0), strict=False))
    wins_losses = {t: [0, 0] for t in planned}
    asked = dict.fromkeys(planned, 0)
    cleared: dict[str, int] = {}
    infra = 0
    while open_classes := [t for t in planned if t not in cleared and asked[t] < len(planned[t])]:
        stage = {t: planned[t][asked[t] : asked[t] + GUARD_STAGE] for t in open_classes}
        outcomes = await arms.outcomes([d for draws in stage.values() for d in draws], check_stop)
        rows, at = [], 0
        for t, draws in stage.items():
            mine = outcomes[at : at + len(draws)]
            start = GUARD_DRAW_BASE + offsets[t] + asked[t]
            rows += observation_rows(ctx, gate_index, start, draws, mine, [wealth] * len(draws), "guard")
            for o in mine:
                if o.d:
                    wins_losses[t][0 if o.d > 0 else 1] += 1
            infra += sum(o.d is None for o in mine)
            at += len(draws)
            asked[t] += len(draws)
            # A class that has taken all its draws has an exact p-value: only an early stop clears.
            if (
                asked[t] < len(planned[t])
                and gate.guard_clear is not None
                and harm_cleared(
                    *wins_losses[t], harm=gate.guard_harm, discordance=discordance, bound=gate.guard_clear
                )
            ):
                cleared[t] = asked[t]
        await ctx.store.aupsert(rows)
    return wins_losses, asked, cleared, infra


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
    run's paired ``counts`` (``[discordant, observed]`` per class). Each open class is asked
    :data:`GUARD_STAGE` draws at a time; with ``guard_clear`` set, a class whose draws make the
    planned drop implausible stops there (``cleared``). ``check_stop`` (the budget) runs before it
    and inside each stage: a guard over every class can cost more than a small budget, and a stop
    inside it keeps what was answered, which the resume reads back through the same stages.
    """
    check_stop()
    gate = ctx.config.gate
    discordance = guard_discordance(gate, counts, scope.guard_classes)
    per_class, sized = guard_draws_per_class(gate, len(scope.guard_classes), discordance=discordance)
    planned = _fresh_draws(ctx, scope, candidate, plan, gate_index, per_class=per_class, drawn=drawn)
    wins_losses, asked, cleared, infra = await _ask_in_stages(
        ctx, arms, planned, gate_index, (final.wealth, final.harm_wealth), discordance, check_stop
    )
    results = mcnemar_guard(
        {t: (w, lo) for t, (w, lo) in wins_losses.items()}, alpha=gate.mcnemar_alpha, cleared=cleared
    )
    level = gate.mcnemar_alpha / max(len(scope.guard_classes), 1)
    return {
        "alpha": gate.mcnemar_alpha,
        "draws": sum(asked.values()),
        "draws_per_class": per_class,
        # What the size was chosen for (None: guard_draws fixed it, or guard_max_draws capped it).
        "sized_for": None
        if sized is None
        else {"harm": gate.guard_harm, "power": gate.guard_power, "discordance": discordance},
        # Its power at the discordance measured by now (the planning figure until there is one),
        # less what clearing may cost: a lower bound.
        "power": guard_power(gate, per_class, discordance, level),
        "infra": infra,
        "clear": gate.guard_clear,
        # Draws each cleared class took before it stopped.
        "cleared": cleared,
        "classes": {
            r.label: {"wins": r.wins, "losses": r.losses, "p": r.p_value, "harmed": r.harmed} for r in results
        },
        "harmed": [r.label for r in results if r.harmed],
    }
