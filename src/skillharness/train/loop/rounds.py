"""Evidence rounds: every open candidate's test gets one more ladder stage, the strongest first.

A round picks, again and again, the open candidate with the most wealth among those not fed yet
in this round and whose target has no decision in it yet (one decision per target and round, so
each decision has its own ``dual_metric`` row). A pick whose incumbent has changed is rebased
first (:func:`~skillharness.train.loop.open_gates.rebase`). The candidate's ladder is rebuilt by
replaying its observations, fed one stage of fresh paired draws from its plan, and it closes when
the ladder decides (``accept`` then the McNemar guard for system and tool edits,
``reject_evidence``, ``reject_inertia`` at its size or when its futility is plausible; a merged
set's accept may be withheld, :mod:`~skillharness.train.loop.merged_credit`). The next
pick is a pure function of the checkpoint, which is saved after each one: a resume continues the
round exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from skillharness.infer import Draw
from skillharness.skills import Workspace
from skillharness.train.gate import (
    Decision,
    DecisionKind,
    Ladder,
    PairedOutcome,
)
from skillharness.train.gate.power import plausibly_futile
from skillharness.train.loop.decide import record_decision
from skillharness.train.loop.merged_credit import credit_parts, reopen_orphans
from skillharness.train.loop.open_gates import candidate_of, is_stale, rebase
from skillharness.train.state.checkpoint import Checkpoint, OpenCandidate
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import DrawPlan
from skillharness.train.state.outage import InfraOutage
from skillharness.train.state.records import Candidate, GateOutcome, GateReason
from skillharness.train.validate.arms import Arms, observation_rows, wealth_after
from skillharness.train.validate.guard import guard_size
from skillharness.train.validate.paired_gate import (
    draw_plan,
    infra_outage,
    new_ladder,
    next_window,
    plan_evidence,
    verdict,
)
from skillharness.train.validate.scope import GateScope

__all__ = ["evidence_round", "next_pick"]


def next_pick(ckpt: Checkpoint) -> OpenCandidate | None:
    """The round's next candidate: most wealth first, the older test on a tie (None: the round is done)."""
    waiting = [o for o in ckpt.open if o.key not in ckpt.round_fed and o.target not in ckpt.round_closed]
    return max(waiting, key=lambda o: (o.wealth, -o.key), default=None)


async def evidence_round(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    *,
    cursor: dict[str, Any],
    save: Callable[[Checkpoint], None],
    before_decision: Callable[[], None],
) -> Checkpoint:
    """Feed each open candidate one stage (see the module doc); ``save`` after each."""
    while (oc := next_pick(ckpt)) is not None:
        before_decision()
        if is_stale(ctx, ws, ckpt, oc):
            ckpt = rebase(ctx, ws, ckpt, oc)
            old = oc.key
            oc = next(o for o in ckpt.open if o.key == old or o.rebased_from[-1:] == [old])
        ckpt = await _advance(ctx, ws, ckpt, oc, cursor, before_decision)
        save(ckpt)
    return ckpt.model_copy(update={"round_fed": [], "round_closed": []})


def _ladder(ctx: TrainContext, oc: OpenCandidate, budget: int, with_replacement: bool, label: str) -> Ladder:
    """A fresh ladder brought to ``oc``'s state by replaying its observations feed by feed."""
    config = ctx.config.gate.model_copy(
        update={"alpha": oc.alpha, "alpha_spending": "none", "n_max": oc.n_max}
    )
    ladder = new_ladder(config, budget, with_replacement=with_replacement, label=label)
    if oc.infra:
        ladder.feed([None] * oc.infra)
    start = 0
    for end in oc.stage_ends:
        ladder.feed(oc.observed[start:end])
        start = end
    return ladder


