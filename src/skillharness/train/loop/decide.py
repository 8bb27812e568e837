"""A candidate's decision: commit or revert, and record what happened (and the one-shot gate).

The order is the audit's: decide, then commit the workspace version, then write the decision and
the ``dual_metric`` rows of the version that stands (P2-5), and only then the checkpoint. A
version carries the cursor that made it, so a resume adopts it instead of committing it twice.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

from skillharness.skills import Bundle, EditRecord, EditTarget, Refusal, VersionReason, Workspace
from skillharness.store import DualMetricRow, GateDecisionRow
from skillharness.train.evolve.prompts import edit_limits
from skillharness.train.evolve.proposer import remember_refusal, remember_rejection
from skillharness.train.gate import gate_alpha, min_wins
from skillharness.train.gate.power import measured_discordance, sized_draws
from skillharness.train.gate.reachability import threshold
from skillharness.train.state.checkpoint import AcceptedEdit, Checkpoint
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import BEFORE_TESTING, Candidate, GateOutcome, GateReason, Refused
from skillharness.train.validate.paired_gate import validate
from skillharness.train.validate.scope import gate_scope, scope_hash
from skillharness.train.validate.scoring import val_score

__all__ = [
    "commit_or_adopt",
    "decide",
    "record_decision",
    "retire_sample_starts",
    "sized_n_max",
    "task_type_of_target",
]


def task_type_of_target(ctx: TrainContext, target: EditTarget) -> str | None:
    """The trained class a skill target belongs to (skill targets are named by slug)."""
    if target.kind != "skill":
        return None
    for task_type in ctx.task_types:
        if EditTarget.skill(task_type).name == target.name:
            return task_type
    return None


def commit_or_adopt(
    ws: Workspace, bundle: Bundle, parent: str, cursor: dict[str, Any], record: EditRecord
) -> str:
    """Commit ``bundle`` as a new version, unless one made at ``cursor`` exists (a crash after commit)."""
    for version in ws.history():
        if version.edit.details.get("cursor") == cursor:
            if ws.current_version != version.version:
                ws.revert(version.version)
            return version.version
    details = {**record.details, "cursor": cursor}
    return ws.commit(bundle, parent, record.model_copy(update={"details": details}))


def _rebase(ctx: TrainContext, incumbent: Bundle, proposal: Candidate | Refused) -> Candidate | Refused:
    """The chosen edit set applied to the incumbent as it stands now (an earlier target may have moved it).

    Epoch-end candidates (``reapply`` false) are gated as built: re-applying their empty edit list
    would be refused and would drop the update.
    """
    if (
        isinstance(proposal, Refused)
        or not proposal.reapply
        or proposal.bundle.bundle_hash == incumbent.bundle_hash
    ):
        return proposal
    rebased = incumbent.apply(proposal.target, proposal.edit_set, edit_limits(ctx))
    if isinstance(rebased, Refusal):
        return Refused(proposal.target, rebased.reason, rebased.detail, proposal.edit_set)
    return dataclasses.replace(
        proposal,
        bundle=rebased,
        document_before=incumbent.text_of(proposal.target),
        document_after=rebased.text_of(proposal.target),
    )


async def decide(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    proposal: Candidate | Refused,
    *,
    cursor: dict[str, Any],
    check_stop: Callable[[], None],
) -> Checkpoint:
    """Gate ``proposal`` against the incumbent at once (one whole test) and record its decision.

    For what is decided on the spot: refusals, and the epoch end's whole updates. A step's
    candidates are opened instead (:mod:`skillharness.train.loop.open_gates`) and decided over rounds.
    ``check_stop`` runs before each of the test's further stages, before its guard and before
    the val score of its ``dual_metric`` row.
    """
    incumbent = ws.load(ckpt.version)
    proposal = _rebase(ctx, incumbent, proposal)
    alpha = 0.0
    if isinstance(proposal, Refused):
        outcome = GateOutcome(
            GateReason.REJECT_INVALID,
            f"{proposal.reason}: {proposal.detail}"[:300],
            # Never tested: shown apart from the tests, with the evolve calls it cost.
            evidence={BEFORE_TESTING: str(proposal.reason), "evolve_calls": proposal.calls},
        )
    else:
        gate = ctx.config.gate
        alpha = gate_alpha(gate.alpha, gate.alpha_spending, ckpt.gates_run + 1, accepts=ckpt.accepts)
        outcome = await validate(
            ctx,
            incumbent,
            proposal,
            gate_index=ckpt.decision_index,
            alpha=alpha,
            first_sample=ckpt.next_sample,
            n_max=sized_n_max(ctx, ckpt, gate_scope(ctx, proposal.target).classes),
            check_stop=check_stop,
            discordance=ckpt.discordance,
        )
    drew = outcome.decision is not None
    gate_index = ckpt.decision_index
    ckpt = ckpt.model_copy(
        update={
            "decision_index": ckpt.decision_index + 1,
            "gates_run": ckpt.gates_run + int(drew),
            "alpha_spent": ckpt.alpha_spent + (alpha if drew else 0.0),
            "next_sample": max(ckpt.next_sample, outcome.next_sample or 0),
        }
    )
    return await record_decision(
        ctx, ws, ckpt, proposal, outcome, cursor=cursor, gate_index=gate_index, check_stop=check_stop
    )


def sized_n_max(ctx: TrainContext, ckpt: Checkpoint, classes: Sequence[str], parts: int = 1) -> int:
    """A test's observations: sized from ``gate.min_effect`` and the classes' measured discordance
    (:func:`~skillharness.train.gate.power.sized_draws`), capped at ``gate.n_max``.

    A merged set of ``parts`` proposals claims the effect of each; with ``gate.merge_sizing``
    per_part it is sized for ``parts`` times ``min_effect``, so a set one of whose proposals does
    nothing reads as futile sooner, and its partner's own test decides the partner alone.
    """
    gate = ctx.config.gate
    if gate.min_effect is None or gate.rule != "eprocess":  # the baseline rules look at n_max draws
        return gate.n_max
    counts = [ckpt.discordance.get(t, [0, 0]) for t in classes]
    r = measured_discordance(sum(c[0] for c in counts), sum(c[1] for c in counts))
    level = gate_alpha(gate.alpha, gate.alpha_spending, ckpt.gates_run + 1, accepts=ckpt.accepts)
    thr = threshold(level, gate.n_candidates)
    floor = max(gate.first_stage, min_wins(thr, gate.bet_cap))
    effect = gate.min_effect * (parts if gate.merge_sizing == "per_part" else 1)
    return min(gate.n_max, max(floor, sized_draws(thr, r, effect)))


async def record_decision(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    proposal: Candidate | Refused,
    outcome: GateOutcome,
    *,
    cursor: dict[str, Any],
    gate_index: int,
    check_stop: Callable[[], None],
) -> Checkpoint:
    """Commit an accepted candidate (re-applied to the incumbent of the moment), write the decision
    row, remember the edit (accepted for momentum, or rejected for the next proposal) and write
    the ``dual_metric`` row of the version that stands (P2-5).

    ``check_stop`` (the budget, the stop file) runs before that row's val score and inside it. A
    stop there leaves the checkpoint saved before this decision: its resume replays the decision
    from the cache, adopts the version committed here (:func:`commit_or_adopt`) and rewrites the
    same rows."""
    if outcome.accepted and isinstance(proposal, Candidate):
        proposal = _rebase(ctx, ws.load(ckpt.version), proposal)
    label = proposal.target.label()
    version_after = None
    if outcome.accepted and isinstance(proposal, Candidate):
        record = EditRecord(
            target=proposal.target,
            reason=VersionReason.ACCEPTED,
            detail=outcome.detail,
            edit_set=proposal.edit_set,
        )
        version_after = commit_or_adopt(ws, proposal.bundle, ckpt.version, cursor, record)
    row = _decision_row(ctx, ckpt, proposal, outcome, cursor, version_after, gate_index)
    await ctx.store.aupsert([row])
    edits_json = _edits_json(proposal)
    rationale = proposal.edit_set.rationale if proposal.edit_set is not None else ""
    if version_after is not None:
        ckpt = ckpt.remember_accept(
            label, AcceptedEdit(target=label, rationale=rationale, edits_json=edits_json)
        )
        # e-LOND's count: every test opened from now on gets a level with this accept in it.
        ckpt = ckpt.model_copy(update={"accepts": ckpt.accepts + 1})
    else:
        memo = (
            remember_refusal(proposal)
            if isinstance(proposal, Refused)
            else remember_rejection(proposal, outcome)
        )
        ckpt = ckpt.remember_rejection(label, memo, ctx.config.evolve.rejected_memory)
    if version_after is not None:  # the committed bundle is the proposal's: no need to read it back
        ckpt = retire_sample_starts(ctx, ckpt, proposal.bundle)
    ckpt = ckpt.model_copy(update={"version": version_after or ckpt.version})
    return await record_dual_metric(ctx, ws, ckpt, proposal.target, cursor, check_stop)


def retire_sample_starts(ctx: TrainContext, ckpt: Checkpoint, incumbent: Bundle) -> Checkpoint:
    """Drop the shared plans whose incumbent ``incumbent`` replaced: the accepted candidate's
    samples must never come back as an incumbent's, so a changed target starts past them."""
    kept = {
        label: entry
        for label, entry in ckpt.sample_starts.items()
        if scope_hash(ctx, incumbent, EditTarget.parse(label)) == entry[0]
    }
    return ckpt.model_copy(update={"sample_starts": kept})


