"""SimLab: what training achieves against the simulator's ground truth, at what cost, and how honestly.

Run: ``.venv/bin/python benchmarks/train.py [--dataset synth|videomme] [--seeds 1 2 3] [--rows all]
[--world decisive|realistic] [--no-write]``; the efficiency setups: ``--dataset videomme-q videomme-v
[--budgets 2000 8000 32000] [--separate-budgets] [--jobs N] [--max-minutes M]``, or ``--dataset
mvbench-like`` (a synthetic MVBench-shaped world: 20 task types, five options) (``simlab.efficiency``
says what they measure; ``docs/benchmarks.md`` shows the tables). Either takes ``--sim KEY=VALUE``
(repeatable) for any simulator setting over the world's, e.g. ``--sim world.seed_coupling=0.2 --sim
evolve.proposer_compliance=0.5``; the title names them and the results carry them with a fingerprint.

Each row trains the initial bundle in-process (``run_training``) against one simulator world per
seed, with a text-only agent (``vision: false``), and reads the truth from the world's oracle.
Datasets: the synthetic benchmark, or the real 2,700 Video-MME questions (when
``../shared/data/videomme/videomme_questions.json`` exists next to the repo). Their videos are
not here, and training refuses to start on a missing video (``check_media``), and a text-only
agent still reads each video's duration; so every Video-MME video id is linked to one real
synthetic video file. The simulator answers from the question text and the bundle, never the
video, so the placeholder changes no answer. Measured:

- gap closure = (final - initial) / (oracle-best - initial), the oracle's intended-letter accuracy
  of the trained classes' val and test questions (what the insights are worth); oracle-best is
  ``Oracle.best_bundle(initial, pool)`` for each pool (the insights whose addition to their class's
  skill is best on that pool's questions: every insight unless side effects make one a net loss);
- calls by role (``TrainOutcome.usage``) and the curve of test gap closure against the
  simulator's request count, sampled at every checkpoint (after each step and epoch end), from
  which the calls to reach 50/70/90 % of the gap are read;
- honesty: accepted edits whose true effect (the oracle's scored truth of version_after minus
  version_before, on SimLab's text-only agent path) on val, and on test, is <= 0; the sum of the
  gates' alpha against those false accepts; whether the scored true test gain lay in the run's
  reported val-gain interval;
- the val-to-test gap, per run (the ablation rows' last table, the efficiency setups' runs table,
  the GEPA peer's seeds table): val gap closure beside test gap closure, and the share of the
  inserted lines whose true effect on **test**, each added alone to the document it came into, is
  <= 0 (harmful or useless). With the simulator's side effects (``world.side_effect_share``) an
  edit accepted on a class's few val questions can lose on test, so the two closures can part;
- ablations on the same worlds: the GEPA rule (strictly better on 3), the fixed-n 2-SE rule, no
  rank, no momentum, no diagnosis.

The section goes to ``docs/benchmarks.md`` under ``## SimLab``; the efficiency setups also write their
raw per-seed records to ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import shlex
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from simlab.efficiency import BUDGETS, EPOCHS, SETUPS, line_effects, plan_jobs, run_jobs, setup_sources
from simlab.marks import NO_EFFECT
from simlab.provenance import code_state
from simlab.report import VAL_TEST_HEAD, reread, section, val_test_cells, write_results
from simlab.world import (
    ROOT,
    VIDEOMME,
    WORLDS,
    CurveObserver,
    Data,
    Source,
    Truth,
    dotted_settings,
    merge,
    questions_path,
    sim_fingerprint,
    sim_world,
    synth_source,
    videomme_source,
    write_config,
    write_section,
)
from skillharness.config import load_config
from skillharness.data.loader import load_questions
from skillharness.data.pools import load_pools, write_split
from skillharness.data.split import SplitParams, make_split
from skillharness.data.synth import MICRO_TASK_TYPES
from skillharness.sim import SimConfig, SimServer
from skillharness.skills import Workspace, initial_bundle
from skillharness.store import GateDecisionRow, RunMetric, RunReader
from skillharness.train.config import TrainConfig
from skillharness.train.loop.training import TrainRequest, run_folder, run_training
from skillharness.util.model import describe_validation

SPLIT_SEED = 3
ALPHA = 0.05
MILESTONES = (0.5, 0.7, 0.9)
TRAIN: dict[str, Any] = {
    "epochs": 3,
    "batch_size": 6,
    "early_stop_patience": 2,
    "gate": {"alpha": ALPHA, "n_max": 48, "first_stage": 8, "guard_draws": 8},
    "evolve": {"candidates": 2},
    "roles": {"evolve": {"temperature": 0.7}},  # two candidates that can differ (docs/train.md, Evolve)
}
FULL_LOOP = "full loop (e-process gate)"
ROWS: dict[str, dict[str, Any]] = {
    FULL_LOOP: {},
    "GEPA rule: strictly better on 3": {"gate": {"rule": "minibatch"}},
    "fixed n = 48, mean > 2 SE": {"gate": {"rule": "fixed_n"}},
    "no rank": {"evolve": {"rank": False}},
    "no momentum": {"momentum": {"enabled": False}},
    "no diagnosis": {"diagnosis": {"enabled": False}},
}
ROLES = ("agent", "judge", "evolve", "rank", "momentum", "consolidate")
RESULTS = ROOT / "benchmarks" / "results"


@dataclass(frozen=True)
class RunResult:
    """One training run's measured figures."""

    closure_val: float
    closure_test: float
    calls: dict[str, int]
    calls_to: dict[float, int | None]
    accepts: int
    harmful_val: int
    harmful_test: int
    alpha_sum: float
    lines: int  # lines the accepts inserted
    harmful_lines: int  # of those, lines whose true test effect, added alone, is <= 0
    gain: dict[str, Any]  # the run's reported val gain (fresh samples, paired, clustered by video)
    true_val_gain: float  # the oracle's scored-truth gain on every val question
    true_test_gain: float  # the same on every test question
    momentum: dict[str, int]  # the epoch-end momentum decisions by reason
    wall_s: float

    @property
    def val_truth_inside(self) -> bool:
        return self.gain["low"] <= self.true_val_gain <= self.gain["high"]

    @property
    def test_truth_inside(self) -> bool:
        return self.gain["low"] <= self.true_test_gain <= self.gain["high"]

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


