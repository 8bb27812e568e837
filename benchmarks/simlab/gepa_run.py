"""One GEPA 0.1.4 run per seed on an efficiency setup's world, and what it is read as at each mark.

The rules that make it comparable with our loop's runs are in ``simlab.gepa_adapter``. GEPA runs
with its defaults (Pareto candidate selection, round-robin components, minibatches of 3 accepted
when strictly better, a full val evaluation of every accepted child, no merge, seed = world seed)
until the session has spent the budget: GEPA asks its stopper before each iteration and nowhere
else, so a run overshoots by the one iteration it was in, and the overshoot is recorded.

A mark b is read as the candidate GEPA would return from its pool as it stood at b: among the
candidates whose full val evaluation had ended by b calls, the best mean val score (the earliest
on ties, as ``GEPAResult.best_idx``). A run's figure at b never rests on a call past b.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gepa

from simlab.efficiency import Job, Setup, budget_calls, line_effects, prepare
from simlab.gepa_adapter import SimAdapter, bundle_of, candidate_of
from simlab.marks import NO_EFFECT
from simlab.world import Truth, sim_fingerprint, sim_world, write_config
from skillharness.config import load_config
from skillharness.data.pools import load_pools
from skillharness.errors import RunError
from skillharness.sim import SimServer
from skillharness.skills import Bundle
from skillharness.train.loop.experiment import open_training

RUN_ID = "gepa"
# The bundled synthetic benchmark (108 questions), split by question: for tests and dry runs.
SYNTH_SETUP = Setup("synth-q", "question", "the synthetic benchmark, split by question", (0,), (24, 12, 24))


class CallBudget:
    """GEPA's stopper: the budget's calls spent on the session, or the wall time, reached."""

    def __init__(self, count: Callable[[], int], budget: int, minutes: float) -> None:
        self.count = count
        self.budget = budget
        self.deadline = time.monotonic() + minutes * 60
        self.reason = "finished"

    def __call__(self, state: object) -> bool:
        if self.count() >= self.budget:
            self.reason = "max_calls"
        elif time.monotonic() >= self.deadline:
            self.reason = "max_minutes"
        else:
            return False
        return True


class PoolLog:
    """A GEPA callback: the calls spent when each candidate joined the pool, and the iterations."""

    def __init__(self, count: Callable[[], int]) -> None:
        self.count = count
        self.calls: list[int] = []
        self.iterations = 0

    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
        # Fired once per candidate, right after its full val evaluation, in pool order.
        self.calls.append(self.count())

    def on_iteration_start(self, event: Mapping[str, Any]) -> None:
        self.iterations += 1


class _Quiet:
    """GEPA's logger, kept to a file: it logs every proposed text."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def log(self, message: str) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            out.write(f"{message}\n")


@dataclass(frozen=True)
class GepaReading:
    """What a GEPA run given ``budget`` calls returns, and what its pool held then."""

    budget: int
    calls: int  # calls spent when the pool last grew at or before the mark
    returned: int  # pool index GEPA returns: best mean val score, earliest on ties
    closure_test: float
    closure_val: float
    best_in_pool: int  # pool index of the truly best candidate (oracle, test)
    best_closure_test: float
    accepted: int  # candidates added after the seed
    harmful: int  # of those, the ones whose true test effect on their parent is <= 0
    lines: int = 0  # lines the accepted edits inserted
    harmful_lines: int = 0  # of those, the ones whose true test effect, added alone, is <= 0


def read_pool(pool: Sequence[Mapping[str, Any]], budget: int) -> GepaReading:
    """The reading at ``budget`` of a run's pool records (``pool_records``), in pool order."""
    held = [entry for entry in pool if entry["calls"] <= budget]
    if not held:  # the seed's val evaluation had not ended: the initial bundle, nothing closed
        return GepaReading(budget, 0, 0, 0.0, 0.0, 0, 0.0, 0, 0)
    returned = max(held, key=lambda e: (e["val_score"], -e["index"]))
    best = max(held, key=lambda e: (e["closure_test"], -e["index"]))
    children = held[1:]
    line_effects_test = [line["effect_test"] for e in children for line in e["lines"]]
    return GepaReading(
        budget=budget,
        calls=held[-1]["calls"],
        returned=returned["index"],
        closure_test=returned["closure_test"],
        closure_val=returned["closure_val"],
        best_in_pool=best["index"],
        best_closure_test=best["closure_test"],
        accepted=len(children),
        harmful=sum(e["effect_test"] <= NO_EFFECT for e in children),
        lines=len(line_effects_test),
        harmful_lines=sum(effect <= NO_EFFECT for effect in line_effects_test),
    )


def candidate_at(pool: Sequence[Mapping[str, Any]], index: int, seed: Mapping[str, str]) -> dict[str, str]:
    """The whole candidate at ``index``: each record keeps only the texts it changed."""
    chain = []
    at: int | None = index
    while at is not None:
        chain.append(pool[at])
        at = pool[at]["parent"]
    candidate = dict(seed)
    for entry in reversed(chain):
        candidate.update(entry["texts"])
    return candidate


