"""One training step (SPEC 4.3): rollout → diagnose → case packs → evolve → open → evidence round.

Each valid proposal opens a test (:mod:`skillharness.train.loop.open_gates`); a refusal is decided at
once. The step ends with an evidence round (:mod:`skillharness.train.loop.rounds`): every open test,
this step's and earlier steps', gets one more ladder stage, and those that reach a decision close.

Before the evolve calls, the packs are screened (:mod:`skillharness.train.validate.reach`): a target
whose gate could not accept at the level it would get is not evolved, and one that can never
accept again is retired and reported once.

Proposals are made against the bundle as it stood when the step began (recorded in the
checkpoint), so a resumed step asks the same prompts and gets the same answers from the run's
cache; each chosen edit set is then re-applied to the incumbent of the moment (see decide).
"""

from __future__ import annotations

from collections.abc import Callable

from skillharness.agent import refusal_of
from skillharness.agent.records import Prediction
from skillharness.data import Pool
from skillharness.data.questions import Question
from skillharness.skills import EditTarget, Workspace
from skillharness.store import RunKind, TrainStepRow
from skillharness.train.diagnose.casepack import build_case_packs
from skillharness.train.diagnose.diagnoser import DiagnosisReport, diagnose
from skillharness.train.evolve.merge import under_test
from skillharness.train.evolve.proposer import evolve_all
from skillharness.train.loop.decide import decide
from skillharness.train.loop.open_gates import open_candidate
from skillharness.train.loop.rounds import evidence_round
from skillharness.train.state.checkpoint import Checkpoint, RetiredTarget
from skillharness.train.state.context import TrainContext
from skillharness.train.state.rank_trial import judge_trial, rank_mode
from skillharness.train.state.records import Candidate, CasePack, Refused
from skillharness.train.validate.reach import Screened, screen_packs

__all__ = ["run_step"]


async def run_step(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    batch: list[Question],
    *,
    save: Callable[[Checkpoint], None],
    before_decision: Callable[[], None],
) -> Checkpoint:
    """Run the step at ``ckpt``'s cursor; ``save`` is called after every decision."""
    epoch, step = ckpt.epoch, ckpt.step
    if ckpt.step_version is None:
        ckpt = _begin(ctx, ckpt)
        save(ckpt)
    start = ws.load(ckpt.step_version or ckpt.version)
    sample = epoch - 1 if ctx.temperature > 0 else 0  # a fresh sample per epoch when sampling
    suffix = f"e{epoch}s{step}.roll"
    predictions = await ctx.rollout(
        start, [(q, sample) for q in batch], suffix, kind=RunKind.INFER, pool=Pool.TRAIN
    )
    # A refused request is no wrong answer to diagnose (train/state/refusals.py): it is counted,
    # never evidence, so no edit learns the server's limit and none is excluded for it.
    answered = [p for p in predictions if refusal_of(p) is None]
    report = await diagnose(ctx, start, f"{ctx.run_id}.{suffix}", answered)
    ckpt, screened = _screened_packs(ctx, ckpt, report)
    if screened.retired:
        save(ckpt)
    packs = list(screened.packs)
    rejected = {label: tuple(memo) for label, memo in ckpt.rejected.items()}
    shown = under_test(ckpt) if ctx.config.evolve.show_under_test else {}
    mode = rank_mode(ctx.config.evolve.rank, ckpt.rank_trial)
    proposals = await evolve_all(ctx, start, packs, rejected, shown, mode)
    for index in range(ckpt.target_index, len(proposals)):
        before_decision()
        cursor = {"epoch": epoch, "step": step, "target": index}
        proposal = proposals[index]
        if isinstance(proposal, Candidate) and ctx.config.gate.rule == "eprocess":
            ckpt, _ = await open_candidate(ctx, ws, ckpt, proposal, cursor=cursor, check_stop=before_decision)
        else:  # a refusal (or a baseline rule's one look) is decided at once: its target's decision here
            ckpt = await decide(ctx, ws, ckpt, proposal, cursor=cursor, check_stop=before_decision)
            ckpt = ckpt.model_copy(update={"round_closed": [*ckpt.round_closed, proposal.target.label()]})
        ckpt = ckpt.model_copy(update={"target_index": index + 1})
        save(ckpt)
    ckpt = await evidence_round(
        ctx, ws, ckpt, cursor={"epoch": epoch, "step": step}, save=save, before_decision=before_decision
    )
    summary = _summary(ctx, ckpt, predictions, suffix, report, packs, proposals, screened.deferred)
    await ctx.store.aupsert([TrainStepRow(train_run_id=ctx.run_id, epoch=epoch, step=step, summary=summary)])
    await ctx.session.record_llm_events(ctx.run_id)
    return ckpt.model_copy(
        update={
            "step": step + 1,
            "target_index": 0,
            "step_version": None,
            "step_gates_run": None,
            "step_accepts": None,
            "step_busy": None,
        }
    )