def prepare_data(folder: Path, source: Source) -> Data:
    """The questions split by question, and the non-micro classes with the most val questions."""
    questions = load_questions(source.questions)
    split = make_split(questions, SplitParams(sizes=source.split, unit="question", seed=SPLIT_SEED))
    written = write_split(split, questions, source.questions, folder / "split", force=False, version="simlab")
    pools = load_pools(written.pools_path).questions
    by_id = {q.question_id: q for q in questions}
    micro = {str(t) for t in MICRO_TASK_TYPES}
    counts = Counter(by_id[i].task_type for i in pools["val"] if by_id[i].task_type not in micro)
    classes = tuple(sorted(t for t, _ in counts.most_common(source.classes)))
    initial_bundle().save(folder / "bundle")

    def ids(pool: str) -> tuple[str, ...]:
        return tuple(i for i in pools[pool] if by_id[i].task_type in classes)

    return Data(
        source,
        written.pools_path,
        folder / "bundle",
        classes,
        ids("val"),
        ids("test"),
        tuple(pools["test"]),
        tuple(pools["val"]),
    )


def _momentum(store_url: str, run_id: str) -> dict[str, int]:
    """The epoch-end momentum decisions of a run, counted by reason."""
    with RunReader(store_url) as reader:
        rows = reader.ledger(GateDecisionRow, train_run_id=run_id)
    return dict(Counter(r.reason for r in rows if r.evidence.get("choice") == "momentum"))


@dataclass(frozen=True)
class Honesty:
    """A run's accepts and how many truly did nothing or harm, per accept and per inserted line."""

    accepts: int
    harmful_val: int  # accepts with a true val effect <= 0
    harmful_test: int  # the same on test
    alpha_sum: float
    lines: int  # lines the accepts inserted
    harmful_lines: int  # of those, lines whose true test effect, added alone, is <= 0


