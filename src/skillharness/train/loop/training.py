"""A whole training run: workspace, baseline, the loop, and what it leaves behind.

The run's folder (``<experiment>/runs/<run id>/``) holds the workspace of bundle versions and
the checkpoint. The store holds the training run, its children (baseline, rollouts, gate arms,
val scores) and the ledger. A stop of any kind (Ctrl-C, SIGTERM, stop file, budget) leaves the
run ``interrupted`` with a checkpoint that ``--resume`` continues exactly.

A resume is also how a run starts: with nothing saved yet (a first start, or a kill before the
first checkpoint) it starts the run, so one command line (``--resume ID --run-id ID``; the command
refuses ``--resume`` alone of an id the experiment never started) serves every (re)start. Once the
run has ended (finished or stopped early, its final scores stored) it raises :class:`RunEnded`
and touches nothing.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillharness.data import Pool
from skillharness.errors import ConfigError, StoreError, UserError
from skillharness.infer.endpoints import probe_endpoints
from skillharness.infer.runner import load_bundle
from skillharness.skills import Bundle, Workspace
from skillharness.store import RunKind, RunMetric, RunReader, RunStatus, settings_changes
from skillharness.train.loop.epochs import LoopObserver, train_epochs
from skillharness.train.loop.experiment import TrainSettings, open_training
from skillharness.train.loop.run_end import (
    checkpoint_saver,
    final_metrics,
    mark_interrupted,
    stop_metrics,
)
from skillharness.train.loop.seed_mode import checked_seed_mode, stored_settings
from skillharness.train.state.budget import StopGuard, TrainingStopped
from skillharness.train.state.caller import run_models
from skillharness.train.state.checkpoint import CHECKPOINT_FILE, Checkpoint, RunState
from skillharness.train.state.context import TrainContext
from skillharness.train.validate.final_score import final_val_score
from skillharness.train.validate.scoring import ValScore, score_predictions, val_score

__all__ = [
    "RunEnded",
    "TrainOutcome",
    "TrainRequest",
    "checked_seed_mode",
    "ended_run",
    "run_folder",
    "run_training",
]

# The metric ``final_metrics`` writes last: a run whose checkpoint has ended but lacks it is finished off.
_FINAL_METRIC = "final"
# Where a training run's folder is (path and host): a run id reused from another folder names it.
_FOLDER_METRIC = "folder"


class RunEnded(UserError):
    """A resume of a run that has ended: there is nothing to train, and nothing is done."""


@dataclass(frozen=True)
class TrainRequest:
    """What the ``train`` command asks for."""

    run_id: str
    folder: Path  # the run's folder (workspace, checkpoint, stop file)
    resume: bool = False
    baseline_run: str | None = None  # reuse this infer run of the initial bundle on val
    stop_file: Path | None = None


@dataclass(frozen=True)
class TrainOutcome:
    run_id: str
    checkpoint: Checkpoint
    workspace: Path
    baseline: ValScore  # on val at the reserved sample (fresh: no gate drew it)
    final: ValScore
    gain: dict[str, Any]  # the val gain, selected on val (optimistic): see final_score.py
    usage: dict[str, dict[str, float]]


def run_folder(experiment_dir: Path, run_id: str) -> Path:
    return experiment_dir / "runs" / run_id


class _Quiet:
    def on_start(self, ctx: TrainContext) -> None:
        return None

    def on_step(self, ckpt: Checkpoint, steps_in_epoch: int) -> None:
        return None

    def on_checkpoint(self, ckpt: Checkpoint) -> None:
        return None


def _prepare(request: TrainRequest, initial: Bundle) -> tuple[Workspace, Checkpoint]:
    """The run's workspace and checkpoint. The checkpoint is written first, so that any run
    killed after this point is resumable (a missing workspace is created on resume)."""
    path = request.folder / "workspace"
    saved = (request.folder / CHECKPOINT_FILE).exists()
    if request.resume and saved:
        ckpt = Checkpoint.load(request.folder)  # names a damaged checkpoint
        chosen = request.baseline_run or f"{request.run_id}.baseline"
        if ckpt.best_score is None and chosen != ckpt.baseline_run_id:
            # Nothing rests on the baseline until it is scored: a refused --baseline is not a
            # run id lost, the resume names another (or none, to run it afresh).
            ckpt = ckpt.model_copy(update={"baseline_run_id": chosen})
            ckpt.save(request.folder)
        if request.baseline_run is not None and request.baseline_run != ckpt.baseline_run_id:
            raise ConfigError(
                f"run {request.run_id} was started with baseline {ckpt.baseline_run_id}, not "
                f"--baseline {request.baseline_run}: give the same --baseline, or none, to resume it",
                run_id=request.run_id,
            )
        if not ckpt.state.ended:  # an ended run keeps its state: the loop has nothing left to do
            ckpt = ckpt.model_copy(update={"state": RunState.RUNNING, "stop_reason": ""})
    else:
        if not request.resume and (path.exists() or saved):
            raise ConfigError(
                f"run {request.run_id} already has a folder at {request.folder}; resume it with "
                f"--resume {request.run_id} or choose another --run-id"
            )
        # A resume with nothing saved (a first start, or a kill before the first checkpoint) starts.
        baseline_run = request.baseline_run or f"{request.run_id}.baseline"
        ckpt = Checkpoint(run_id=request.run_id, baseline_run_id=baseline_run)
        request.folder.mkdir(parents=True, exist_ok=True)
        ckpt.save(request.folder)
    if (path / "manifest.json").is_file():
        return Workspace.open(path), ckpt
    return Workspace.create(path, initial, reason="initial bundle"), ckpt


def ended_run(request: TrainRequest, store_url: str) -> Checkpoint | None:
    """The checkpoint of ``request``'s run when it has ended and its final scores are stored.

    A run whose checkpoint has ended but whose final scores are missing (killed in between) has
    not ended: a resume writes them, without training.
    """
    if not request.resume or not (request.folder / CHECKPOINT_FILE).exists():
        return None
    ckpt = Checkpoint.load(request.folder)
    if not ckpt.state.ended:
        return None
    with RunReader(store_url) as reader:
        final = reader.ledger(RunMetric, run_id=request.run_id, name=_FINAL_METRIC)
    # A stop's final (budget, stop file, Ctrl-C) is not the end's: only the end's has the scores.
    ended = [m for m in final if isinstance(m.value, dict) and m.value.get("stop", "end") == "end"]
    return ckpt if ended else None


def _refuse_foreign_run(request: TrainRequest, store_url: str) -> None:
    """Refuse, before anything is created, a run id the store holds for another experiment folder.

    A run whose folder here has no checkpoint but whose id the store knows was started elsewhere
    (the checkpoint is saved before the run's row is written): continuing it here would replay that
    folder's run into a new one.
    """
    if (request.folder / CHECKPOINT_FILE).exists():
        return
    try:
        with RunReader(store_url) as reader:
            reader.run(request.run_id)
            where = reader.ledger(RunMetric, run_id=request.run_id, name=_FOLDER_METRIC)
    except StoreError:  # no store yet, or no such run in it
        return
    value = where[0].value if where else {}
    other = (
        f"from the experiment folder {value.get('path')} on host {value.get('host')}"
        if isinstance(value, dict) and value.get("path")
        else "from another experiment folder"
    )
    raise ConfigError(
        f"run id {request.run_id} is already taken on this store, by a run started {other}; "
        f"{request.folder} holds no checkpoint of it. Choose a new --run-id for a run of this "
        "folder (to continue that run, resume it from its own folder's experiment)",
        run_id=request.run_id,
    )


async def _baseline(
    ctx: TrainContext,
    initial: Bundle,
    store_url: str,
    reuse: str | None,
    settings: dict[str, Any] | None = None,
    check_stop: Callable[[], None] | None = None,
) -> ValScore:
    """The ``infer_adhoc`` baseline on val: a reused run (provenance and settings checked) or a child run.

    ``settings`` are this run's answer-relevant settings (``Config.settings`` for an infer run): a
    reused run must have been answered under the same ones (frames, protocol, vision, limits, ...).
    """
    if reuse is None:
        return await val_score(ctx, initial, run_suffix="baseline", check_stop=check_stop)
    with RunReader(store_url) as reader:
        info = reader.run(reuse).provenance
        if info.kind is not RunKind.INFER:  # a train run's settings would all "differ", unhelpfully
            raise ConfigError(
                f"--baseline {reuse} is a {info.kind.value} run, not an infer run of the initial bundle "
                "on val (skillharness infer --pool val); omit --baseline to run the baseline afresh",
                run_id=reuse,
                field="--baseline",
            )
        wanted = {
            "bundle_hash": initial.bundle_hash,
            "pools_sha256": ctx.provenance.pools_sha256,
            "model": ctx.provenance.model,
            "sampling": ctx.provenance.sampling,
            "pool": Pool.VAL,
        }
        differs = [k for k, v in wanted.items() if getattr(info, k) != v]
        changes = _settings_changes(reader.settings(reuse), settings)
        if differs or changes:
            named = [*differs, *(change.split(":", 1)[0] for change in changes)]
            raise StoreError(
                f"--baseline {reuse} does not match this training run ({', '.join(named)} differ"
                + (f": {'; '.join(changes)}" if changes else "")
                + "); omit --baseline to run the baseline afresh",
                run_id=reuse,
                fields=named,
            )
        predictions = reader.predictions(reuse)
    score = score_predictions(
        [p for p in predictions if p.sample_idx == 0], {q.question_id: q.task_type for q in ctx.val_questions}
    )
    ctx.val_scores[initial.bundle_hash] = score
    return score


def _settings_changes(stored: dict[str, Any] | None, given: dict[str, Any] | None) -> list[str]:
    """How a reused baseline's settings differ from this run's; every one when it has none stored."""
    if given is None:
        return []
    if stored is None:  # a run from before settings were kept cannot show it was answered alike
        return ["settings: stored (not kept), now this run's"]
    # Only sample 0 is read, and it is the same draw however many samples the run took.
    ignored = {"agent.samples"}
    return settings_changes(
        {k: v for k, v in stored.items() if k not in ignored},
        {k: v for k, v in given.items() if k not in ignored},
    )


async def run_training(
    config: TrainSettings, request: TrainRequest, *, observer: LoopObserver | None = None
) -> TrainOutcome:
    """Train (or resume) one run; raises :class:`TrainingStopped` or cancellation after saving,
    and :class:`RunEnded`, having done nothing, when a resumed run has already ended."""
    if config.agent.bundle is None:
        raise ConfigError("agent.bundle is not set: the initial bundle training starts from")
    ended = ended_run(request, config.store.url)
    if ended is not None:  # before any probe: an ended run asks nothing of anyone
        reason = f" ({ended.stop_reason})" if ended.stop_reason else ""
        raise RunEnded(
            f"run {request.run_id} has ended: {ended.state.value}{reason}; nothing to resume",
            run_id=request.run_id,
            state=ended.state.value,
        )
    # A dead endpoint, or a model name one does not serve, stops the run before it spends anything.
    await probe_endpoints(config.llm, run_models(config.llm.model, config.train.roles))
    config = await checked_seed_mode(
        config.for_run(request.run_id),
        stored_settings(request.folder, request.resume, request.run_id, config),
    )
    _refuse_foreign_run(request, config.store.url)
    initial = load_bundle(config.agent.bundle)
    ws, ckpt = _prepare(request, initial)
    initial = ws.load("v0000")
    async with open_training(config, initial, run_id=request.run_id) as ctx:
        settings = config.settings(RunKind.TRAIN)  # stored, so a refused resume names what changed
        log = await ctx.store.open_run(ctx.provenance, resume=request.resume, settings=settings)
        host = config.store.host or socket.gethostname()
        where = {"path": str(request.folder.resolve()), "host": host}
        await ctx.store.aupsert([RunMetric(run_id=request.run_id, name=_FOLDER_METRIC, value=where)])
        # The run's budget: what earlier invocations spent comes from the checkpoint.
        guard = StopGuard(ctx.config.budget, ctx.session, request.stop_file, before=ckpt.spent)
        status = RunStatus.FAILED
        try:
            outcome = await _train(ctx, ws, ckpt, config, request, observer or _Quiet(), guard)
            status = RunStatus.FINISHED
            return outcome
        except TrainingStopped as exc:
            status = RunStatus.INTERRUPTED
            stopped = mark_interrupted(request.folder, str(exc), guard)
            if stopped is not None:  # what the run reached, without the final score
                stop = "budget" if exc.budget else str(exc.context.get("reason", "stopped"))
                await ctx.store.aupsert(stop_metrics(ctx, ws, stopped, guard, stop=stop))
            raise
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            status = RunStatus.INTERRUPTED
            stopped = mark_interrupted(request.folder, str(exc) or type(exc).__name__, guard)
            if stopped is not None:
                await ctx.store.aupsert(stop_metrics(ctx, ws, stopped, guard, stop="interrupted"))
            raise
        finally:
            await ctx.session.record_llm_events(ctx.run_id)  # the run's outages, on the record
            await log.close(status)


async def _train(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    config: TrainSettings,
    request: TrainRequest,
    observer: LoopObserver,
    guard: StopGuard,
) -> TrainOutcome:
    observer.on_start(ctx)
    reuse = None if ckpt.baseline_run_id == f"{ctx.run_id}.baseline" else ckpt.baseline_run_id
    baseline = await _baseline(
        ctx, ws.load("v0000"), config.store.url, reuse, config.settings(RunKind.INFER), guard.check
    )
    if ckpt.best_score is None:  # epoch 0: the baseline is the score to beat
        ckpt = ckpt.model_copy(
            update={
                "best_score": baseline.accuracy,
                "ema": {t: baseline.class_accuracy(t) for t in ctx.task_types},
            }
        )
    save = checkpoint_saver(ctx, request.folder, guard)
    ckpt = save(ckpt)
    ckpt = await train_epochs(ctx, ws, ckpt, save=save, check_stop=guard.check, observer=observer)
    # On samples no gate or guard drew (the epoch-end scores replay theirs): see final_score.py.
    # Two passes over val: checked before each and about every stage's worth of draws.
    scored = await final_val_score(
        ctx, ws.load("v0000"), ws.load(ckpt.version), next_sample=ckpt.next_sample, check_stop=guard.check
    )
    await ctx.store.aupsert(final_metrics(ctx, ws, ckpt, guard, scored))
    ckpt = save(ckpt)  # with everything the run spent, the final score's included
    return TrainOutcome(
        ctx.run_id, ckpt, ws.path, scored.baseline, scored.final, scored.gain, ckpt.spent.usage
    )
