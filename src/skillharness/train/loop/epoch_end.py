"""Epoch end (SPEC 4.4): slow momentum, system-prompt consolidation, the val score, patience.

Momentum and consolidation are edits like any other: gated unless ``train.momentum.gated`` is
false, committed with their cursor (so a resume never writes them twice: audit P0-6), and marked
done in the checkpoint. Patience counts *epochs* without improvement of the epoch-end val
score over the best so far, the baseline's included (audit P0-5).
"""

from __future__ import annotations

from collections.abc import Callable

from skillharness.skills import (
    EditLimits,
    EditRecord,
    EditSet,
    EditTarget,
    MomentumUpdate,
    Refusal,
    VersionReason,
    Workspace,
)
from skillharness.store import RunMetric
from skillharness.train.loop.decide import commit_or_adopt, decide, retire_sample_starts, task_type_of_target
from skillharness.train.roles.replies import ConsolidateReply, MomentumReply, ReplyRefusal, parse_reply
from skillharness.train.state.checkpoint import Checkpoint
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import Candidate, Refused
from skillharness.train.validate.scoring import ValScore, val_score

__all__ = ["end_epoch", "patience_reason"]


def patience_reason(waiting: int) -> str:
    """The stop reason of a run whose patience ran out after ``waiting`` epochs without improvement."""
    return f"no val improvement for {waiting} epoch(s)"


async def end_epoch(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    *,
    save: Callable[[Checkpoint], None],
    check_stop: Callable[[], None],
) -> Checkpoint:
    """Run the end of ``ckpt.epoch``; the returned checkpoint's patience count says whether the
    epochs go on (the loop then closes the open tests before it ends the run as ``stopped_early``).

    ``check_stop`` (the budget, the stop file) runs before each test and before the val score, and
    between a test's stages: each is resumable from the checkpoint saved before it.
    """
    ckpt = await _epoch_end_tests(ctx, ws, ckpt, save=save, check_stop=check_stop)
    check_stop()
    score = await val_score(ctx, ws.load(ckpt.version), check_stop=check_stop)
    improved = ckpt.best_score is None or score.accuracy > ckpt.best_score
    waiting = 0 if improved else ckpt.epochs_without_improvement + 1
    await ctx.store.aupsert([_epoch_metric(ctx, ckpt, score, improved)])
    stop = waiting >= ctx.config.early_stop_patience
    return ckpt.model_copy(
        update={
            "best_score": score.accuracy if improved else ckpt.best_score,
            "epochs_without_improvement": waiting,
            "epoch_end_done": ckpt.epoch,
            "stop_reason": patience_reason(waiting) if stop else ckpt.stop_reason,
        }
    )


async def _epoch_end_tests(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    *,
    save: Callable[[Checkpoint], None],
    check_stop: Callable[[], None],
) -> Checkpoint:
    """Slow momentum for each skill accepted this epoch, then consolidation of an over-long system
    prompt: each a test of its own, checked against the budget first and marked done once decided."""
    epoch = ckpt.epoch
    if ctx.config.momentum.enabled:
        for label in sorted(ckpt.accepted_this_epoch):
            if label.startswith("skill:") and f"{epoch}:{label}" not in ckpt.momentum_done:
                check_stop()
                ckpt = await _momentum(ctx, ws, ckpt, label, check_stop)
                ckpt = ckpt.model_copy(update={"momentum_done": [*ckpt.momentum_done, f"{epoch}:{label}"]})
                save(ckpt)
    system = ws.load(ckpt.version).system_prompt
    if len(system) > ctx.config.evolve.max_system_chars and f"{epoch}:system" not in ckpt.momentum_done:
        check_stop()
        ckpt = await _consolidate(ctx, ws, ckpt, check_stop)
        ckpt = ckpt.model_copy(update={"momentum_done": [*ckpt.momentum_done, f"{epoch}:system"]})
        save(ckpt)
    return ckpt


