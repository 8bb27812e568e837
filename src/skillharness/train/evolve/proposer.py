"""Evolution (SPEC 4.3.4–4.3.5): edit sets proposed from a case pack, applied, one chosen.

Per target, ``train.evolve.candidates`` proposals are asked at once (sample_idx 0..n-1 of the
evolve role) when the evolve role samples (``train.roles.evolve.temperature`` above 0, no fixed
seed). At temperature 0 a server answers one prompt alike, so one proposal is asked: the other
calls would be paid-for copies (:func:`~skillharness.train.state.caller.distinct_samples`). Each is
parsed and applied to the incumbent with the patch code; a proposal that cannot be used is a
refusal with a machine-readable reason, never an exception. With more than one distinct valid
candidate, ``evolve_rank`` chooses; a rank reply that fails or does not parse falls
back to the first valid candidate, and the candidate says so (``choice="rank_fallback"``).
With ``train.evolve.rank_may_decline`` the rank role may also answer that no candidate is worth a
test; the target's step then ends as ``Refused`` (``rank_declined``) and no test opens.
With ``train.evolve.rank: auto`` the step's design comes from the rank trial
(:mod:`skillharness.train.state.rank_trial`): while it runs, one proposal is asked and tested as
proposed, and the rank role's opinion of it is its ``choice`` (``trial_endorsed`` /
``trial_declined``).
No valid candidate ends the target's step as :class:`~skillharness.train.state.records.Refused`, which
the loop records as ``reject_invalid`` and remembers for the next proposal (:func:`remember_refusal`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from skillharness.errors import SkillError
from skillharness.llm.roles import RANK_NONE, Role
from skillharness.skills import Bundle, EditSet, EditTarget, Refusal, RefusalReason, parse_edit_set
from skillharness.train.evolve.prompts import (
    edit_limits,
    editable_text,
    evolve_template,
    evolve_variables,
    target_text,
)
from skillharness.train.roles.prompt_specs import EditSetView
from skillharness.train.roles.replies import RankReply, ReplyRefusal, parse_reply
from skillharness.train.state.caller import RoleAnswer, distinct_samples
from skillharness.train.state.context import TrainContext
from skillharness.train.state.rank_trial import RankMode, RankTrial, rank_mode, trial_choice
from skillharness.train.state.records import (
    RANK_DECLINED,
    Candidate,
    CasePack,
    GateOutcome,
    GateReason,
    Refused,
    RejectedEdit,
)

__all__ = ["EvolveRefusal", "evolve", "evolve_all", "remember", "remember_refusal", "remember_rejection"]

_DETAIL_CHARS = 600


class EvolveRefusal(StrEnum):
    """Refusal reasons of the evolution step itself (the patch code's are ``RefusalReason``)."""

    CALL_FAILED = "call_failed"  # the evolve call failed (after the LLM stack's retries)
    NO_CHANGE = "no_change"  # the edit set applies but leaves the target byte-identical
    EMPTY_RESULT = "empty_result"  # the editable text would be blank
    RANK_DECLINED = RANK_DECLINED  # the rank role found no candidate worth a test (shown apart)


@dataclass(frozen=True)
class _Valid:
    """A proposal that applied and changed the target."""

    sample_idx: int
    edit_set: EditSet
    bundle: Bundle
    after: str


@dataclass(frozen=True)
class _Failed:
    """A proposal that was refused, and why."""

    sample_idx: int
    edit_set: EditSet | None
    reason: str
    detail: str


async def evolve(
    ctx: TrainContext,
    bundle: Bundle,
    pack: CasePack,
    rejected: Sequence[RejectedEdit],
    under_test: Sequence[EditSetView] = (),
    mode: RankMode | None = None,
) -> Candidate | Refused:
    """Propose, apply and choose one edit set for ``pack.target``.

    Args:
        ctx: the training context (config, role caller, video sources).
        bundle: the incumbent bundle.
        pack: the target's case pack (its cases are shown; their questions are the evidence).
        rejected: the target's earlier rejected edit sets (the last ``rejected_memory`` are shown).
        under_test: the target's edit sets whose tests are open (shown, so as not to be repeated).
        mode: the step's design (``train.evolve.rank`` and the rank trial); None: ``rank`` as set, a
            trial not yet judged.

    Returns:
        The chosen :class:`Candidate`, or :class:`Refused` with the most common refusal reason.

    Raises:
        SkillError: the bundle has no such target (a caller's mistake; checked before any call).
    """
    variables = await evolve_variables(ctx, bundle, pack, rejected, under_test)
    before = variables["document"]
    template = evolve_template(pack.target)
    mode = mode or rank_mode(ctx.config.evolve.rank, RankTrial())
    wanted = 1 if mode in (RankMode.TRIAL, RankMode.ALONE) else ctx.config.evolve.candidates
    calls = distinct_samples(wanted, ctx.caller.sampling_for(Role.EVOLVE))
    answers = await asyncio.gather(*(ctx.caller.ask(template, variables, sample_idx=i) for i in range(calls)))
    tried = [_try(ctx, bundle, pack.target, before, i, answer) for i, answer in enumerate(answers)]
    valid = _distinct_valid(tried)
    if not valid:
        return _refused(pack.target, before, [t for t in tried if isinstance(t, _Failed)], calls)
    chosen, choice, detail = await _choose(ctx, pack, variables, valid, mode)
    if chosen is None:  # the proposals and the one rank call that declined them
        return Refused(pack.target, EvolveRefusal.RANK_DECLINED, detail, valid[0].edit_set, before, calls + 1)
    return Candidate(
        target=pack.target,
        edit_set=chosen.edit_set,
        bundle=chosen.bundle,
        document_before=before,
        document_after=chosen.after,
        choice=choice,
        evidence_ids=pack.evidence_ids,
        choice_detail=detail,
    )


async def evolve_all(
    ctx: TrainContext,
    bundle: Bundle,
    packs: Sequence[CasePack],
    rejected_by_target: Mapping[str, Sequence[RejectedEdit]] | None = None,
    under_test_by_target: Mapping[str, Sequence[EditSetView]] | None = None,
    mode: RankMode | None = None,
) -> list[Candidate | Refused]:
    """:func:`evolve` for every pack at once (the role's concurrency limits the calls), in pack order.

    ``rejected_by_target`` maps a target label (``EditTarget.label()``) to its rejected edit sets,
    ``under_test_by_target`` to its edit sets under test.
    """
    rejected, under_test = rejected_by_target or {}, under_test_by_target or {}
    return list(
        await asyncio.gather(
            *(
                evolve(ctx, bundle, pack, rejected.get(label, ()), under_test.get(label, ()), mode)
                for pack in packs
                for label in [pack.target.label()]
            )
        )
    )


def remember_refusal(refused: Refused) -> RejectedEdit:
    """The memory entry of a refused target, shown to its next proposal (outcome ``reject_invalid``)."""
    edit_set = refused.edit_set
    return RejectedEdit(
        rationale=edit_set.rationale if edit_set else "(no usable edit set)",
        edits_json=edit_set.model_dump_json() if edit_set else "null",
        outcome=_one_line(f"{GateReason.REJECT_INVALID.value}: {refused.reason}: {refused.detail}"),
        verdict=GateReason.REJECT_INVALID,
    )


def remember_rejection(candidate: Candidate, outcome: GateOutcome) -> RejectedEdit:
    """The memory entry of a candidate whose gate closed without accepting it.

    It keeps the verdict (``reject_evidence`` / ``reject_guard``: harm was shown; ``reject_inertia``:
    too little evidence either way) and the counts it rests on, so the next proposal can tell an
    idea shown harmful from one that was merely under-tested.
    """
    decision = outcome.decision
    return RejectedEdit(
        rationale=candidate.edit_set.rationale,
        edits_json=candidate.edit_set.model_dump_json(),
        outcome=_one_line(f"{outcome.reason.value}: {outcome.detail}")[:_DETAIL_CHARS],
        verdict=outcome.reason,
        wins=decision.wins if decision is not None else None,
        losses=decision.losses if decision is not None else None,
        n=decision.n if decision is not None else None,
    )


def remember(memory: Sequence[RejectedEdit], entry: RejectedEdit, limit: int) -> tuple[RejectedEdit, ...]:
    """A target's rejection memory with ``entry`` added, oldest dropped beyond ``limit``."""
    return (*memory, entry)[-limit:] if limit > 0 else ()


# --- one proposal -----------------------------------------------------------------------------
def _try(
    ctx: TrainContext, bundle: Bundle, target: EditTarget, before: str, index: int, answer: RoleAnswer
) -> _Valid | _Failed:
    if answer.text is None:
        return _Failed(index, None, EvolveRefusal.CALL_FAILED, answer.error or "no reply")
    parsed = parse_edit_set(answer.text)
    if isinstance(parsed, Refusal):
        return _Failed(index, None, parsed.reason, _refusal_detail(parsed))
    if parsed.skill_update_mode == "rewrite" and not (parsed.body or "").strip():
        return _Failed(index, parsed, EvolveRefusal.EMPTY_RESULT, "the rewrite body is blank")
    try:
        result = bundle.apply(target, parsed, edit_limits(ctx))
    except SkillError as exc:  # the document's own last-line checks: still the model's text at fault
        return _Failed(index, parsed, RefusalReason.MALFORMED_EDIT, str(exc)[:300])
    if isinstance(result, Refusal):
        return _Failed(index, parsed, result.reason, _refusal_detail(result))
    after = target_text(result, target)
    if after == before:
        return _Failed(index, parsed, EvolveRefusal.NO_CHANGE, "the edit set leaves the target unchanged")
    if not editable_text(result, target).strip():
        return _Failed(index, parsed, EvolveRefusal.EMPTY_RESULT, "the edited text would be blank")
    return _Valid(index, parsed, result, after)


def _refusal_detail(refusal: Refusal) -> str:
    where = f"edit {refusal.edit_index}: " if refusal.edit_index is not None else ""
    return where + refusal.detail


def _distinct_valid(tried: Sequence[_Valid | _Failed]) -> list[_Valid]:
    """Valid proposals in sample order, one per resulting text (ranking duplicates wastes a call)."""
    seen: set[str] = set()
    valid = []
    for t in tried:
        if isinstance(t, _Valid) and t.after not in seen:
            seen.add(t.after)
            valid.append(t)
    return valid


def _refused(target: EditTarget, before: str, tried: Sequence[_Failed], calls: int) -> Refused:
    """The most common reason (ties: the latest), every proposal's reason in the detail."""
    counts = Counter(str(t.reason) for t in tried)
    top = max(counts.values())
    last = next(t for t in reversed(tried) if counts[str(t.reason)] == top)
    detail = "; ".join(f"#{t.sample_idx} {t.reason}: {t.detail}" for t in tried)
    reason = last.reason
    return Refused(
        target=target,
        reason=reason,
        detail=_one_line(detail)[:_DETAIL_CHARS],
        edit_set=last.edit_set,
        document_before=before,
        calls=calls,
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- ranking ----------------------------------------------------------------------------------
async def _choose(
    ctx: TrainContext, pack: CasePack, variables: Mapping[str, Any], valid: Sequence[_Valid], mode: RankMode
) -> tuple[_Valid | None, str, str]:
    """(the chosen proposal, how it was chosen, why) — never fails: a bad rank reply falls back.

    None when the rank role declined every candidate (``train.evolve.rank_may_decline``): it is
    then asked about a single candidate too, since a test of generic advice costs far more than
    the one call that can spare it. In the rank trial it is asked about the one proposal, which
    is tested whatever it answers (its answer is the trial's evidence).
    """
    settings = ctx.config.evolve
    may_decline = mode is RankMode.TRIAL or (mode is RankMode.RANKED and settings.rank_may_decline)
    if len(valid) == 1 and not may_decline:
        return valid[0], "only", ""
    if mode not in (RankMode.RANKED, RankMode.TRIAL):
        return valid[0], "first", "train.evolve.rank is off"
    reply, why = await _rank(ctx, pack, variables, valid, may_decline)
    if reply is None:
        return valid[0], "rank_fallback", why
    if not (0 <= reply.choice < len(valid) or (may_decline and reply.choice == RANK_NONE)):
        return valid[0], "rank_fallback", f"rank choice {reply.choice} is not in 0..{len(valid) - 1}"
    if mode is RankMode.TRIAL:
        return valid[0], trial_choice(reply.choice != RANK_NONE), why
    if reply.choice == RANK_NONE:
        return None, "rank", why
    return valid[reply.choice], "rank", why


async def _rank(
    ctx: TrainContext,
    pack: CasePack,
    variables: Mapping[str, Any],
    valid: Sequence[_Valid],
    may_decline: bool,
) -> tuple[RankReply | None, str]:
    """The rank role's reply and its reason, or None and why it cannot be used."""
    candidates = [
        EditSetView(rationale=t.edit_set.rationale, edits_json=t.edit_set.model_dump_json()) for t in valid
    ]
    answer = await ctx.caller.ask(
        "evolve_rank",
        {
            "target": pack.target.label(),
            "document": variables["document"],
            "cases": variables["cases"],
            "candidates": candidates,
            "may_decline": may_decline,
        },
    )
    reply = parse_reply(RankReply, answer.text) if answer.text is not None else None
    if reply is None:
        return None, _one_line(f"rank call failed: {answer.error}")[:300]
    if isinstance(reply, ReplyRefusal):
        return None, _one_line(f"rank reply unusable: {reply.detail}")[:300]
    return reply, _one_line(reply.reason)[:300]
