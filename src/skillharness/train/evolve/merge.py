"""Merged edit sets: a target's new proposal tested together with the edits of its open test.

In a paired test the draws needed grow as 1 / effect², so two real insights tested as one set (about
twice the effect) need about a quarter of the draws of either alone. A proposal is therefore joined
to the strongest open test of its target (``train.gate.merge_open``) when that test has some
evidence for its candidate (wealth at least ``train.gate.merge_min_wealth``, 1.05 by default) and
both edit sets apply together as one patch set. The merged set is a new test with its own level and
fresh samples; the partner keeps its own test, so a harmful new edit costs the partner nothing.
Whichever lands first, the other is rebased without the edits that landed (:func:`without_landed`).
A set counts the proposals it carries (``parts``): ``train.gate.merge_max_parts`` caps them, and
``train.gate.merge_sizing`` may size its test for the effect each claims (train/loop/decide.py);
``train.gate.merge_credit`` may ask its accept to show each part's effect (train/loop/merged_credit.py).
"""

from __future__ import annotations

import dataclasses
import json

from skillharness.skills import Bundle, Edit, EditOp, EditSet, Refusal, normalised_line
from skillharness.train.evolve.prompts import edit_limits
from skillharness.train.roles.prompt_specs import EditSetView
from skillharness.train.state.checkpoint import Checkpoint, OpenCandidate
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import Candidate

__all__ = ["merge_partner", "merged_proposal", "under_test", "without_landed"]

_INSERTS = (EditOp.INSERT_AFTER, EditOp.INSERT_BEFORE)


def under_test(ckpt: Checkpoint) -> dict[str, list[EditSetView]]:
    """Each target's edit sets under test as its step began, strongest first, for the proposer.

    Tests opened in the running step are left out (their ``opened`` is the step), so a resumed
    step shows the same list and asks the same prompts as the first attempt.
    """
    out: dict[str, list[EditSetView]] = {}
    began = [o for o in ckpt.open if tuple(o.opened) != (ckpt.epoch, ckpt.step)]
    for oc in sorted(began, key=lambda o: (-o.wealth, o.key)):
        edit_set = EditSet.model_validate_json(json.dumps(oc.edit_set))
        view = EditSetView(rationale=edit_set.rationale, edits_json=edit_set.model_dump_json())
        out.setdefault(oc.target, []).append(view)
    return out


def merge_partner(ctx: TrainContext, ckpt: Checkpoint, proposal: Candidate) -> OpenCandidate | None:
    """The open test ``proposal`` would join: its target's, valid, most wealth (at least
    ``train.gate.merge_min_wealth``), carrying fewer than ``train.gate.merge_max_parts`` proposals."""
    gate = ctx.config.gate
    if not gate.merge_open or proposal.edit_set.skill_update_mode != "patch":
        return None
    label = proposal.target.label()
    most = gate.merge_max_parts  # 0: no cap
    partners = [
        o
        for o in ckpt.open
        if o.target == label
        and not o.invalid
        and o.wealth >= gate.merge_min_wealth
        and (most == 0 or o.parts < most)
    ]
    return max(partners, key=lambda o: (o.wealth, -o.key), default=None)


def merged_proposal(
    ctx: TrainContext, incumbent: Bundle, partner: OpenCandidate, proposal: Candidate
) -> Candidate | None:
    """``proposal`` with ``partner``'s edits first, as one patch set, or None when they do not apply
    together (a conflict, the limits) or add nothing to the partner alone."""
    theirs = EditSet.model_validate_json(json.dumps(partner.edit_set))
    alone = incumbent.apply(proposal.target, theirs, edit_limits(ctx))
    if theirs.skill_update_mode != "patch" or isinstance(alone, Refusal):
        return None
    own = without_landed(proposal.edit_set, alone.text_of(proposal.target)).edits
    edit_set = EditSet(
        skill_update_mode="patch",
        edits=_join(theirs.edits, own),
        rationale=f"{theirs.rationale} | {proposal.edit_set.rationale}",
    )
    joined = incumbent.apply(proposal.target, edit_set, edit_limits(ctx))
    if not own or isinstance(joined, Refusal):
        return None
    if joined.text_of(proposal.target) == alone.text_of(proposal.target):
        return None
    return dataclasses.replace(
        proposal,
        edit_set=edit_set,
        evidence_ids=proposal.evidence_ids | frozenset(partner.evidence_ids),
        choice_detail=f"merged with open gate {partner.key}; {proposal.choice_detail}".rstrip("; "),
    )


def without_landed(edit_set: EditSet, text: str) -> EditSet:
    """``edit_set`` less the inserted lines the incumbent's ``text`` already holds as whole lines
    (compared normalised: :func:`skillharness.skills.normalised_line`; an insertion left with none
    is dropped).

    After a merged set lands, its partner's lines are in the incumbent, and after the partner
    lands, so is the first part of the merged set; re-inserting them would test duplicated lines.
    """
    if edit_set.skill_update_mode != "patch":
        return edit_set
    present = {normalised_line(line) for line in text.splitlines()}
    kept: list[Edit] = []
    for edit in edit_set.edits:
        if edit.op not in _INSERTS:
            kept.append(edit)
            continue
        lines = edit.text.splitlines(keepends=True)
        # Whole lines, normalised: a new line that is only part of a longer landed line is new.
        fresh = [line for line in lines if not line.strip() or normalised_line(line) not in present]
        if any(line.strip() for line in fresh):
            kept.append(edit if fresh == lines else edit.model_copy(update={"text": "".join(fresh)}))
    return edit_set if kept == list(edit_set.edits) else edit_set.model_copy(update={"edits": tuple(kept)})


def _join(theirs: tuple[Edit, ...], own: tuple[Edit, ...]) -> tuple[Edit, ...]:
    """Both lists as one; two insertions at one anchor become one (a patch set refuses overlaps),
    the partner's text first."""
    joined = list(theirs)
    for edit in own:
        same = next((i for i, e in enumerate(joined) if e.op == edit.op and e.anchor == edit.anchor), None)
        if same is None or edit.op not in _INSERTS:
            joined.append(edit)
        elif edit.op is EditOp.INSERT_AFTER:
            joined[same] = joined[same].model_copy(update={"text": joined[same].text + edit.text})
        else:
            joined[same] = joined[same].model_copy(update={"text": edit.text + joined[same].text})
    return tuple(joined)
