"""Open candidates: a step's candidate starts a test that stays open across steps.

A test is opened when its candidate is proposed: it gets its gate index, its level (spent once,
here: continuing a test spends nothing more), its size (:func:`~skillharness.train.loop.decide.sized_n_max`)
and its draw plan's sample range, and the checkpoint keeps it (:class:`OpenCandidate`). Its
evidence then grows a ladder stage per evidence round (:mod:`skillharness.train.loop.rounds`) until it
closes. When what its classes see of the incumbent changes (an accept of its class, or of the
system prompt or a tool), its test is *rebased*: the edit set is re-applied to the new incumbent
and a new test starts, with a new gate index, a new level and fresh samples.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from skillharness.errors import GateError
from skillharness.skills import Bundle, EditSet, EditTarget, Refusal, Workspace
from skillharness.train.evolve.merge import merge_partner, merged_proposal, without_landed
from skillharness.train.evolve.prompts import edit_limits
from skillharness.train.gate import gate_alpha, reachability
from skillharness.train.loop.decide import record_decision, sized_n_max
from skillharness.train.state.checkpoint import Checkpoint, OpenCandidate
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import draw_temperature
from skillharness.train.state.records import Candidate, GateOutcome, GateReason
from skillharness.train.validate.guard import guard_size
from skillharness.train.validate.paired_gate import draw_plan
from skillharness.train.validate.scope import gate_scope, scope_hash

__all__ = [
    "candidate_of",
    "is_stale",
    "mark_invalid",
    "open_candidate",
    "rebase",
    "reopen_alone",
    "retest",
    "scope_hash",
]

# What a new test (an opening or a rebase) sets in its OpenCandidate.
_TEST_FIELDS = (
    "key",
    "base_version",
    "bundle_hash",
    "alpha",
    "n_max",
    "parts",
    "first_sample",
    "shared_plan",
)


def candidate_of(ctx: TrainContext, ws: Workspace, oc: OpenCandidate) -> Candidate:
    """The open candidate's bundle, rebuilt from its base version and edit set (hash-checked)."""
    target = EditTarget.parse(oc.target)
    edit_set = EditSet.model_validate_json(json.dumps(oc.edit_set))
    base = ws.load(oc.base_version)
    bundle = base.apply(target, edit_set, edit_limits(ctx))
    if isinstance(bundle, Refusal) or bundle.bundle_hash != oc.bundle_hash:
        raise GateError(
            f"open candidate {oc.key} ({oc.target}) no longer rebuilds from {oc.base_version}",
            gate_index=oc.key,
        )
    return Candidate(
        target,
        edit_set,
        bundle,
        base.text_of(target),
        bundle.text_of(target),
        choice=oc.choice,
        evidence_ids=frozenset(oc.evidence_ids),
        choice_detail=oc.choice_detail,
    )


def _shared_start(ctx: TrainContext, ckpt: Checkpoint, target: EditTarget, base: str) -> tuple[int, bool]:
    """Where a new test of ``target`` against the incumbent of scope hash ``base`` starts, and
    whether its plan is a shared one.

    With ``train.gate.share_incumbent`` every test of a target against one incumbent shares one
    plan (key and first sample), so the incumbent's samples are drawn once; otherwise, or for the
    first such test, the plan starts at ``next_sample``, past every sample drawn so far.
    """
    if not ctx.config.gate.share_incumbent or draw_temperature(ctx.session.agent_config.sampling) <= 0:
        return ckpt.next_sample, False  # at temperature 0 every test reads sample 0 of the incumbent
    entry = ckpt.sample_starts.get(target.label())
    return (entry[1] if entry is not None and entry[0] == base else ckpt.next_sample), True


def _start_test(
    ctx: TrainContext, ckpt: Checkpoint, incumbent: Bundle, candidate: Candidate, parts: int
) -> tuple[dict[str, Any], bool]:
    """The fields of a new test of ``candidate`` (built on ``incumbent``, ``ckpt.version``; carrying
    ``parts`` proposals' edits) and whether it can accept."""
    gate = ctx.config.gate
    alpha = gate_alpha(gate.alpha, gate.alpha_spending, ckpt.gates_run + 1, accepts=ckpt.accepts)
    scope = gate_scope(ctx, candidate.target)
    n_max = sized_n_max(ctx, ckpt, scope.classes, parts)
    base = scope_hash(ctx, incumbent, candidate.target)
    first, shared = _shared_start(ctx, ckpt, candidate.target, base)
    key = first if shared else None
    scope, plan = draw_plan(
        ctx, candidate, ckpt.decision_index, first_sample=first, n_max=n_max, plan_key=key
    )
    reach = reachability(alpha, gate.bet_cap, plan.budget, gate.n_candidates)
    fields = {
        "key": ckpt.decision_index,
        "base_version": ckpt.version,
        "bundle_hash": candidate.bundle.bundle_hash,
        "alpha": alpha,
        "n_max": n_max,
        "parts": parts,
        "first_sample": first,
        "shared_plan": shared,
        "base_hash": base,
        "next_sample": plan.samples_end(guard_size(gate, scope)),
        "budget": plan.budget,
        "distinct": plan.distinct,
        "min_wins": reach.min_wins,
    }
    return fields, reach.reachable


