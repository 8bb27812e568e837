"""The McNemar guard after an accepted system or tool edit: fresh paired draws of every class with
val questions, sized by power at the discordance the run has measured, asked in stages so that a
class the draws clear of the planned drop stops early, and tested with Holm.

A sized guard's power holds only for a harmed class whose discordance is no larger than the one it
was sized at, and a harmed class's is often larger than the mostly null edits the run measured. So
each class keeps drawing, stage by stage up to ``guard_max_draws``, until its draws can see the drop
at its own discordance (measured from which draws were discordant, not from their signs, so the
exact test stays exact), and clearing does not assume a discordance at all
(:func:`~skillharness.train.gate.harm_cleared`).

Its draws avoid those the gate consumed (at temperature 0 only those: a question the gate never reached
is still fresh), and its rows share the gate's table from :data:`GUARD_DRAW_BASE` on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from skillharness.infer import Draw
from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    Decision,
    PairedOutcome,
    guard_draws_per_class,
    guard_promise,
    guard_reach,
    harm_cleared,
    mcnemar_guard,
)
from skillharness.train.gate.power import measured_discordance
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import DrawPlan, draw_temperature, plan_guard_draws
from skillharness.train.state.records import Candidate
from skillharness.train.validate.arms import GUARD_DRAW_BASE, Arms, observation_rows
from skillharness.train.validate.scope import GateScope, scope_pool

__all__ = [
    "GUARD_STAGE",
    "ClassTally",
    "GuardAsk",
    "StageRule",
    "StagedDraws",
    "ask_in_stages",
    "class_stop",
    "guard_discordance",
    "guard_evidence",
    "guard_size",
    "run_guard",
    "stage_rule",
]

# Draws asked of each open class between clearing looks: a look costs a stage's slowest draw, and a
# class needs several discordant pairs before it can clear.
GUARD_STAGE = 16

# One stage of the guard: class -> (the plan index of its first draw, its draws); and its answer.
GuardAsk = Callable[
    [Mapping[str, tuple[int, Sequence[Draw]]]], Awaitable[Mapping[str, Sequence[PairedOutcome]]]
]


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


@dataclass(frozen=True)
class ClassTally:
    """One guarded class's paired outcomes so far."""

    wins: int = 0
    losses: int = 0
    ties: int = 0
    infra: int = 0

    def plus(self, outcomes: Sequence[PairedOutcome]) -> ClassTally:
        ds = [o.d for o in outcomes]
        return ClassTally(
            self.wins + sum(d == 1 for d in ds),
            self.losses + sum(d == -1 for d in ds),
            self.ties + sum(d == 0 for d in ds),
            self.infra + sum(d is None for d in ds),
        )

    @property
    def discordance(self) -> float:
        """The share of its answered draws where exactly one side was right (0: none answered)."""
        observed = self.wins + self.losses + self.ties
        return (self.wins + self.losses) / observed if observed else 0.0


@dataclass(frozen=True)
class StageRule:
    """When a guarded class stops drawing, besides having taken all its draws."""

    harm: float
    clear: float | None  # guard_clear (None: no clearing)
    # The run's measured discordance: each class's least sizing discordance, and the clearing bet's.
    discordance: float
    # Draws asked -> the largest discordance at which they give the stated power (empty: fixed size).
    reach: Mapping[int, float] = field(default_factory=dict)


def stage_rule(config: GateConfig, guarded: int, discordance: float, most: int) -> StageRule:
    """The rule of a guard over ``guarded`` classes at the run's ``discordance``, whose classes can
    each take ``most`` draws: sized by power, a class stops once its draws reach its discordance."""
    reach: dict[int, float] = {}
    if config.guard_draws is None:
        level = config.mcnemar_alpha / max(guarded, 1)
        for n in range(GUARD_STAGE, most + 1, GUARD_STAGE):
            if (r := guard_reach(config, n, level)) is not None:
                reach[n] = r
    return StageRule(config.guard_harm, config.guard_clear, discordance, reach)


def class_stop(tally: ClassTally, asked: int, planned: int, rule: StageRule) -> str | None:
    """Why a class that has ``asked`` of its ``planned`` draws stops (None: it asks another stage).

    ``all``: it took them all. ``sized``: its draws have the stated power at its own discordance
    (never taken below the run's) — a choice from which draws were discordant, not from their
    signs, so the exact test's p-value stays exact. ``cleared``: a drop of ``harm`` is implausible
    (its counts then stop at a time their signs chose, and it enters Holm with p-value 1)."""
    if asked >= planned:
        return "all"
    reach = rule.reach.get(asked)
    if reach is not None and max(rule.discordance, tally.discordance) <= reach:
        return "sized"
    if rule.clear is not None and harm_cleared(
        tally.wins, tally.losses, tally.ties, harm=rule.harm, discordance=rule.discordance, bound=rule.clear
    ):
        return "cleared"
    return None


@dataclass(frozen=True)
class StagedDraws:
    """What a guard's stages asked: per class its tally, its draws asked, and why it stopped."""

    tallies: Mapping[str, ClassTally]
    asked: Mapping[str, int]
    stops: Mapping[str, str]

    @property
    def cleared(self) -> dict[str, int]:
        """Draws each cleared class took before it stopped."""
        return {t: self.asked[t] for t, why in self.stops.items() if why == "cleared"}

    @property
    def infra(self) -> int:
        return sum(t.infra for t in self.tallies.values())


