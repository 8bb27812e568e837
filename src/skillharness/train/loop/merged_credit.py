"""Credit for each part of a merged set (``train.gate.merge_credit``: ``each_part``, or ``split``,
the default).

A merged set's test shows that the set as a whole helps; it says nothing of which of its proposals
did. In SimLab most lines of no effect that land ride in such sets (docs/benchmarks.md, "Ten
seeds, and what a merged set may carry"). The partner's own test, running beside it, is evidence
the set's accept already paid for: a set that measured no more per draw than its partner alone
shows no effect of its later proposal, and a set whose partner closed without landing rests on
the later proposal alone. So, with ``each_part``, the first closes as ``reject_inertia`` (the
partner's test goes on, and lands the partner if it can) and the second reopens as its own
proposal alone, as a new test. Both only withhold accepts the gate would have made; no test's
level changes, and nothing lands that no passing test covered.

In SimLab the first rule almost never binds (a set that passes has crossed its threshold and an
open partner has not), so what ``each_part`` does is the reopening: fewer lines of no effect on
one setup, less closure on both (docs/benchmarks.md, "Crediting each part of a merged set").
That closure is the partner's: a partner that closed as ``reject_inertia`` was
most often a real line too small for its test, which the set then carried to an accept. With
``split`` such a partner is tested again alone, beside its set's later proposal alone, so each
line that lands has a passing test of its own (docs/benchmarks.md, "Splitting a merged set whose
partner closed"; with slow momentum off it is the default: "Splitting without slow momentum").
"""

from __future__ import annotations

from dataclasses import replace

from skillharness.skills import Workspace
from skillharness.train.loop.open_gates import mark_invalid, reopen_alone, retest
from skillharness.train.state.checkpoint import Checkpoint, OpenCandidate
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import GateOutcome, GateReason

__all__ = ["credit_parts", "partner_of", "reopen_orphans"]


def _credits_parts(ctx: TrainContext) -> bool:
    return ctx.config.gate.merge_credit in ("each_part", "split")


def partner_of(ckpt: Checkpoint, oc: OpenCandidate) -> OpenCandidate | None:
    """The open test whose edits merged set ``oc`` carries (followed through its rebases), or None."""
    keys = set(oc.merged_with)
    return next((o for o in ckpt.open if o.key in keys or keys & set(o.rebased_from)), None)


def _mean(observed: list[int]) -> float | None:
    return sum(observed) / len(observed) if observed else None


def credit_parts(ctx: TrainContext, ckpt: Checkpoint, oc: OpenCandidate, outcome: GateOutcome) -> GateOutcome:
    """``outcome``, or, for an accepted merged set that measured no more per draw than its open
    partner alone, a ``reject_inertia`` saying so (the evidence holds both means either way)."""
    if not (_credits_parts(ctx) and outcome.accepted and oc.parts > 1 and oc.merged_with):
        return outcome
    partner = partner_of(ckpt, oc)
    if partner is None:  # its partner landed and the set kept its edits: nothing to compare with
        return outcome
    mine, theirs = _mean(oc.observed), _mean(partner.observed)
    credit = {"partner": partner.key, "set_mean": mine, "partner_mean": theirs}
    evidence = {**outcome.evidence, "part_credit": credit}
    if mine is not None and theirs is not None and mine > theirs:
        return replace(outcome, evidence=evidence)
    shown = "nothing yet" if theirs is None else f"{theirs:+.3f}"
    detail = (
        f"the merged set passed ({outcome.detail}), but measured {mine or 0.0:+.3f} per draw against "
        f"{shown} for its partner alone (gate {partner.key}): its later proposal shows no effect of "
        "its own, so nothing lands and the partner's test goes on (merge_credit each_part)"
    )
    return GateOutcome(
        GateReason.REJECT_INERTIA,
        detail[:600],
        decision=outcome.decision,
        alpha=outcome.alpha,
        guard=outcome.guard,
        evidence=evidence,
    )


def reopen_orphans(
    ctx: TrainContext, ws: Workspace, ckpt: Checkpoint, closed: OpenCandidate, outcome: GateOutcome
) -> Checkpoint:
    """With ``each_part``, every merged set carrying the edits of ``closed``, which closed without
    landing, restarted as its own proposal alone (marked invalid, to close, when it cannot be);
    with ``split``, and ``closed`` tested again alone when it closed as ``reject_inertia`` (too
    little evidence either way, not harm)."""
    if not _credits_parts(ctx) or outcome.accepted:
        return ckpt
    keys = {closed.key, *closed.rebased_from}
    orphans = [o for o in ckpt.open if keys & set(o.merged_with)]
    if not orphans:
        return ckpt
    incumbent = ws.load(ckpt.version)
    why = f"its partner (gate {closed.key}) closed as {outcome.reason.value}"
    for oc in orphans:
        reopened = reopen_alone(ctx, ckpt, oc, incumbent, why)
        ckpt = (
            reopened
            if isinstance(reopened, Checkpoint)
            else mark_invalid(ckpt, oc, f"{why}; reopening alone: {reopened}")
        )
    if ctx.config.gate.merge_credit == "split" and outcome.reason is GateReason.REJECT_INERTIA:
        again = retest(ctx, ckpt, closed, incumbent, f"its merged set (gate {orphans[0].key}) was split")
        ckpt = again if isinstance(again, Checkpoint) else ckpt
    return ckpt
