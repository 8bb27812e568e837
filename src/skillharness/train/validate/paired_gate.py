"""Validate a candidate: paired draws on val, fed to the gate's ladder, then the McNemar guard.

Order of work (SPEC section 5, docs/train.md "Validation"):

1. The scope (:mod:`skillharness.train.validate.scope`): a skill edit is tested on its own class; a
   system or tool edit on every trained class pooled, and then guarded on every class with val
   questions, trained or not.
2. The draw plan (:mod:`skillharness.train.state.draws`), deterministic from (seed, gate index), minus
   the case pack's evidence questions. Its sample indices start at the gate's ``first_sample``,
   past every index an earlier gate of the run may have used: no gate replays another's samples.
   Reachability is checked before anything is asked: an unreachable gate ends as
   ``reject_inertia`` with zero agent calls (audit P0-3).
3. Ladder stages: the incumbent's samples come from the BaselineCache or are drawn fresh (child
   run ``g<k>.inc``) and cached; the candidate's are fresh (child run ``g<k>.cand``). INFRA
   outcomes are asked again up to ``train.infra_retries`` times, then skipped and counted; they
   never enter the cache or the wealth (audit P1-4). A draw the server refused on either arm (a
   body, image or token limit, ``RequestRefused``) is skipped the same way, never a loss, and
   counted in the evidence's ``refused``. Every observation is written as a
   ``GateObservationRow`` with the wealth after it.
4. After an accept, the McNemar guard on fresh draws of each guarded class → ``reject_guard``;
   its draws per class are sized by power (:func:`skillharness.train.gate.plan_guard`).

A resumed gate replays the same plan; the rollouts read back the predictions already stored,
so it ends with the same observations and the same decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from skillharness.errors import GateError
from skillharness.skills import Bundle
from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    Decision,
    DecisionKind,
    FixedNStandardError,
    GateRule,
    Ladder,
    StrictlyBetterMinibatch,
    WithoutReplacement,
    gate_alpha,
    make_bet_strategy,
    reachability,
)
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import DrawPlan, draw_temperature, plan_draws
from skillharness.train.state.outage import InfraOutage
from skillharness.train.state.records import Candidate, GateOutcome, GateReason
from skillharness.train.validate.arms import Arms, observation_rows, wealth_after
from skillharness.train.validate.guard import guard_size, run_guard
from skillharness.train.validate.scope import GateScope, gate_scope, scope_pool

__all__ = [
    "draw_plan",
    "gate_alpha_for",
    "infra_outage",
    "new_ladder",
    "next_window",
    "plan_evidence",
    "validate",
    "verdict",
]

_REASONS = {
    DecisionKind.ACCEPT: GateReason.ACCEPT,
    DecisionKind.REJECT_EVIDENCE: GateReason.REJECT_EVIDENCE,
    DecisionKind.REJECT_INERTIA: GateReason.REJECT_INERTIA,
}


def gate_alpha_for(config: GateConfig, k: int, *, accepts: int = 0) -> float:
    """The level of a run's ``k``-th gate (1-based) under ``config.alpha_spending``, with
    ``accepts`` accepts before it (``elond`` only)."""
    return gate_alpha(config.alpha, config.alpha_spending, k, accepts=accepts)


def draw_plan(
    ctx: TrainContext,
    candidate: Candidate,
    gate_index: int,
    *,
    first_sample: int,
    n_max: int | None = None,
    plan_key: int | None = None,
) -> tuple[GateScope, DrawPlan]:
    """The scope and the deterministic draw plan of ``candidate``'s gate number ``gate_index``,
    its sample indices counting from ``first_sample`` (``n_max``: the gate's size, default the config's).

    ``plan_key`` (a shared plan's first sample) orders the draws instead of the gate index: every
    test with the same key and scope then draws the same (question, sample) sequence, so the
    incumbent's side of it is asked once and read from the BaselineCache after that.
    """
    scope = gate_scope(ctx, candidate.target)
    plan = plan_draws(
        scope_pool(ctx, scope.classes, candidate.evidence_ids),
        seed=ctx.config.seed,
        gate_index=gate_index if plan_key is None else plan_key,
        temperature=draw_temperature(ctx.session.agent_config.sampling),
        n_max=ctx.config.gate.n_max if n_max is None else n_max,
        first_sample=first_sample,
        salt="target" if plan_key is None else "shared",
    )
    return scope, plan


def next_window(ctx: TrainContext, ladder: Ladder) -> int:
    """Draws to ask next: the rest of the ladder's stage, at most ``ctx.gate_window``."""
    return min(ladder.next_request, ctx.gate_window)


async def _run_ladder(
    ctx: TrainContext,
    arms: Arms,
    ladder: Ladder,
    plan: DrawPlan,
    gate_index: int,
    check_stop: Callable[[], None],
) -> tuple[Decision | None, int]:
    """Feed the ladder from the plan a window at a time (``ctx.gate_window``, never past a stage's
    end); returns the last decision and draws consumed. ``check_stop`` runs before every window
    after the first (the caller checked before the first)."""
    cursor, decision = 0, None
    while ladder.next_request > 0 and cursor < len(plan.draws):
        if cursor:
            check_stop()
        window = plan.draws[cursor : cursor + next_window(ctx, ladder)]
        outcomes = await arms.outcomes(window)
        observed_before = len(ladder.wealth_path()[0])
        decision = ladder.feed(outcomes)
        wealth = wealth_after(ladder, outcomes, observed_before)
        await ctx.store.aupsert(observation_rows(ctx, gate_index, cursor, window, outcomes, wealth, "target"))
        cursor += len(window)
    return decision, cursor


def _rule(config: GateConfig) -> GateRule:
    if config.rule == "minibatch":
        size = config.minibatch_size
        return StrictlyBetterMinibatch(size=size, name=f"strictly better on {size}")
    return FixedNStandardError(n=config.n_max, name=f"mean > 2 SE at n = {config.n_max}")


async def _validate_by_rule(
    ctx: TrainContext,
    arms: Arms,
    scope: GateScope,
    plan: DrawPlan,
    gate_index: int,
    alpha: float,
    evidence: dict[str, Any],
) -> GateOutcome:
    """A baseline rule (``gate.rule`` minibatch or fixed_n) on the same draws, arms and cache.

    The rule sees one batch of paired outcomes (INFRA ones dropped) and decides once; the rows
    carry no wealth (1.0), since no e-process runs. No guard either: the baselines have none.
    """
    gate = ctx.config.gate
    rule = _rule(gate)
    draws = plan.draws[: gate.minibatch_size if gate.rule == "minibatch" else gate.n_max]
    outcomes = await arms.outcomes(draws)
    await ctx.store.aupsert(
        observation_rows(ctx, gate_index, 0, draws, outcomes, [(1.0, 1.0)] * len(draws), "target")
    )
    d = [o.d for o in outcomes if o.d is not None]
    kind = (
        DecisionKind(int(rule.run(np.array([d], dtype=np.int8)).kinds[0]))
        if d
        else DecisionKind.REJECT_INERTIA
    )
    decision = Decision(
        kind, 1.0, 1.0, 0.0, len(d), d.count(1), d.count(-1), d.count(0), len(draws) - len(d), 1, 0
    )
    reason = _REASONS[kind]
    detail = (
        f"{scope.label}: {reason.value} by the {rule.name} rule after {len(d)} observations "
        f"({decision.wins} wins, {decision.losses} losses, {decision.ties} ties, {decision.infra} INFRA)"
        + _refused_note(arms)
    )
    evidence |= {"draws": len(draws), "decision": decision.to_record(), "rule": gate.rule}
    evidence |= _refused_evidence(arms)
    return GateOutcome(reason, detail, decision, alpha=alpha, evidence=evidence)


def _refused_evidence(arms: Arms) -> dict[str, Any]:
    """The evidence's ``refused`` (draws skipped because the server refused a side), when any."""
    return {"refused": dict(arms.refused)} if arms.refused["draws"] else {}


def _refused_note(arms: Arms) -> str:
    refused = arms.refused
    if not refused["draws"]:
        return ""
    return (
        f"; {refused['draws']} draw(s) skipped as refused by the server (incumbent {refused['incumbent']}, "
        f"candidate {refused['candidate']}, both {refused['both']}), never scored"
    )


def new_ladder(config: GateConfig, budget: int, *, with_replacement: bool, label: str) -> Ladder:
    """A fresh ladder for a plan of ``budget`` observations; without replacement (a finite
    population) it bets only while the running sum is >= 0."""
    strategy = make_bet_strategy(config.bet_strategy, config.bet_cap)
    if not with_replacement:
        strategy = WithoutReplacement(strategy)
    return Ladder(config, budget, label=label, strategy=strategy)


def infra_outage(label: str, gate_index: int, decision: Decision, asked: int) -> InfraOutage:
    """The stop of a gate whose plan ran out with INFRA outcomes skipped: nothing is decided."""
    return InfraOutage(
        f"{label}: the gate's draws ran out with {decision.infra} INFRA outcome(s) skipped; "
        "no decision is recorded, and a resume runs this gate again",
        reason="infra_outage",
        what=f"gate {gate_index}",
        failed=decision.infra,
        asked=asked,
    )


def plan_evidence(scope: GateScope, plan: DrawPlan, guard_draws: int) -> dict[str, Any]:
    """What a gate's decision records of its plan."""
    return {
        "classes": list(scope.classes),
        "distinct_questions": plan.distinct,
        "budget": plan.budget,
        "with_replacement": plan.with_replacement,
        "samples": [plan.first_sample, plan.samples_end(guard_draws)],  # [first, end) of the gate's indices
    }


async def verdict(
    ctx: TrainContext,
    arms: Arms,
    scope: GateScope,
    candidate: Candidate,
    plan: DrawPlan,
    gate_index: int,
    decision: Decision,
    *,
    alpha: float,
    evidence: dict[str, Any],
    drawn: int,
    discordance: Mapping[str, Sequence[int]],
    check_stop: Callable[[], None],
    how: str = "",
) -> GateOutcome:
    """A decided ladder's outcome: its reason, then the McNemar guard after an accept of a system or
    tool edit (sized by the run's measured ``discordance``, skipping the ``drawn`` plan draws;
    ``check_stop`` runs before it and inside it)."""
    reason = _REASONS[decision.kind]
    detail = (
        f"{scope.label}: {reason.value} after {decision.n} observations{how} "
        f"({decision.wins} wins, {decision.losses} losses, {decision.ties} ties, {decision.infra} INFRA); "
        f"wealth {decision.wealth:.3g}, harm wealth {decision.harm_wealth:.3g}, "
        f"threshold {decision.threshold:.3g}{_refused_note(arms)}"
    )
    guard = None
    if reason is GateReason.ACCEPT and scope.guard_classes:
        guard = await run_guard(
            ctx,
            arms,
            scope,
            candidate,
            plan,
            gate_index,
            decision,
            drawn=drawn,
            counts=discordance,
            check_stop=check_stop,
        )
        if guard["harmed"]:
            reason = GateReason.REJECT_GUARD
            detail += f"; the McNemar guard found harm on {', '.join(guard['harmed'])}"
    return GateOutcome(reason, detail, decision, alpha=alpha, guard=guard, evidence=evidence)


def _unreachable(
    scope: GateScope, plan: DrawPlan, config: GateConfig, alpha: float, evidence: dict[str, Any]
) -> GateOutcome | None:
    """``reject_inertia`` with nothing asked when the plan cannot reach acceptance (audit P0-3)."""
    reach = reachability(alpha, config.bet_cap, plan.budget, config.n_candidates)
    if reach.reachable:
        return None
    detail = (
        f"{scope.label}: unreachable: acceptance needs {reach.min_wins} wins but only {plan.budget} "
        f"observations can be drawn ({plan.distinct} distinct val questions); nothing was asked"
    )
    return GateOutcome(GateReason.REJECT_INERTIA, detail, None, alpha=alpha, evidence=evidence)


async def validate(
    ctx: TrainContext,
    incumbent: Bundle,
    candidate: Candidate,
    *,
    gate_index: int,
    alpha: float,
    first_sample: int,
    n_max: int | None = None,
    check_stop: Callable[[], None] = lambda: None,
    discordance: Mapping[str, Sequence[int]] | None = None,
) -> GateOutcome:
    """Test ``candidate`` against ``incumbent`` at level ``alpha`` (the loop's spent level), with
    at most ``n_max`` observations (default ``gate.n_max``).

    The gate's sample indices start at ``first_sample``; ``GateOutcome.next_sample`` is where the
    next gate's start. ``check_stop`` (the run's budget and stop file) runs before each further
    stage and before the guard; ``discordance`` holds the run's paired counts per class
    (``[discordant, observed]``), which size the guard.
    """
    update: dict[str, Any] = {"alpha": alpha, "alpha_spending": "none"}
    if n_max is not None:
        update["n_max"] = n_max
    gate_config = ctx.config.gate.model_copy(update=update)
    scope, plan = draw_plan(ctx, candidate, gate_index, first_sample=first_sample, n_max=gate_config.n_max)
    evidence = plan_evidence(scope, plan, guard_size(gate_config, scope))
    arms = Arms(ctx, incumbent, candidate.bundle, gate_index)
    if gate_config.rule != "eprocess":
        return await _validate_by_rule(ctx, arms, scope, plan, gate_index, alpha, evidence)
    unreachable = _unreachable(scope, plan, gate_config, alpha, evidence)
    if unreachable is not None:
        return unreachable
    ladder = new_ladder(gate_config, plan.budget, with_replacement=plan.with_replacement, label=scope.label)
    decision, used = await _run_ladder(ctx, arms, ladder, plan, gate_index, check_stop)
    if decision is None:  # cannot happen: a reachable plan holds at least one stage
        raise GateError(f"{scope.label}: the ladder asked for no stage", gate_index=gate_index)
    evidence |= {"draws": used, "decision": decision.to_record()} | _refused_evidence(arms)
    if not decision.terminal:
        # Evidence lost to infrastructure: decide nothing, resume here. Refused draws are not lost
        # (a resume meets the same limit): the run's refusal share stops the run when they matter.
        if decision.infra > arms.refused["draws"]:
            raise infra_outage(scope.label, gate_index, decision, used)
        detail = f"{scope.label}: the draws ran out before a decision{_refused_note(arms)}"
        return GateOutcome(GateReason.REJECT_INERTIA, detail, decision, alpha=alpha, evidence=evidence)
    return await verdict(
        ctx,
        arms,
        scope,
        candidate,
        plan,
        gate_index,
        decision,
        alpha=alpha,
        evidence=evidence,
        drawn=used,
        discordance=discordance or {},
        check_stop=check_stop,
    )