def _discordance(ckpt: Checkpoint, draws: Sequence[Draw], outcomes: Sequence[PairedOutcome]) -> Checkpoint:
    counts = {t: list(v) for t, v in ckpt.discordance.items()}
    for (q, _), o in zip(draws, outcomes, strict=True):
        if o.d is not None:
            c = counts.setdefault(q.task_type, [0, 0])
            c[0] += int(o.d != 0)
            c[1] += 1
    return ckpt.model_copy(update={"discordance": counts})


async def _advance(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    oc: OpenCandidate,
    cursor: dict[str, Any],
    check: Callable[[], None] = lambda: None,
) -> Checkpoint:
    """One stage of ``oc``'s test, then its decision if the ladder (or plausible futility) reached one.

    ``check`` (the budget and stop file) runs again before any further stage and before the guard:
    a stop there saves nothing of this pick, and its resume replays the stage from the cache.
    """
    if oc.invalid:
        outcome = GateOutcome(GateReason.REJECT_INVALID, oc.invalid, alpha=0.0, evidence=_evidence(oc))
        return await _close(ctx, ws, ckpt, oc, candidate_of(ctx, ws, oc), outcome, cursor, check)
    candidate = candidate_of(ctx, ws, oc)
    scope, plan = draw_plan(
        ctx, candidate, oc.key, first_sample=oc.first_sample, n_max=oc.n_max, plan_key=oc.plan_key
    )
    ladder = _ladder(ctx, oc, plan.budget, plan.with_replacement, scope.label)
    arms = Arms(ctx, ws.load(oc.base_version), candidate.bundle, oc.key)
    ckpt, fed, decision = await _feed(ctx, ckpt, oc, plan.draws, ladder, arms, check)
    if decision is None:
        raise InfraOutage(
            f"{scope.label}: the gate's plan has no draw left", reason="infra_outage", what=f"gate {oc.key}"
        )
    if decision.kind is DecisionKind.CONTINUE and _futile(ctx, oc, decision, plan.budget):
        decision = replace(decision, kind=DecisionKind.REJECT_INERTIA, next_request=0)
    at = fed.cursor
    oc = fed.model_copy(
        update={"wealth": decision.wealth, "harm_wealth": decision.harm_wealth, "rounds": oc.rounds + 1}
    )
    ckpt = ckpt.model_copy(
        update={
            "open": [oc if o.key == oc.key else o for o in ckpt.open],
            "round_fed": [*ckpt.round_fed, oc.key],
        }
    )
    if not decision.terminal:
        if at < len(plan.draws):
            return ckpt
        if oc.infra > oc.refused.get("draws", 0):  # the plan ran out on INFRA: decide nothing, resume
            raise infra_outage(scope.label, oc.key, decision, at)
        # It ran out on draws the server refused: a resume meets the same limit, so the test closes
        # with no evidence either way (the run's refusal share stops the run when they matter).
        decision = replace(decision, kind=DecisionKind.REJECT_INERTIA, next_request=0)
    outcome = await _outcome(ctx, arms, scope, candidate, plan, oc, decision, ckpt.discordance, check)
    outcome = credit_parts(ctx, ckpt, oc, outcome)
    return await _close(ctx, ws, ckpt, oc, candidate, outcome, cursor, check)


async def _feed(
    ctx: TrainContext,
    ckpt: Checkpoint,
    oc: OpenCandidate,
    draws: Sequence[Draw],
    ladder: Ladder,
    arms: Arms,
    check: Callable[[], None],
) -> tuple[Checkpoint, OpenCandidate, Decision | None]:
    """Draw ``oc``'s next stage (more when INFRA left it short) a window at a time
    (``ctx.gate_window``), feeding each to the ladder, until the stage ends or the test decides;
    the checkpoint with the discordance counted, ``oc`` with its observations, and the decision."""
    observed, ends, infra, at = list(oc.observed), list(oc.stage_ends), oc.infra, oc.cursor
    decision = ladder.decision
    while ladder.next_request > 0 and at < len(draws):
        if at > oc.cursor:
            check()
        window = draws[at : at + next_window(ctx, ladder)]
        outcomes = await arms.outcomes(window)
        before = len(observed)
        decision = ladder.feed(outcomes)
        fresh = [o.d for o in outcomes if o.d is not None]
        observed += fresh
        infra += len(outcomes) - len(fresh)
        if fresh:
            ends.append(len(observed))
        wealth = wealth_after(ladder, outcomes, before)
        await ctx.store.aupsert(observation_rows(ctx, oc.key, at, window, outcomes, wealth, "target"))
        ckpt = _discordance(ckpt, window, outcomes)
        at += len(window)
        if decision.terminal or len(observed) in ladder.plan:
            break
    refused = {k: oc.refused.get(k, 0) + n for k, n in arms.refused.items() if oc.refused.get(k, 0) + n}
    update = {"cursor": at, "observed": observed, "stage_ends": ends, "infra": infra, "refused": refused}
    return ckpt, oc.model_copy(update=update), decision