def _honesty(store_url: str, run_id: str, truth: Truth, workspace: Workspace) -> Honesty:
    """The accepts of ``run_id`` judged by the oracle, and the sum of alpha spent."""
    with RunReader(store_url) as reader:
        accepted = [r for r in reader.ledger(GateDecisionRow, train_run_id=run_id) if r.reason == "accept"]
        metrics = {m.name: m.value for m in reader.ledger(RunMetric, run_id=run_id)}
    harmful = Counter[str]()
    effects: list[float] = []
    for row in accepted:
        before, after = workspace.load(row.version_before), workspace.load(row.version_after or "")
        for pool in ("val", "test"):
            if truth.accuracy(after, pool) - truth.accuracy(before, pool) <= 0:
                harmful[pool] += 1
        lines = line_effects(truth, before, row.target, row.document_before, row.document_after or "")
        effects += [line["effect_test"] for line in lines]
    return Honesty(
        len(accepted),
        harmful["val"],
        harmful["test"],
        float(metrics["alpha_spent"]["sum"]),
        len(effects),
        sum(e <= NO_EFFECT for e in effects),
    )


async def run_one(data: Data, world: SimConfig, ablation: dict[str, Any], folder: Path) -> RunResult:
    """Train once on ``world`` with ``ablation`` merged into the train settings; measure the truth."""
    start = time.perf_counter()
    with SimServer(world, questions=data.source.questions) as sim:
        truth = Truth(sim.oracle, data)
        train = merge(TRAIN, ablation) | {"task_types": list(data.classes)}
        config = load_config(write_config(folder, data, sim, train))
        request = TrainRequest(run_id="simlab", folder=run_folder(folder, "simlab"))
        curve = CurveObserver(truth, request.folder / "workspace", lambda _: int(sim.stats()["requests"]))
        outcome = await run_training(config, request, observer=curve)
    ws = Workspace.open(outcome.workspace)
    final = ws.load(outcome.checkpoint.version)
    honesty = _honesty(config.store.url, "simlab", truth, ws)
    initial = ws.load("v0000")

    def true_gain(ids: tuple[str, ...]) -> float:  # scored truth: what the run's val gain estimates
        oracle, path = truth.oracle, truth.path
        return oracle.expected_accuracy(final, ids, path) - oracle.expected_accuracy(initial, ids, path)

    return RunResult(
        closure_val=truth.closure(final, "val"),
        closure_test=truth.closure(final, "test"),
        calls={role: int(u.get("calls", 0)) for role, u in outcome.usage.items()},
        calls_to={m: curve.calls_to(m) for m in MILESTONES},
        accepts=honesty.accepts,
        harmful_val=honesty.harmful_val,
        harmful_test=honesty.harmful_test,
        alpha_sum=honesty.alpha_sum,
        lines=honesty.lines,
        harmful_lines=honesty.harmful_lines,
        gain=dict(outcome.gain),
        true_val_gain=true_gain(data.val_all),
        true_test_gain=true_gain(data.test_all),
        momentum=_momentum(config.store.url, "simlab"),
        wall_s=time.perf_counter() - start,
    )


def _spread(values: list[float]) -> str:
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:.0%} ± {sd:.0%} ({min(values):.0%}..{max(values):.0%})"


def _median_calls(results: list[RunResult], share: float) -> str:
    reached = [r.calls_to[share] for r in results if r.calls_to[share] is not None]
    return f"{statistics.median(reached):,.0f} ({len(reached)}/{len(results)})" if reached else "never"


def _per_point(results: list[RunResult]) -> str:
    closed = statistics.fmean(r.closure_test for r in results) * 100
    calls = statistics.fmean(r.total_calls for r in results)
    return f"{calls / closed:,.0f}" if closed > 0 else "n/a (no gap closed)"


def _share(k: int, of: int) -> str:
    return f"{k} ({k / of:.0%})" if of else str(k)


