"""Benchmark: false accepts *in the loop*, our gate next to GEPA's rule and the fixed-n rule.

Run: ``.venv/bin/python benchmarks/gate.py --in-loop [--steps 40]`` (a few minutes on one core).

A stream of candidate edits, seeded, runs against the simulator. At each step one class is
drawn, and one edit to its skill: *useful* (it states an insight the skill lacks), *harmful* (it
states a harmful rule) or *useless* (filler). Each rule decides on paired observations from the
same pipeline: ``validate`` (cached incumbent samples, fresh candidate samples, INFRA retries).
An accepted edit becomes the incumbent, as in the loop. The oracle gives every edit's true
effect on val and test. A false accept is an accepted edit whose true val effect is <= 0.

Rules:
- our gate: ``validate`` itself;
- "strictly better on 3" (GEPA-style): the first 3 draws of the same plan;
- "mean > 2 SE at n": the first n draws of the same plan.

The section goes to ``docs/benchmarks.md`` under ``## gate_in_loop``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from skillharness.config import load_config
from skillharness.data.loader import load_questions
from skillharness.data.pools import load_pools, write_split
from skillharness.data.split import SplitParams, make_split
from skillharness.data.synth import MICRO_TASK_TYPES, ensure_synthetic_benchmark
from skillharness.sim import SimConfig, SimServer, World
from skillharness.skills import Bundle, EditLimits, EditSet, EditTarget, initial_bundle
from skillharness.train.gate import DecisionKind, FixedNStandardError, StrictlyBetterMinibatch
from skillharness.train.loop.experiment import open_training
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import Candidate
from skillharness.train.validate.paired_gate import draw_plan, paired_outcomes, validate
from skillharness.util.atomic import atomic_write_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
BENCH_CACHE = Path.home() / ".cache" / "skillharness-bench" / "synth"
SEED = 20260716
ALPHA = 0.05
N_MAX = 128
KINDS = ("useful", "harmful", "useless")
KIND_WEIGHTS = (0.2, 0.2, 0.6)

Decide = Callable[[TrainContext, Bundle, Candidate, int], Awaitable[bool]]


@dataclass
class Tally:
    """What one rule did over the stream."""

    rule: str
    gates: int = 0
    null_gates: int = 0  # edits whose true val effect is <= 0
    accepts: int = 0
    false_accepts: int = 0
    val_gain: float = 0.0  # summed true effects of accepted edits
    test_gain: float = 0.0
    agent_calls: int = 0
    kinds: dict[str, int] = field(default_factory=dict)


def _candidate(incumbent: Bundle, task_type: str, kind: str, world: World, step: int) -> Candidate:
    target = EditTarget.skill(task_type)
    body = incumbent.skill(task_type).body
    if kind == "useful":
        missing = [r for r in world.insights_for(task_type) if r.canonical not in body]
        line = missing[0].canonical if missing else f"Keep notes short ({step})."
    elif kind == "harmful":
        line = world.harmful[step % len(world.harmful)].canonical
    else:
        line = f"Keep a steady pace through the checklist ({step})."
    edit_set = EditSet(
        skill_update_mode="rewrite", edits=(), body=body.rstrip("\n") + "\n" + line + "\n", rationale=kind
    )
    after = incumbent.apply(target, edit_set, EditLimits(max_body_chars=100_000))
    if not isinstance(after, Bundle):
        raise RuntimeError(f"benchmark edit refused: {after}")
    return Candidate(target, edit_set, after, body, after.skill(task_type).body, "only")


def _first_sample(ctx: TrainContext, k: int) -> int:
    # Fresh sample indices per gate, as the training loop's checkpoint counter gives them: a plan
    # uses fewer than 2 * n_max indices per question, and these skill edits have no guard.
    return 1 + (k - 1) * 2 * ctx.config.gate.n_max


async def _eprocess(ctx: TrainContext, incumbent: Bundle, candidate: Candidate, k: int) -> bool:
    first = _first_sample(ctx, k)
    return (await validate(ctx, incumbent, candidate, gate_index=k, alpha=ALPHA, first_sample=first)).accepted


def _prefix_rule(rule: Any, n: int) -> Decide:
    async def decide(ctx: TrainContext, incumbent: Bundle, candidate: Candidate, k: int) -> bool:
        _, plan = draw_plan(ctx, candidate, k, first_sample=_first_sample(ctx, k))
        outcomes = await paired_outcomes(ctx, incumbent, candidate.bundle, plan.draws[:n], gate_index=k)
        d = np.asarray([[o.d for o in outcomes if o.d is not None]], dtype=np.int8)
        return bool(d.size) and int(rule.run(d).kinds[0]) == DecisionKind.ACCEPT

    return decide


def rules(n_max: int) -> dict[str, Decide]:
    return {
        f"e-process gate (validate, α={ALPHA:g}, n_max={n_max})": _eprocess,
        "strictly better on 3 (GEPA-style)": _prefix_rule(StrictlyBetterMinibatch(), 3),
        f"mean > 2 SE at n={n_max}": _prefix_rule(FixedNStandardError(n=n_max), n_max),
    }


def _experiment(folder: Path, sim: SimServer, n_max: int) -> Path:
    root = ensure_synthetic_benchmark(BENCH_CACHE, seed=3, videos=36)
    questions_path = root / "questions.json"
    questions = load_questions(questions_path)
    split = make_split(questions, SplitParams(sizes=(6, 18, 12), unit="video", seed=3))
    written = write_split(split, questions, questions_path, folder / "split", force=False, version="bench")
    initial_bundle().save(folder / "bundle")
    doc = {
        "data": {
            "questions": str(questions_path),
            "pools": str(written.pools_path),
            "videos_dir": str(root / "videos"),
            "subtitles_dir": str(root / "subtitles"),
        },
        "llm": {"model": sim.model_name, "endpoints": [{"base_url": sim.base_url}]},
        "cache": {"url": f"sqlite:///{folder / 'cache.sqlite'}"},
        "store": {"url": f"sqlite:///{folder / 'runs.sqlite'}"},
        "agent": {
            "bundle": str(folder / "bundle"),
            "concurrency": 16,
            "vision": False,
            "sampling": {"temperature": 0.7},
            "frames": {"cache_dir": str(folder / "frames")},
        },
        "train": {"seed": SEED, "gate": {"n_max": n_max, "alpha": ALPHA}},
        "eval": {"run_holdout_eval": False},
    }
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


async def _run_rule(name: str, decide: Decide, steps: int, sim: SimServer, folder: Path, n_max: int) -> Tally:
    path = _experiment(folder, sim, n_max)
    config = load_config(path)
    incumbent = Bundle.load(folder / "bundle")
    questions = load_questions(config.data.questions)
    test_ids = set(load_pools(folder / "split" / "pools.json").questions["test"])
    tally = Tally(name)
    rng = random.Random(SEED)
    calls_before = int(sim.stats()["roles"].get("agent", 0))
    async with open_training(config, incumbent, run_id="bench") as ctx:
        classes = [t for t in ctx.val_by_type if t not in {m.value for m in MICRO_TASK_TYPES}]
        for k in range(1, steps + 1):
            task_type, kind = rng.choice(classes), rng.choices(KINDS, KIND_WEIGHTS)[0]
            candidate = _candidate(incumbent, task_type, kind, sim.world, k)
            val_q = ctx.val_by_type[task_type]
            test_q = [q for q in questions if q.question_id in test_ids and q.task_type == task_type]
            val_effect = sim.oracle.edit_effect(incumbent, candidate.bundle, val_q).delta
            tally.gates += 1
            tally.null_gates += val_effect <= 0
            tally.kinds[kind] = tally.kinds.get(kind, 0) + 1
            if await decide(ctx, incumbent, candidate, k):
                tally.accepts += 1
                tally.false_accepts += val_effect <= 0
                tally.val_gain += val_effect
                tally.test_gain += sim.oracle.edit_effect(incumbent, candidate.bundle, test_q).delta
                incumbent = candidate.bundle
    tally.agent_calls = int(sim.stats()["roles"].get("agent", 0)) - calls_before
    return tally


def _row(t: Tally) -> str:
    share = f"{t.false_accepts / t.accepts:.2f}" if t.accepts else "–"
    per_null = f"{t.false_accepts / t.null_gates:.3f}" if t.null_gates else "–"
    return (
        f"| {t.rule} | {t.gates} | {t.null_gates} | {t.accepts} | {t.false_accepts} | {per_null} | {share} "
        f"| {t.val_gain:+.3f} | {t.test_gain:+.3f} | {t.agent_calls} |"
    )


def section(tallies: list[Tally], steps: int, n_max: int, elapsed_s: float) -> str:
    return "\n".join(
        [
            "## gate_in_loop",
            "",
            f"One seeded stream of {steps} skill edits per rule (useful / harmful / useless drawn "
            f"{KIND_WEIGHTS[0]:g} / {KIND_WEIGHTS[1]:g} / {KIND_WEIGHTS[2]:g}) against the simulator at "
            "temperature 0.7; an accepted edit becomes the incumbent. Every rule reads paired outcomes "
            "from the same pipeline as `validate`. The oracle gives each edit's true effect; a false "
            "accept is an accepted edit whose true val effect is ≤ 0. α bounds "
            "P(accept | no-better edit), the 'false / null' column; 'false / accepts' also depends on "
            "the mix of edits. Reproduce with `.venv/bin/python benchmarks/gate.py --in-loop "
            f"--steps {steps} --n-max {n_max}` ({elapsed_s:.0f} s).",
            "",
            "| rule | gates | no-better edits | accepts | false accepts | false / null | false / accepts "
            "| true val gain | true test gain | agent calls |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *(_row(t) for t in tallies),
            "",
        ]
    )


def write_section(text: str) -> None:
    old = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    pattern = re.compile(r"^## gate_in_loop\n.*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    atomic_write_text(DOC, new)


async def measure(steps: int, n_max: int) -> list[Tally]:
    root = ensure_synthetic_benchmark(BENCH_CACHE, seed=3, videos=36)
    tallies = []
    with SimServer(SimConfig(seed=SEED), questions=root / "questions.json") as sim:
        for name, decide in rules(n_max).items():
            with tempfile.TemporaryDirectory(prefix="gate-in-loop-") as tmp:
                tallies.append(await _run_rule(name, decide, steps, sim, Path(tmp), n_max))
    return tallies


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in-loop", action="store_true")
    parser.add_argument("--steps", type=int, default=40, help="Candidate edits per rule.")
    parser.add_argument(
        "--n-max", type=int, default=N_MAX, help="Budget of our gate and n of the fixed-n rule."
    )
    parser.add_argument("--no-write", action="store_true", help="Print only; leave docs/benchmarks.md.")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    tallies = asyncio.run(measure(args.steps, args.n_max))
    text = section(tallies, args.steps, args.n_max, time.perf_counter() - start)
    if not args.no_write:
        write_section(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
