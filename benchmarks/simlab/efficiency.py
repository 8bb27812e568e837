"""The efficiency setups: one training run per seed under a call budget, read at every budget mark.

A setup is a split of the 2,700 Video-MME questions, 210/90/600 units of ``unit`` (questions, or
videos: 630/270/1,800 questions) with split seed = world seed, or of another source's questions
(``mvbench-like``: 4,002 synthetic questions in MVBench's layout, 20 task types, five options; see
``SOURCES``); the train settings are the
defaults plus ``train.budget.max_calls`` and enough epochs that the budget ends the run unless the
loop ends it first (patience). Preflight runs first, as ``skillharness train`` runs it; the loop
trains the classes it trains by default. Truth is the oracle's expected accuracy on the whole val
and test pools (all 12 classes), so a class the loop does not train keeps its gap open.

Each seed runs in a process of its own (``run_job``); a run gets ``max_minutes`` of wall time,
then a stop file (a clean stop between decisions), and a hard timeout a while later.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from simlab.marks import Accept, accept_of, read_mark
from simlab.world import (
    CurveObserver,
    Data,
    Source,
    Truth,
    merge,
    mvbench_like_source,
    sim_fingerprint,
    sim_world,
    videomme_source,
    write_config,
)
from skillharness.config import Config, load_config
from skillharness.data import Pool
from skillharness.data.pools import load_pools, write_split
from skillharness.data.selection import read_questions
from skillharness.data.split import SplitParams, UnitKind, make_split
from skillharness.errors import RunError
from skillharness.sim import SimServer
from skillharness.sim.oracle import BundleText
from skillharness.skills import Bundle, Workspace, initial_bundle, inserted_lines, with_line
from skillharness.store import GateDecisionRow, RunMetric, RunReader
from skillharness.train.loop.training import TrainRequest, run_folder, run_training
from skillharness.train.preflight.checks import run_preflight_async
from skillharness.train.state.budget import StopGuard, TrainingStopped
from skillharness.train.state.checkpoint import Checkpoint
from skillharness.train.state.context import TrainContext
from skillharness.util.owner import exit_with_owner

BUDGETS = (2_000, 8_000, 32_000)
EPOCHS = 100  # more than any budget here reaches: the budget or patience ends the run
RUN_ID = "simlab"


@dataclass(frozen=True)
class Setup:
    name: str
    unit: UnitKind
    title: str
    seeds: tuple[int, ...]
    sizes: tuple[int, int, int] = (210, 90, 600)
    source: str = "videomme"  # the key of its questions' source in SOURCES
    min_val_per_class: int = 0  # the split's per-class val minimum (SplitParams.min_val_per_class)


SETUPS = {
    "videomme-q": Setup("videomme-q", "question", "GEPA's setup: 210/90/600 questions", (0, 1, 2, 3, 4)),
    "videomme-v": Setup("videomme-v", "video", "the audit's setup: 210/90/600 videos", (0, 1, 2)),
    # 10 train / 8 val / 50 test questions per task of 20. GEPA's Video-MME setup leaves about 7.5 val
    # questions per class; 8 is the least that keeps every class at train.gate.min_distinct, so the
    # default run trains all 20 whether or not train.task_types names them. 50 test per class as
    # videomme-q has; the other 2,642 questions stay unused, as Video-MME's 1,800 do there.
    "mvbench-like": Setup(
        "mvbench-like",
        "question",
        "an MVBench-like world: 200/160/1,000 questions of 20 tasks, five options",
        (0, 1, 2, 3, 4),
        (200, 160, 1_000),
        "mvbench-like",
        8,
    ),
}
# Where a setup's questions come from: (folder for the run's files, the --videomme path) -> Source.
SOURCES: dict[str, Callable[[Path, Path], Source]] = {
    "videomme": videomme_source,
    "mvbench-like": mvbench_like_source,
}


def setup_sources(names: Sequence[str], folder: Path, videomme: Path) -> dict[str, Source]:
    """Each named setup's question source, each built once."""
    built = {key: SOURCES[key](folder, videomme) for key in {SETUPS[name].source for name in names}}
    return {name: built[SETUPS[name].source] for name in names}