def _spend(ckpt: Checkpoint, target: str, fields: dict[str, Any]) -> Checkpoint:
    """Move the counters past a new test of ``target``: its gate index, its level, its samples,
    and (a shared plan) where the next test of ``target`` against the same incumbent starts."""
    starts = dict(ckpt.sample_starts)
    if fields["shared_plan"]:
        starts[target] = (fields["base_hash"], fields["first_sample"])
    return ckpt.model_copy(
        update={
            "decision_index": ckpt.decision_index + 1,
            "gates_run": ckpt.gates_run + 1,
            "alpha_spent": ckpt.alpha_spent + fields["alpha"],
            "next_sample": max(ckpt.next_sample, fields["next_sample"]),
            "sample_starts": starts,
        }
    )


async def open_candidate(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    proposal: Candidate,
    *,
    cursor: dict[str, Any],
    check_stop: Callable[[], None],
) -> tuple[Checkpoint, str]:
    """Open a test of ``proposal`` (re-applied to the incumbent of the moment); say what happened.

    An edit set whose bundle is already open for its target is not opened twice; a re-apply that
    is refused, and a test that could never accept, are decided at once (nothing is drawn; its
    ``dual_metric`` row's val score is checked against the budget: ``check_stop``).
    """
    incumbent = ws.load(ckpt.version)
    label = proposal.target.label()
    partner = merge_partner(ctx, ckpt, proposal)
    merged = merged_proposal(ctx, incumbent, partner, proposal) if partner else None
    own = proposal.edit_set  # kept with a merged test: it reopens alone if the merge is refused
    proposal = merged or proposal
    applied = incumbent.apply(proposal.target, proposal.edit_set, edit_limits(ctx))
    if isinstance(applied, Refusal) or applied.text_of(proposal.target) == incumbent.text_of(proposal.target):
        reason = applied.reason if isinstance(applied, Refusal) else "no_change"
        detail = applied.detail if isinstance(applied, Refusal) else "the incumbent already holds this edit"
        outcome = GateOutcome(GateReason.REJECT_INVALID, f"{reason}: {detail}"[:300])
        return await _decide_now(ctx, ws, ckpt, proposal, outcome, cursor, check_stop), "invalid"
    if any(o.target == label and o.bundle_hash == applied.bundle_hash for o in ckpt.open):
        return ckpt, "duplicate"
    candidate = dataclasses.replace(
        proposal,
        bundle=applied,
        document_before=incumbent.text_of(proposal.target),
        document_after=applied.text_of(proposal.target),
    )
    parts = partner.parts + 1 if merged and partner else 1
    fields, reachable = _start_test(ctx, ckpt, incumbent, candidate, parts)
    if not reachable:
        detail = (
            f"{label}: unreachable: acceptance needs {fields['min_wins']} wins but only {fields['budget']} "
            f"observations can be drawn ({fields['distinct']} distinct val questions); nothing was asked"
        )
        outcome = GateOutcome(GateReason.REJECT_INERTIA, detail, alpha=fields["alpha"])
        return await _decide_now(ctx, ws, ckpt, candidate, outcome, cursor, check_stop), "unreachable"
    oc = OpenCandidate(
        target=label,
        edit_set=json.loads(candidate.edit_set.model_dump_json()),
        evidence_ids=sorted(candidate.evidence_ids),
        choice=candidate.choice,
        choice_detail=candidate.choice_detail,
        base_hash=fields["base_hash"],
        opened=(cursor["epoch"], cursor.get("step", -1)),
        merged_with=[partner.key] if merged and partner else [],
        own_edit_set=json.loads(own.model_dump_json()) if merged else None,
        **{k: fields[k] for k in _TEST_FIELDS},
    )
    return _spend(ckpt, label, fields).model_copy(update={"open": [*ckpt.open, oc]}), "opened"


async def _decide_now(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    proposal: Candidate,
    outcome: GateOutcome,
    cursor: dict[str, Any],
    check_stop: Callable[[], None],
) -> Checkpoint:
    """A decision that draws nothing: its own gate index, no level spent, its target done this round."""
    gate_index = ckpt.decision_index
    ckpt = ckpt.model_copy(
        update={
            "decision_index": gate_index + 1,
            "round_closed": [*ckpt.round_closed, proposal.target.label()],
        }
    )
    return await record_decision(
        ctx, ws, ckpt, proposal, outcome, cursor=cursor, gate_index=gate_index, check_stop=check_stop
    )


def is_stale(ctx: TrainContext, ws: Workspace, ckpt: Checkpoint, oc: OpenCandidate) -> bool:
    """True when what ``oc``'s classes see of the incumbent is no longer what it is tested against."""
    if oc.base_version == ckpt.version:
        return False
    return scope_hash(ctx, ws.load(ckpt.version), EditTarget.parse(oc.target)) != oc.base_hash