async def record_dual_metric(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    target: EditTarget,
    cursor: dict[str, Any],
    check_stop: Callable[[], None],
) -> Checkpoint:
    """The standing version's val accuracy on the target's class and on all val, and the γ-EMA.

    After an accept that score is a whole val rollout of a new version, a unit of its own: the
    budget is checked before it and about every stage's worth of its draws."""
    check_stop()
    score = await val_score(ctx, ws.load(ckpt.version), check_stop=check_stop)
    gamma = ctx.config.ema_gamma
    ema = {
        t: score.class_accuracy(t)
        if t not in ckpt.ema
        else gamma * score.class_accuracy(t) + (1 - gamma) * ckpt.ema[t]
        for t in ctx.task_types
    }
    task_type = task_type_of_target(ctx, target)
    target_correct, target_n = (
        score.per_class.get(task_type, (0, 0)) if task_type else (score.correct, score.n)
    )
    row = DualMetricRow(
        train_run_id=ctx.run_id,
        epoch=cursor["epoch"],
        step=cursor.get("step", -1),
        target=target.label(),
        version=ckpt.version,
        target_correct=target_correct,
        target_n=target_n,
        val_correct=score.correct,
        val_n=score.n,
        ema=ema,
    )
    await ctx.store.aupsert([row])
    return ckpt.model_copy(update={"ema": ema})