def _screened_packs(
    ctx: TrainContext, ckpt: Checkpoint, report: DiagnosisReport
) -> tuple[Checkpoint, Screened]:
    """The step's case packs, of trained targets without ``max_open`` open tests, screened for
    reach (the checkpoint with any target retired for good)."""
    epoch, step = ckpt.epoch, ckpt.step
    packs = build_case_packs(
        report.diagnoses,
        max_cases=ctx.config.casepack.max_cases,
        seed=ctx.config.seed,
        salt=f"{epoch}:{step}",
    )
    trained = {EditTarget.skill(t).label() for t in ctx.task_types}
    packs = [p for p in packs if p.target.kind != "skill" or p.target.label() in trained]
    # A target with train.gate.max_open tests open (at the step's start) waits for one to close.
    packs = [p for p in packs if p.target.label() not in (ckpt.step_busy or [])]
    # The step's screen rests on gates_run (and accepts) at its start, so a resumed step keeps the same packs.
    gates_run = ckpt.gates_run if ckpt.step_gates_run is None else ckpt.step_gates_run
    accepts = ckpt.accepts if ckpt.step_accepts is None else ckpt.step_accepts
    screened = screen_packs(ctx, packs, gates_run=gates_run, retired=ckpt.retired, accepts=accepts)
    if screened.retired:
        retired = {k: RetiredTarget(epoch=epoch, step=step, detail=v) for k, v in screened.retired.items()}
        ckpt = ckpt.model_copy(update={"retired": {**ckpt.retired, **retired}})
    return ckpt, screened


def _begin(ctx: TrainContext, ckpt: Checkpoint) -> Checkpoint:
    """The step's start, saved before anything is asked: the bundle it proposes against, the gates
    run and accepts so far (its reachability screen), the targets whose open tests fill
    ``max_open``, and the rank trial judged on the tests closed so far (its verdict is the step's
    design, so it is judged nowhere else)."""
    busy = sorted(
        label
        for label in {o.target for o in ckpt.open}
        if sum(o.target == label for o in ckpt.open) >= ctx.config.gate.max_open
    )
    update = {
        "step_version": ckpt.version,
        "step_gates_run": ckpt.gates_run,
        "step_accepts": ckpt.accepts,
        "step_busy": busy,
        "rank_trial": judge_trial(
            ckpt.rank_trial, ctx.config.evolve.rank_trial_tests, ctx.config.evolve.rank_trial_alpha
        ),
    }
    return ckpt.model_copy(update=update)


def _summary(
    ctx: TrainContext,
    ckpt: Checkpoint,
    predictions: list[Prediction],
    suffix: str,
    report: DiagnosisReport,
    packs: list[CasePack],
    proposals: list[Candidate | Refused],
    deferred: object,
) -> dict[str, object]:
    """The step's ``train_steps`` row."""
    epoch, step = ckpt.epoch, ckpt.step
    return {
        "rollout_run": f"{ctx.run_id}.{suffix}",
        "questions": len(predictions),  # one per question of the batch
        "correct": sum(1 for p in predictions if p.correct),
        "refused": sum(1 for p in predictions if refusal_of(p) is not None),  # not diagnosed
        "waterfall": report.counts,
        "judge_calls": report.judge_calls,
        "fingerprint_hits": report.fingerprint_hits,
        "packs": {p.target.label(): len(p.cases) for p in packs},
        # Reported once: the targets this step found unreachable for good (never evolved again).
        "retired": {k: v.detail for k, v in ckpt.retired.items() if (v.epoch, v.step) == (epoch, step)},
        "deferred": deferred,
        "candidates": {
            p.target.label(): (p.choice if isinstance(p, Candidate) else f"refused: {p.reason}")
            for p in proposals
        },
        "version_after": ckpt.version,
        # The tests still open after the step's evidence round: gate index, target, observations, wealth.
        "open": [[o.key, o.target, len(o.observed), round(o.wealth, 4)] for o in ckpt.open],
        "busy": ckpt.step_busy or [],
    }