def _futile(ctx: TrainContext, oc: OpenCandidate, decision: Decision, budget: int) -> bool:
    z = ctx.config.gate.futility_z
    if z is None:
        return False
    return plausibly_futile(
        wins=decision.wins,
        losses=decision.losses,
        n=decision.n,
        wealth=decision.wealth,
        budget=budget,
        threshold=decision.threshold,
        z=z,
    )


def _evidence(oc: OpenCandidate) -> dict[str, Any]:
    return {
        "opened": list(oc.opened),
        "rounds": oc.rounds,
        "observations": len(oc.observed),
        "n_max": oc.n_max,
        "rebased_from": oc.rebased_from,
        "merged_with": oc.merged_with,
        "parts": oc.parts,  # proposals tested as one set: no line of a merged set has evidence alone
        "samples_first": oc.first_sample,
    } | ({"refused": dict(oc.refused)} if oc.refused else {})


async def _outcome(
    ctx: TrainContext,
    arms: Arms,
    scope: GateScope,
    candidate: Candidate,
    plan: DrawPlan,
    oc: OpenCandidate,
    decision: Decision,
    discordance: dict[str, list[int]],
    check: Callable[[], None],
) -> GateOutcome:
    """The closed test's verdict: the ladder's, then the McNemar guard after an accept (sized by
    the run's measured ``discordance``; ``check`` runs before and inside it)."""
    plausible = decision.n < plan.budget and decision.kind is DecisionKind.REJECT_INERTIA
    evidence = {
        **_evidence(oc),
        **plan_evidence(scope, plan, guard_size(ctx.config.gate, scope)),
        "draws": oc.cursor,
    }
    outcome = await verdict(
        ctx,
        arms,
        scope,
        candidate,
        plan,
        oc.key,
        decision,
        alpha=oc.alpha,
        evidence=evidence,
        drawn=oc.cursor,
        discordance=discordance,
        how=f" over {oc.rounds} round(s)",
        check_stop=check,
    )
    if plausible:
        return replace(outcome, detail=outcome.detail + "; futility plausible")
    return outcome


async def _close(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    oc: OpenCandidate,
    candidate: Candidate,
    outcome: GateOutcome,
    cursor: dict[str, Any],
    check: Callable[[], None],
) -> Checkpoint:
    """Write the closed test's decision (once) and drop it from the open candidates (``check``:
    before and inside the val score of the version that stands)."""
    ckpt = ckpt.model_copy(
        update={
            "open": [o for o in ckpt.open if o.key != oc.key],
            "round_fed": [*ckpt.round_fed, oc.key],
            "round_closed": [*ckpt.round_closed, oc.target],
            "rank_trial": ckpt.rank_trial.observe(oc.choice, [] if oc.merged_with else oc.observed),
        }
    )
    ckpt = reopen_orphans(ctx, ws, ckpt, oc, outcome)
    cursor = {**cursor, "gate": oc.key}  # the cursor an accepted version records: one per test
    return await record_decision(
        ctx, ws, ckpt, candidate, outcome, cursor=cursor, gate_index=oc.key, check_stop=check
    )