@dataclass(frozen=True)
class Job:
    """One seed of one setup, trained under ``budget`` and read at ``marks``."""

    setup: str
    seed: int
    budget: int
    marks: tuple[int, ...]
    world: str
    source: Source
    folder: Path
    max_minutes: float
    epochs: int = EPOCHS
    train: dict[str, Any] = field(default_factory=dict)  # an ablation row's train settings
    per_draw: bool = False  # agent.sampling.seed: per_draw (both arms of a draw share a seed)
    sim: dict[str, Any] = field(default_factory=dict)  # simulator settings over the world's (--sim)


def budget_calls(ctx: TrainContext) -> int:
    """The calls the budget counts (every role, cache hits excluded), as the loop's guard counts them."""
    return StopGuard(ctx.config.budget, ctx.session).spent().calls


def prepare(job: Job, setup: Setup | None = None) -> Data:
    """The seed's split (split seed = world seed) and the initial bundle; ``setup`` defaults to
    ``SETUPS[job.setup]`` (another is for a smaller benchmark, e.g. a test's)."""
    setup = setup or SETUPS[job.setup]
    questions = read_questions(job.source.questions, job.source.benchmark)
    params = SplitParams(
        sizes=setup.sizes, unit=setup.unit, seed=job.seed, min_val_per_class=setup.min_val_per_class
    )
    split = make_split(questions, params)
    if split.unmet_min_val:  # a class under its minimum would be left out of the default run
        raise RunError(
            f"the split leaves {', '.join(split.unmet_min_val)} "
            f"under {setup.min_val_per_class} val questions",
            setup=job.setup,
            seed=job.seed,
        )
    written = write_split(
        split,
        questions,
        job.source.questions,
        job.folder / "split",
        force=False,
        version=f"simlab {job.setup}",
    )
    pools = load_pools(written.pools_path).questions
    classes = tuple(sorted({q.task_type for q in questions}))
    # A skill per task type the data holds, as `experiment init` writes it (Video-MME's: the packaged 12).
    initial_bundle(classes).save(job.folder / "bundle")
    test = tuple(pools[Pool.TEST])
    val = tuple(pools[Pool.VAL])
    return Data(job.source, written.pools_path, job.folder / "bundle", classes, val, test, test, val)


async def _guarded(
    config: Config, request: TrainRequest, curve: CurveObserver, stop_file: Path, minutes: float
) -> str:
    """Train until the loop ends or stops; the end reason. After ``minutes`` the stop file stops the
    run between decisions; a decision that hangs is cancelled a quarter of that (plus a minute) later."""
    timer = asyncio.get_running_loop().call_later(minutes * 60, stop_file.touch)
    try:
        await asyncio.wait_for(run_training(config, request, observer=curve), timeout=minutes * 75 + 60)
    except TrainingStopped as exc:
        reason = str(exc.context.get("reason", "stopped"))
        return "max_minutes" if reason == "stop_file" else reason
    except TimeoutError:
        return "timeout"
    finally:
        timer.cancel()
    return Checkpoint.load(request.folder).state.value


def _accepts(store_url: str, truth: Truth, ws: Workspace, curve: CurveObserver) -> list[dict[str, Any]]:
    """Every accepted edit, its true effect on test and val and the calls when it became incumbent."""
    with RunReader(store_url) as reader:
        rows = [r for r in reader.ledger(GateDecisionRow, train_run_id=RUN_ID) if r.reason == "accept"]
    out = []
    for row in rows:
        before, after = ws.load(row.version_before), ws.load(row.version_after or "")
        calls = next(
            (p.calls for p in curve.points if p.version == row.version_after), curve.points[-1].calls
        )
        effect = {
            pool: truth.accuracy(after, pool) - truth.accuracy(before, pool) for pool in ("test", "val")
        }
        lines = line_effects(truth, before, row.target, row.document_before, row.document_after or "")
        accept = Accept(calls, effect["test"], effect["val"], tuple(line["effect_test"] for line in lines))
        out.append(
            {
                **asdict(accept),
                "target": row.target,
                "version_after": row.version_after,
                "kind": accept_kind(row.evidence),
                "parts": row.evidence.get("parts"),
                "lines": lines,
            }
        )
    return out