def pool_records(
    result: gepa.GEPAResult, calls: Sequence[int], truth: Truth, tools: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Every pool candidate with the calls when it joined, its scores and its edit's true effects."""
    if len(calls) != len(result.candidates):
        raise RunError(f"{len(calls)} val evaluations seen for {len(result.candidates)} pool candidates")
    bundles = [bundle_of(c, tools) for c in result.candidates]
    out: list[dict[str, Any]] = []
    for index, (candidate, bundle) in enumerate(zip(result.candidates, bundles, strict=True)):
        parent = result.parents[index][0] if index else None
        entry: dict[str, Any] = {
            "index": index,
            "parent": parent,
            "calls": calls[index],
            "val_score": result.val_aggregate_scores[index],
            "closure_test": truth.closure(bundle, "test"),
            "closure_val": truth.closure(bundle, "val"),
            "texts": {},
            "effect_test": 0.0,
            "effect_val": 0.0,
            "lines": [],
        }
        if parent is not None:
            before, texts = bundles[parent], result.candidates[parent]
            changed = {k: v for k, v in candidate.items() if texts[k] != v}
            entry["texts"] = changed
            for pool in ("test", "val"):
                entry[f"effect_{pool}"] = truth.accuracy(bundle, pool) - truth.accuracy(before, pool)
            entry["lines"] = [
                line for k, v in changed.items() for line in line_effects(truth, before, k, texts[k], v)
            ]
        out.append(entry)
    return out


@dataclass
class _Run:
    """What one GEPA run leaves behind, besides its pool."""

    result: gepa.GEPAResult
    adapter: SimAdapter
    stopper: CallBudget
    log: PoolLog
    spent: int = 0
    usage: dict[str, dict[str, float]] = field(default_factory=dict)


def _optimize(ctx: Any, loop: asyncio.AbstractEventLoop, initial: Bundle, job: Job) -> _Run:
    """GEPA at its defaults, in this (worker) thread; the session's loop serves its calls."""

    def count() -> int:
        return budget_calls(ctx)

    adapter = SimAdapter(ctx, loop, initial.tools, count)
    stopper = CallBudget(count, job.budget, job.max_minutes)
    log = PoolLog(count)
    result = gepa.optimize(
        seed_candidate=candidate_of(initial),
        trainset=list(ctx.train_questions),
        valset=list(ctx.val_questions),
        adapter=adapter,
        stop_callbacks=stopper,
        callbacks=[log],
        logger=_Quiet(job.folder / "gepa.log"),
        seed=job.seed,
    )
    return _Run(result, adapter, stopper, log, count(), ctx.session.usage())


async def measure_gepa(job: Job, setup: Setup) -> dict[str, Any]:
    """One seed: GEPA on the world and split of our efficiency job; its record."""
    data = prepare(job, setup)
    world = sim_world(job.world, job.seed, job.sim)
    with SimServer(world, questions=data.source.questions, benchmark=data.source.benchmark) as sim:
        truth = Truth(sim.oracle, data)
        # The agent as our efficiency runs have it, with independent draws (no request seed).
        agent = {"sampling": {"temperature": 0.7, "seed": None}}
        config = load_config(write_config(job.folder, data, sim, {}, agent=agent))
        initial = Bundle.load(data.bundle)
        async with open_training(config, initial, run_id=RUN_ID) as ctx:
            run = await asyncio.to_thread(_optimize, ctx, asyncio.get_running_loop(), initial, job)
    pool = pool_records(run.result, run.log.calls, truth, initial.tools)
    final = read_pool(pool, max(entry["calls"] for entry in pool))
    if final.returned != run.result.best_idx:  # the reading's rule must be GEPA's own
        raise RunError(f"read {final.returned} as GEPA's choice, GEPA returned {run.result.best_idx}")
    return {
        "sim_fingerprint": sim_fingerprint(world),
        "questions": {p: len(ids) for p, ids in load_pools(data.pools).questions.items()},
        "initial": truth.initial,
        "best": truth.best,
        "spent": run.spent,
        "overshoot": max(0, run.spent - job.budget),
        "end_reason": run.stopper.reason,
        "iterations": run.log.iterations,
        "metric_calls": run.result.total_metric_calls,
        "calls_by_phase": dict(run.adapter.calls),
        "proposals": dict(run.adapter.proposals),
        "usage": {r: {k: u.get(k, 0) for k in ("calls", "cache_hits")} for r, u in run.usage.items()},
        "pool": pool,
        "readings": {str(b): asdict(read_pool(pool, b)) for b in job.marks},
    }


def run_gepa_job(job: Job, setup: Setup) -> dict[str, Any]:
    """A seed's record with its wall time; a seed that fails is recorded with its error."""
    start = time.perf_counter()
    head = {"setup": job.setup, "seed": job.seed, "budget": job.budget, "world": job.world, "sim": job.sim}
    try:
        body = asyncio.run(measure_gepa(job, setup))
    except Exception as exc:  # one failed seed is reported, not fatal to the others
        body = {"error": f"{type(exc).__name__}: {exc}"}
    return {**head, **body, "wall_s": time.perf_counter() - start}