def tables(results: dict[str, list[RunResult]]) -> str:
    """The three tables (truth, cost, honesty) over the rows measured."""
    lines = [
        "| row | test gap closure | val gap closure | calls / point of test gap | "
        "calls to 50 % | to 70 % | to 90 % |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rs in results.items():
        lines.append(
            f"| {name} | {_spread([r.closure_test for r in rs])} | {_spread([r.closure_val for r in rs])} | "
            f"{_per_point(rs)} | {' | '.join(_median_calls(rs, m) for m in MILESTONES)} |"
        )
    lines += ["", "| row | " + " | ".join(ROLES) + " | total | wall s |", "|---|" + "---|" * (len(ROLES) + 2)]
    for name, rs in results.items():
        mean = [statistics.fmean(r.calls.get(role, 0) for r in rs) for role in ROLES]
        total = statistics.fmean(r.total_calls for r in rs)
        wall = statistics.fmean(r.wall_s for r in rs)
        lines.append(f"| {name} | {' | '.join(f'{v:,.0f}' for v in mean)} | {total:,.0f} | {wall:.0f} |")
    lines += [
        "",
        "| row | accepts | true val effect ≤ 0 | true test effect ≤ 0 | Σα "
        "| scored true val gain in val-gain interval | scored true test gain in it |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rs in results.items():
        accepts = sum(r.accepts for r in rs)
        hv, ht = sum(r.harmful_val for r in rs), sum(r.harmful_test for r in rs)
        alpha = sum(r.alpha_sum for r in rs)
        val_in, test_in = sum(r.val_truth_inside for r in rs), sum(r.test_truth_inside for r in rs)
        lines.append(
            f"| {name} | {accepts} | {_share(hv, accepts)} | {_share(ht, accepts)} | {alpha:.2f} "
            f"| {val_in}/{len(rs)} | {test_in}/{len(rs)} |"
        )
    return "\n".join(lines) + "\n" + gain_table(results)


def gain_table(results: dict[str, list[RunResult]]) -> str:
    """Per run: the val gain as reported (selected on val) beside the oracle's truth, momentum, and
    the val-to-test columns (val and test gap closure, inserted lines harmful or useless on test)."""
    lines = [
        "",
        "| row | run | val gain, by video [95 %] (selected on val) | per question | deff "
        f"| scored true val gain | scored true test gain | momentum decisions | {VAL_TEST_HEAD} |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, rs in results.items():
        for i, r in enumerate(rs):
            g = r.gain
            pq = (
                f"[{g['per_question_low']:+.1%}, {g['per_question_high']:+.1%}]"
                if g.get("per_question_low") is not None
                else "n/a"
            )
            deff = f"{g['design_effect']:.2f}" if g.get("design_effect") is not None else "n/a"
            momentum = ", ".join(f"{k} {v}" for k, v in sorted(r.momentum.items())) or "none"
            gap = val_test_cells(r.closure_val, r.closure_test, r.lines, r.harmful_lines)
            lines.append(
                f"| {name} | {i + 1} | {g['gain']:+.1%} [{g['low']:+.1%}, {g['high']:+.1%}] | {pq} | {deff} "
                f"| {r.true_val_gain:+.1%} | {r.true_test_gain:+.1%} | {momentum} | {gap} |"
            )
    return "\n".join(lines) + "\n"


async def measure(
    dataset: str, seeds: list[int], rows: list[str], world: str, questions: Path, sim: dict[str, Any]
) -> tuple[Data, dict[str, list[RunResult]]]:
    results: dict[str, list[RunResult]] = {name: [] for name in rows}
    with tempfile.TemporaryDirectory(prefix="simlab-") as tmp:
        source = (videomme_source if dataset == "videomme" else synth_source)(Path(tmp), questions)
        data = prepare_data(Path(tmp) / "data", source)
        for seed in seeds:
            config = sim_world(world, seed, sim)
            for name in rows:
                result = await run_one(
                    data, config, ROWS[name], Path(tmp) / f"s{seed}-{len(results[name])}-{rows.index(name)}"
                )
                results[name].append(result)
                sys.stderr.write(
                    f"seed {seed} | {name}: test closure {result.closure_test:.0%}, "
                    f"{result.total_calls} calls, {result.wall_s:.0f} s\n"
                )
    return data, results


DATASETS = {"synth": "synthetic benchmark", "videomme": "Video-MME questions"}


def ablations(args: argparse.Namespace, argv: list[str]) -> str:
    """The ablation rows on one dataset; the section's text."""
    seeds = args.seeds or [1, 2, 3]
    rows = list(ROWS) if args.rows is None or "all" in args.rows else args.rows
    world = args.world or "decisive"
    sim = sim_settings(args)
    start = time.perf_counter()
    data, results = asyncio.run(measure(args.dataset[0], seeds, rows, world, args.videomme, sim))
    title = f"SimLab: {DATASETS[args.dataset[0]]}, {world} world"
    if sim:
        title += ", " + ", ".join(sim_label(sim))
    header = (
        f"### {title}\n\n`.venv/bin/python {_command(argv)}`: seeds {seeds}; trained classes "
        f"{', '.join(data.classes)} ({len(data.val)} val / {len(data.test)} test questions of them); "
        f"{time.perf_counter() - start:.0f} s on the shared 2 cores.\n\n"
    )
    text = header + tables(results)
    if not args.no_write:
        write_section(title, text)
    return text


def train_settings(items: list[str]) -> dict[str, Any]:
    """``--set gate.merge_open=false`` ... as the nested train settings they name, checked against
    the train config before any run starts: an unknown key or a bad value ends the command."""
    try:
        settings = dotted_settings(items, "--set")
        TrainConfig.model_validate(settings)
    except ValidationError as exc:
        sys.exit(f"--set: {describe_validation(exc)}")
    except ValueError as exc:
        sys.exit(str(exc))
    return settings


def sim_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``--sim world.seed_coupling=0.2`` ... (and ``--seed-coupling``) as nested simulator settings,
    checked against the world of seed 0: an unknown key or a bad value ends the command."""
    try:
        settings = dotted_settings(args.sim, "--sim")
        if args.seed_coupling is not None:
            settings = merge(settings, {"world": {"seed_coupling": args.seed_coupling}})
        sim_world(args.world or "realistic", 0, settings)
    except ValueError as exc:  # a pydantic ValidationError is one
        sys.exit(f"--sim: {exc}")
    return settings


def sim_label(settings: dict[str, Any], prefix: str = "") -> list[str]:
    """``{"world": {"seed_coupling": 0.2}}`` as ``["world.seed_coupling=0.2"]``, sorted."""
    out = []
    for key, value in sorted(settings.items()):
        name = f"{prefix}{key}"
        out += sim_label(value, f"{name}.") if isinstance(value, dict) else [f"{name}={value}"]
    return out


def efficiency(args: argparse.Namespace, argv: list[str]) -> str:
    """The efficiency setups (``simlab.efficiency``); the section's text."""
    rows = args.rows or [FULL_LOOP]
    if len(rows) != 1 or "all" in rows:
        sys.exit("the efficiency setups measure one row at a time: give --rows NAME")
    world = args.world or "realistic"
    sim = sim_settings(args)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="simlab-") as tmp:
        folder = args.workdir or Path(tmp)
        jobs = plan_jobs(
            args.dataset,
            args.seeds,
            args.budgets,
            separate=args.separate_budgets,
            world=world,
            sources=setup_sources(args.dataset, folder, args.videomme),
            folder=folder,
            max_minutes=args.max_minutes,
            epochs=args.epochs,
            train=merge(ROWS[rows[0]], train_settings(args.set)),
            per_draw=args.per_draw_seeds,
            sim=sim,
        )
        records = run_jobs(jobs, args.jobs)
    elapsed = time.perf_counter() - start
    title = f"SimLab: the efficiency setups ({', '.join(args.dataset)}), {world} world"
    if rows[0] != FULL_LOOP:
        title += f", {rows[0]}"
    if args.set:
        title += ", " + ", ".join(f"train.{item}" for item in args.set)
    if args.per_draw_seeds:
        title += f", per-draw seeds (world.seed_coupling {sim_world(world, 0, sim).world.seed_coupling:g})"
    others = [item for item in sim_label(sim) if not item.startswith("world.seed_coupling=")]
    if others:
        title += ", " + ", ".join(others)
    top = max(args.budgets)
    mode = (
        "one run per seed and budget"
        if args.separate_budgets
        else f"one run per seed at {top:,} calls, read at each budget mark"
    )
    seeds = {name: sorted({j.seed for j in jobs if j.setup == name}) for name in args.dataset}
    header = (
        f"`.venv/bin/python {_command(argv)}`: {world} world, seeds {seeds}, {mode}; default train settings "
        f"with `epochs: {args.epochs}` and `budget.max_calls`; {elapsed:.0f} s on the shared 2 cores "
        f"with {args.jobs} process(es)."
    )
    meta = {
        "command": _command(argv),
        "commit": code_state(ROOT),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "world": world,
        "sim": sim,
        "sim_fingerprint": sim_fingerprint(sim_world(world, 0, sim)),
        "row": rows[0],
        "budgets": sorted(args.budgets),
        "separate_budgets": args.separate_budgets,
        "epochs": args.epochs,
        "max_minutes": args.max_minutes,
        "jobs": args.jobs,
        "elapsed_s": elapsed,
    }
    results = args.results or RESULTS / f"simlab-efficiency-{'-'.join(args.dataset)}-{world}.json"
    if args.results is not None or not args.no_write:
        write_results(results, meta, records)
    text = section(title, header, records, args.dataset, args.budgets)
    if not args.no_write:
        write_section(title, text)
    return text


def _command(argv: list[str]) -> str:
    return shlex.join(["benchmarks/train.py", *argv])


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    out.add_argument(
        "--dataset",
        nargs="+",
        choices=[*DATASETS, *SETUPS],
        default=["synth"],
        help="synth or videomme (the ablation rows), or one or more efficiency setups.",
    )
    out.add_argument("--seeds", type=int, nargs="+", help="World seeds (default: 1 2 3; per setup).")
    out.add_argument("--rows", nargs="+", choices=[*ROWS, "all"], help="Default: all (setups: full loop).")
    out.add_argument("--world", choices=WORLDS, help="Default: decisive (setups: realistic).")
    out.add_argument(
        "--videomme", type=questions_path, default=VIDEOMME, help="The Video-MME questions file."
    )
    out.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS), help="Call budgets (setups).")
    out.add_argument(
        "--separate-budgets", action="store_true", help="One run per budget instead of reading the largest."
    )
    out.add_argument("--jobs", type=int, default=1, help="Runs in parallel, one process each (setups).")
    out.add_argument("--max-minutes", type=float, default=60.0, help="Wall time of one run.")
    out.add_argument("--epochs", type=int, default=EPOCHS, help="train.epochs of the setups' runs.")
    out.add_argument("--results", type=Path, help="Per-seed records (JSON).")
    out.add_argument(
        "--reread",
        type=Path,
        help="Print a stored efficiency measurement (results JSON), read again at or before each mark.",
    )
    out.add_argument("--workdir", type=Path, help="An empty folder to keep the runs in.")
    out.add_argument("--no-write", action="store_true", help="Print only (docs, default results).")
    out.add_argument(
        "--per-draw-seeds",
        action="store_true",
        help="Setups: agent.sampling.seed per_draw (both arms of a paired draw share a seed).",
    )
    out.add_argument(
        "--seed-coupling",
        type=float,
        help="The world's seed_coupling rho (default: the sim's); the same as --sim world.seed_coupling=RHO.",
    )
    out.add_argument(
        "--sim",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="A simulator setting over the world's, e.g. world.seed_coupling=0.2 or "
        "evolve.proposer_compliance=0.5 (YAML value; repeatable; unknown keys refused).",
    )
    out.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="A train setting of the setups' runs, e.g. gate.merge_open=false (YAML value; repeatable).",
    )
    return out