def accept_kind(evidence: dict[str, Any]) -> str:
    """How an accept was tested: ``merged`` (a merged set of several proposals: no line of it has
    evidence alone), ``own`` (an open test of one proposal, or of what was left of a merged set once
    its partner's edits landed, which is sized as one: the remainder of a set of three or more may
    still carry several proposals) or ``at_once`` (a test opened and decided at
    once: an epoch end's momentum or consolidation, or a run without open tests)."""
    if "parts" not in evidence:
        return "at_once"
    return "merged" if evidence["parts"] > 1 else "own"


def line_effects(
    truth: Truth, before: Bundle, target: str, document_before: str, after: str
) -> list[dict[str, Any]]:
    """Each line an accept inserted, added alone to the document it came into: its true effects."""
    out = []
    for line in inserted_lines(document_before, after):
        alone = BundleText.from_bundle(before).with_document(target, with_line(document_before, line))
        effect = {
            pool: truth.accuracy(alone, pool) - truth.accuracy(before, pool) for pool in ("test", "val")
        }
        out.append({"line": line, "effect_test": effect["test"], "effect_val": effect["val"]})
    return out


async def measure_job(job: Job) -> dict[str, Any]:
    """Train one seed; its record (see ``run_job``)."""
    data = prepare(job)
    world = sim_world(job.world, job.seed, job.sim)
    with SimServer(world, questions=data.source.questions, benchmark=data.source.benchmark) as sim:
        truth = Truth(sim.oracle, data)
        # Every class named: GEPA's split leaves about 7 val questions per class, micro under
        # train.gate.min_distinct, and GEPA trains them all; their accepts are reported apart.
        base = {"epochs": job.epochs, "budget": {"max_calls": job.budget}, "task_types": list(data.classes)}
        train = merge(base, job.train)
        # Independent arms are one setting away from the default (one seed per draw).
        agent = {"sampling": {"temperature": 0.7, "seed": "per_draw" if job.per_draw else None}}
        config = load_config(write_config(job.folder, data, sim, train, agent=agent))
        report = await run_preflight_async(config)
        if not report.ok:
            problems = "; ".join(f"{p.check}: {p.message}" for p in report.problems)
            raise RunError(f"preflight refused the run: {problems}", setup=job.setup, seed=job.seed)
        stop_file = job.folder / "STOP"
        request = TrainRequest(RUN_ID, run_folder(job.folder, RUN_ID), stop_file=stop_file)
        curve = CurveObserver(truth, request.folder / "workspace", budget_calls)
        end_reason = await _guarded(config, request, curve, stop_file, job.max_minutes)
    if curve.ctx is None or not curve.points:
        raise RunError(
            f"the run ended ({end_reason}) before its loop started", setup=job.setup, seed=job.seed
        )
    ckpt = Checkpoint.load(request.folder)
    ws = Workspace.open(request.folder / "workspace")
    final = ws.load(ckpt.version)
    spent = budget_calls(curve.ctx)
    accepts = _accepts(config.store.url, truth, ws, curve)
    marks = [accept_of(a) for a in accepts]  # with each line's effect, as a re-read gets them
    with RunReader(config.store.url) as reader:
        metrics = {m.name: m.value for m in reader.ledger(RunMetric, run_id=RUN_ID) if m.name != "usage"}
    gate = next((row.message for row in report.rows() if row.check == "gate"), "")
    return {
        "sim_fingerprint": sim_fingerprint(world),
        "questions": {pool: len(ids) for pool, ids in load_pools(data.pools).questions.items()},
        "trained_classes": list(curve.ctx.task_types),
        "preflight_gate": gate,
        "initial": truth.initial,
        "best": truth.best,
        "end_reason": end_reason,
        "stop_detail": ckpt.stop_reason,
        "spent": spent,
        "unspent": max(0, job.budget - spent) / job.budget,
        "closure_test": truth.closure(final, "test"),
        "closure_val": truth.closure(final, "val"),
        # The truth of the val gain beside the test gain, and (with train.gate.reserve) of the gain
        # on the reserve, which the run's optimism estimate reads (docs/train.md).
        "gain_truth": {
            "val": truth.gain(final, "val"),
            "test": truth.gain(final, "test"),
            "reserve": truth.reserve_gain(final, config.train.gate.reserve)
            if config.train.gate.reserve
            else None,
        },
        "alpha_sum": ckpt.alpha_spent,
        "gates": ckpt.gates_run,
        "open_at_end": len(ckpt.open),  # tests still open when the run ended (a budget stop leaves some)
        "rank_trial": {
            **ckpt.rank_trial.summary(),
            "decided_at_calls": curve.trial_decided_at,
            "closes": curve.trial_closes,
        },
        "alpha_spending": config.train.gate.alpha_spending,
        "usage": {
            role: {k: u.get(k, 0) for k in ("calls", "cache_hits")}
            for role, u in curve.ctx.session.usage().items()
        },
        "curve": [asdict(p) for p in curve.points],
        "accepts": accepts,
        "readings": {
            str(b): asdict(read_mark(curve.points, marks, b, end_reason=end_reason, spent=spent))
            for b in job.marks
        },
        "run_metrics": metrics,
    }