async def ask_in_stages(
    ask: GuardAsk, planned: Mapping[str, Sequence[Draw]], rule: StageRule, check_stop: Callable[[], None]
) -> StagedDraws:
    """Ask each open class :data:`GUARD_STAGE` draws at a time until :func:`class_stop` stops it.

    ``check_stop`` (the budget) runs before every stage: one stage over many classes is about one
    rollout chunk, which the rollout's own checks (between chunks) never split, so without it a
    stop waited for the whole guard. What ``ask`` answered before a stop is kept (it writes its
    rows), and the resume reads it back through the same stages."""
    # Rows keep the index each draw has in the whole plan, however many stages reached it.
    offsets = dict(zip(planned, accumulate((len(d) for d in planned.values()), initial=0), strict=False))
    tallies = {t: ClassTally() for t in planned}
    asked = dict.fromkeys(planned, 0)
    stops: dict[str, str] = {t: "all" for t in planned if not planned[t]}
    while open_classes := [t for t in planned if t not in stops]:
        check_stop()
        stage = {
            t: (offsets[t] + asked[t], planned[t][asked[t] : asked[t] + GUARD_STAGE]) for t in open_classes
        }
        outcomes = await ask(stage)
        for t, (_, draws) in stage.items():
            tallies[t] = tallies[t].plus(outcomes[t])
            asked[t] += len(draws)
            if why := class_stop(tallies[t], asked[t], len(planned[t]), rule):
                stops[t] = why
    return StagedDraws(tallies, asked, stops)


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


def _arms_ask(
    ctx: TrainContext,
    arms: Arms,
    gate_index: int,
    wealth: tuple[float, float],
    check_stop: Callable[[], None],
) -> GuardAsk:
    """A stage asked of both arms, its rows written before it returns (a later stop keeps them)."""

    async def ask(stage: Mapping[str, tuple[int, Sequence[Draw]]]) -> dict[str, Sequence[PairedOutcome]]:
        outcomes = await arms.outcomes([d for _, draws in stage.values() for d in draws], check_stop)
        answered: dict[str, Sequence[PairedOutcome]] = {}
        rows, at = [], 0
        for t, (start, draws) in stage.items():
            answered[t] = mine = outcomes[at : at + len(draws)]
            rows += observation_rows(
                ctx, gate_index, GUARD_DRAW_BASE + start, draws, mine, [wealth] * len(draws), "guard"
            )
            at += len(draws)
        await ctx.store.aupsert(rows)
        return answered

    return ask


def guard_evidence(
    gate: GateConfig,
    staged: StagedDraws,
    guarded: int,
    discordance: float,
    planned: Mapping[str, Sequence[Draw]],
) -> dict[str, Any]:
    """The guard's record of ``staged`` over ``guarded`` classes sized at ``discordance``, with
    ``planned`` draws each at most: Holm over its classes, its size, and the power it keeps, and for
    which harmed classes."""
    per_class, sized = guard_draws_per_class(gate, guarded, discordance=discordance)
    most = gate.guard_draws if gate.guard_draws is not None else gate.guard_max_draws
    results = mcnemar_guard(
        {t: (c.wins, c.losses) for t, c in staged.tallies.items()},
        alpha=gate.mcnemar_alpha,
        cleared=staged.cleared,
    )
    level = gate.mcnemar_alpha / max(guarded, 1)
    # At temperature 0 a class may have fewer fresh draws than the cap: the promise is the least one's.
    fewest = min((len(d) for d in planned.values()), default=0)
    promise = guard_promise(gate, fewest, discordance, level)
    return {
        "alpha": gate.mcnemar_alpha,
        "draws": sum(staged.asked.values()),
        # The size at the run's discordance; a class whose own is larger draws more, up to draws_max.
        "draws_per_class": per_class,
        "draws_max": most,
        # What the size was chosen for (None: guard_draws fixed it, or guard_max_draws capped it).
        "sized_for": None
        if sized is None
        else {"harm": gate.guard_harm, "power": gate.guard_power, "discordance": discordance},
        # A lower bound on the chance of flagging a guard_harm drop (clearing's cost taken off),
        # which holds on a harmed class whose discordance is at most power_discordance.
        "power": promise.power,
        "power_discordance": promise.discordance,
        "infra": staged.infra,
        "clear": gate.guard_clear,
        # Draws each cleared class took before it stopped.
        "cleared": staged.cleared,
        "classes": {
            r.label: {"wins": r.wins, "losses": r.losses, "p": r.p_value, "harmed": r.harmed} for r in results
        },
        "harmed": [r.label for r in results if r.harmed],
    }


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
    run's paired ``counts`` (``[discordant, observed]`` per class), each class up to
    ``guard_max_draws`` by its own. Each open class is asked :data:`GUARD_STAGE` draws at a time;
    with ``guard_clear`` set, a class whose draws make the planned drop implausible stops there
    (``cleared``). ``check_stop`` (the budget) runs before every stage and inside a large one: a
    guard over every class can cost more than a small budget, and a stop inside it keeps what was
    answered, which the resume reads back through the same stages.
    """
    gate = ctx.config.gate
    guarded = len(scope.guard_classes)
    discordance = guard_discordance(gate, counts, scope.guard_classes)
    most = gate.guard_draws if gate.guard_draws is not None else gate.guard_max_draws
    planned = _fresh_draws(ctx, scope, candidate, plan, gate_index, per_class=most, drawn=drawn)
    ask = _arms_ask(ctx, arms, gate_index, (final.wealth, final.harm_wealth), check_stop)
    staged = await ask_in_stages(ask, planned, stage_rule(gate, guarded, discordance, most), check_stop)
    return guard_evidence(gate, staged, guarded, discordance, planned)