def rebase(ctx: TrainContext, ws: Workspace, ckpt: Checkpoint, oc: OpenCandidate) -> Checkpoint:
    """Restart ``oc``'s test against the incumbent of the moment: a new gate index, level and samples.

    A re-apply that is refused (or that changes nothing) marks it invalid; it closes as
    ``reject_invalid`` when it is next picked. A merged set so refused reopens as the target's own
    proposal alone (``own_edit_set``): the partner's edits it carried are tested, or landed, apart.
    """
    incumbent = ws.load(ckpt.version)
    target = EditTarget.parse(oc.target)
    restarted = _restart(
        ctx, ckpt, oc, incumbent, target, EditSet.model_validate_json(json.dumps(oc.edit_set))
    )
    if isinstance(restarted, Checkpoint):
        return restarted
    if oc.merged_with and oc.own_edit_set is not None:
        reopened = reopen_alone(ctx, ckpt, oc, incumbent, f"the merged set was refused ({restarted})")
        if isinstance(reopened, Checkpoint):
            return reopened
    return mark_invalid(ckpt, oc, f"rebased onto {ckpt.version}: {restarted}")


def mark_invalid(ckpt: Checkpoint, oc: OpenCandidate, why: str) -> Checkpoint:
    """The checkpoint with open test ``oc`` marked invalid: it closes as ``reject_invalid`` when next
    picked."""
    return _replace(ckpt, oc, oc.model_copy(update={"invalid": why[:300]}))


def reopen_alone(
    ctx: TrainContext, ckpt: Checkpoint, oc: OpenCandidate, incumbent: Bundle, why: str
) -> Checkpoint | str:
    """The checkpoint with merged set ``oc`` restarted as its own proposal alone (``own_edit_set``)
    against ``incumbent``, as a new test, or why it cannot be."""
    if oc.own_edit_set is None:
        return "it carries no proposal of its own"
    alone = oc.model_copy(
        update={
            "merged_with": [],
            "own_edit_set": None,
            "parts": 1,
            "choice_detail": f"reopened alone: {why}"[:300],
        }
    )
    own = EditSet.model_validate_json(json.dumps(oc.own_edit_set))
    return _restart(ctx, ckpt, alone, incumbent, EditTarget.parse(oc.target), own)


def retest(
    ctx: TrainContext, ckpt: Checkpoint, closed: OpenCandidate, incumbent: Bundle, why: str
) -> Checkpoint | str:
    """The checkpoint with ``closed`` (a test no longer open) tested again against ``incumbent``, as a
    new test of its edits, or why it cannot be."""
    again = closed.model_copy(update={"choice_detail": f"tested again: {why}"[:300], "invalid": ""})
    with_it = ckpt.model_copy(update={"open": [*ckpt.open, again]})
    edits = EditSet.model_validate_json(json.dumps(closed.edit_set))
    return _restart(ctx, with_it, again, incumbent, EditTarget.parse(closed.target), edits)


def _restart(
    ctx: TrainContext,
    ckpt: Checkpoint,
    oc: OpenCandidate,
    incumbent: Bundle,
    target: EditTarget,
    edits: EditSet,
) -> Checkpoint | str:
    """The checkpoint with ``oc``'s test restarted on ``edits`` against ``incumbent``, or why it cannot be."""
    edit_set = without_landed(edits, incumbent.text_of(target))
    if not edit_set.edits and edit_set.skill_update_mode == "patch":
        return "its edits already landed"
    applied = incumbent.apply(target, edit_set, edit_limits(ctx))
    if isinstance(applied, Refusal):
        return f"{applied.reason}: {applied.detail}"
    if applied.text_of(target) == incumbent.text_of(target):
        return "no_change: the new incumbent already holds this edit"
    candidate = Candidate(
        target,
        edit_set,
        applied,
        incumbent.text_of(target),
        applied.text_of(target),
        choice=oc.choice,
        evidence_ids=frozenset(oc.evidence_ids),
    )
    # Landed edits dropped: what is left is sized as one proposal (its share is not tracked).
    fields, reachable = _start_test(ctx, ckpt, incumbent, candidate, oc.parts if edit_set == edits else 1)
    if not reachable:  # only under alpha spending: the next level is out of reach
        return f"unreachable at gate {ckpt.gates_run + 1} (alpha {fields['alpha']:.3g})"
    restarted = oc.model_copy(
        update={
            **{k: fields[k] for k in _TEST_FIELDS},
            "edit_set": json.loads(edit_set.model_dump_json()),
            "base_hash": fields["base_hash"],
            "cursor": 0,
            "observed": [],
            "stage_ends": [],
            "infra": 0,
            "wealth": 1.0,
            "harm_wealth": 1.0,
            "rounds": 0,
            "rebased_from": [*oc.rebased_from, oc.key],
        }
    )
    return _replace(_spend(ckpt, oc.target, fields), oc, restarted)


def _replace(ckpt: Checkpoint, old: OpenCandidate, new: OpenCandidate) -> Checkpoint:
    return ckpt.model_copy(update={"open": [new if o.key == old.key else o for o in ckpt.open]})