def _epoch_metric(ctx: TrainContext, ckpt: Checkpoint, score: ValScore, improved: bool) -> RunMetric:
    low, high = score.interval()
    return RunMetric(
        run_id=ctx.run_id,
        name=f"epoch_end/{ckpt.epoch:03d}",
        value={
            "epoch": ckpt.epoch,
            "version": ckpt.version,
            "correct": score.correct,
            "n": score.n,
            "accuracy": score.accuracy,
            "low": low,
            "high": high,
            "per_class": {t: list(v) for t, v in score.per_class.items()},
            "improved": improved,
        },
    )


async def _momentum(
    ctx: TrainContext, ws: Workspace, ckpt: Checkpoint, label: str, check_stop: Callable[[], None]
) -> Checkpoint:
    incumbent = ws.load(ckpt.version)
    target = EditTarget(kind="skill", name=label.split(":", 1)[1])
    task_type = task_type_of_target(ctx, target) or target.name or ""
    max_chars = ctx.config.momentum.max_chars
    answer = await ctx.caller.ask(
        "slow_momentum",
        {
            "task_type": task_type,
            "document": incumbent.text_of(target),
            "accepted": [edit.view() for edit in ckpt.accepted_this_epoch[label]],
            "epoch": ckpt.epoch,
            "max_chars": max_chars,
        },
    )
    reply = parse_reply(MomentumReply, answer.text)
    if isinstance(reply, ReplyRefusal):
        detail = answer.error or reply.detail
        return await decide(
            ctx,
            ws,
            ckpt,
            Refused(target, "momentum_failed", detail),
            cursor=_cursor(ckpt, label),
            check_stop=check_stop,
        )
    update = MomentumUpdate.sanitized(reply.guidance, max_chars=max_chars)
    bundle = incumbent.with_momentum(target.name or "", update)
    edit_set = EditSet(skill_update_mode="patch", edits=(), rationale=f"slow momentum, epoch {ckpt.epoch}")
    candidate = Candidate(
        target,
        edit_set,
        bundle,
        incumbent.text_of(target),
        bundle.text_of(target),
        choice="momentum",
        reapply=False,
    )
    if ctx.config.momentum.gated:
        return await decide(ctx, ws, ckpt, candidate, cursor=_cursor(ckpt, label), check_stop=check_stop)
    record = EditRecord(target=target, reason=VersionReason.MOMENTUM, detail="slow momentum (ungated)")
    version = commit_or_adopt(ws, bundle, ckpt.version, _cursor(ckpt, label), record)
    return retire_sample_starts(ctx, ckpt, bundle).model_copy(update={"version": version})


async def _consolidate(
    ctx: TrainContext, ws: Workspace, ckpt: Checkpoint, check_stop: Callable[[], None]
) -> Checkpoint:
    incumbent = ws.load(ckpt.version)
    target = EditTarget.system()
    answer = await ctx.caller.ask(
        "consolidate_system",
        {"document": incumbent.system_prompt, "max_chars": ctx.config.evolve.max_system_chars},
    )
    reply = parse_reply(ConsolidateReply, answer.text)
    cursor = _cursor(ckpt, "system")
    if isinstance(reply, ReplyRefusal):
        refused = Refused(target, "consolidate_failed", answer.error or reply.detail)
        return await decide(ctx, ws, ckpt, refused, cursor=cursor, check_stop=check_stop)
    edit_set = EditSet(
        skill_update_mode="rewrite",
        edits=(),
        body=reply.system_prompt,
        rationale="consolidate the system prompt",
    )
    # The consolidated prompt is held to the budget that triggered it: a longer one is refused.
    limits = EditLimits(
        max_edits=ctx.config.evolve.max_edits, max_body_chars=ctx.config.evolve.max_system_chars
    )
    applied = incumbent.apply(target, edit_set, limits)
    if isinstance(applied, Refusal):
        refused = Refused(target, applied.reason, applied.detail, edit_set, incumbent.system_prompt)
        return await decide(ctx, ws, ckpt, refused, cursor=cursor, check_stop=check_stop)
    candidate = Candidate(
        target,
        edit_set,
        applied,
        incumbent.system_prompt,
        applied.system_prompt,
        choice="consolidate",
        reapply=False,
    )
    return await decide(ctx, ws, ckpt, candidate, cursor=cursor, check_stop=check_stop)


def _cursor(ckpt: Checkpoint, what: str) -> dict[str, object]:
    return {"epoch": ckpt.epoch, "epoch_end": what}