def _edits_json(proposal: Candidate | Refused) -> str:
    if proposal.edit_set is None:
        return "{}"
    return json.dumps(proposal.edit_set.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


def _decision_row(
    ctx: TrainContext,
    ckpt: Checkpoint,
    proposal: Candidate | Refused,
    outcome: GateOutcome,
    cursor: dict[str, Any],
    version_after: str | None,
    gate_index: int,
) -> GateDecisionRow:
    evidence: dict[str, Any] = {**outcome.evidence, "alpha": outcome.alpha, "guard": outcome.guard}
    if outcome.decision is not None:
        evidence["decision"] = outcome.decision.to_record()
    if isinstance(proposal, Candidate):
        evidence["choice"] = proposal.choice
    return GateDecisionRow(
        train_run_id=ctx.run_id,
        gate_index=gate_index,
        epoch=cursor["epoch"],
        step=cursor.get("step", -1),
        target=proposal.target.label(),
        reason=outcome.reason.value,
        detail=outcome.detail,
        evidence=evidence,
        version_before=ckpt.version,
        version_after=version_after,
        rationale=proposal.edit_set.rationale if proposal.edit_set is not None else "",
        edits=proposal.edit_set.model_dump(mode="json") if proposal.edit_set is not None else {},
        document_before=proposal.document_before,
        document_after=proposal.document_after if isinstance(proposal, Candidate) else None,
    )