def run_job(job: Job) -> dict[str, Any]:
    """A process's whole work: one seed, measured; a JSON-able record. A run that fails is recorded
    with its error, so the other seeds still count and the report names the failure."""
    start = time.perf_counter()
    head = {"setup": job.setup, "seed": job.seed, "budget": job.budget, "world": job.world, "sim": job.sim}
    try:
        body = asyncio.run(measure_job(job))
    except Exception as exc:  # any failure of one seed: recorded, not fatal to the matrix
        body = {"error": f"{type(exc).__name__}: {exc}"}
    return {**head, **body, "wall_s": time.perf_counter() - start}


def _line(record: dict[str, Any]) -> str:
    name = f"{record['setup']} seed {record['seed']} budget {record['budget']:,}"
    if "error" in record:
        return f"{name}: FAILED {record['error']}\n"
    per_k = record["wall_s"] / max(record["spent"], 1) * 1000
    return (
        f"{name}: test closure {record['closure_test']:.1%}, {record['spent']:,} calls "
        f"({record['end_reason']}), {record['wall_s']:.0f} s ({per_k:.1f} s per 1,000 calls)\n"
    )


def run_jobs(jobs: list[Job], workers: int) -> list[dict[str, Any]]:
    """Every job's record, in the order given; ``workers`` > 1 runs them in that many processes."""
    records: dict[int, dict[str, Any]] = {}
    if workers <= 1:
        for i, job in enumerate(jobs):
            records[i] = run_job(job)
            sys.stderr.write(_line(records[i]))
    else:
        # Each worker ends with this process, so a killed benchmark leaves no training run behind.
        with ProcessPoolExecutor(
            workers, mp_context=get_context("spawn"), initializer=exit_with_owner, initargs=(os.getpid(),)
        ) as pool:
            futures = {pool.submit(run_job, job): i for i, job in enumerate(jobs)}
            for future in as_completed(futures):
                records[futures[future]] = future.result()
                sys.stderr.write(_line(records[futures[future]]))
    return [records[i] for i in range(len(jobs))]


def plan_jobs(
    setups: list[str],
    seeds: list[int] | None,
    budgets: list[int],
    *,
    separate: bool,
    world: str,
    sources: Mapping[str, Source],
    folder: Path,
    max_minutes: float,
    epochs: int,
    train: dict[str, Any],
    per_draw: bool = False,
    sim: dict[str, Any] | None = None,
) -> list[Job]:
    """One job per setup × seed at the largest budget, read at every budget; with ``separate``, one
    job per budget too, each read at its own. ``sources``: each setup's questions (``setup_sources``)."""
    runs = [(b, (b,)) for b in budgets] if separate else [(max(budgets), tuple(sorted(budgets)))]
    return [
        Job(
            name,
            seed,
            budget,
            marks,
            world,
            sources[name],
            folder / f"{name}-s{seed}-b{budget}",
            max_minutes,
            epochs,
            train,
            per_draw,
            sim or {},
        )
        for name in setups
        for seed in (seeds if seeds is not None else SETUPS[name].seeds)
        for budget, marks in runs
    ]