def reread_results(path: Path) -> str:
    """A stored efficiency measurement, read again at or before each mark (no run); the section's text."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    records = reread(doc["runs"])
    setups = sorted({r["setup"] for r in records})
    title = f"SimLab: {path.name} read at or before each mark"
    header = (
        f"`.venv/bin/python {doc['command']}` measured at `{doc['commit'][:7]}`; re-read from "
        f"`{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}` by "
        f"`benchmarks/train.py --reread`: each mark at the last checkpoint at or before it."
    )
    return section(title, header, records, setups, doc["budgets"])


def main(argv: list[str] | None = None) -> None:
    given = list(argv if argv is not None else sys.argv[1:])
    args = parser().parse_args(given)
    if args.reread is not None:
        sys.stdout.write(reread_results(args.reread))
        return
    setups = [d for d in args.dataset if d in SETUPS]
    if (setups and len(setups) != len(args.dataset)) or (not setups and len(args.dataset) != 1):
        sys.exit("give one ablation dataset (synth, videomme) or one or more efficiency setups, not both")
    uses_videomme = args.dataset == ["videomme"] or any(SETUPS[d].source == "videomme" for d in setups)
    if uses_videomme and not args.videomme.is_file():
        sys.exit(f"no Video-MME questions at {args.videomme}: nothing to measure (see --videomme)")
    if args.set and not setups:  # the ablation rows are each a fixed set of train settings
        sys.exit("--set applies to the efficiency setups; each ablation row sets its own train settings")
    sys.stdout.write(efficiency(args, given) if setups else ablations(args, given))


if __name__ == "__main__":
    main()
