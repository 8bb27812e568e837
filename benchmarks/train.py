"""SimLab: what training achieves against the simulator's ground truth, at what cost, and how honestly.

Run: ``.venv/bin/python benchmarks/train.py [--dataset synth|videomme] [--seeds 1 2 3] [--rows all]
[--world decisive|realistic] [--no-write]``.

Each row trains the initial bundle in-process (``run_training``) against one simulator world per
seed, with a text-only agent (``vision: false``), and reads the truth from the world's oracle.
Datasets: the synthetic benchmark, or the real 2,700 Video-MME questions (when
``../shared/data/videomme/videomme_questions.json`` exists next to the repo). Their videos are
not here, and training refuses to start on a missing video (``check_media``), and a text-only
agent still reads each video's duration; so every Video-MME video id is linked to one real
synthetic video file. The simulator answers from the question text and the bundle, never the
video, so the placeholder changes no answer. Measured:

- gap closure = (final - initial) / (oracle-best - initial), the oracle's expected accuracy of the
  trained classes' val and test questions; oracle-best is ``Oracle.best_bundle(initial)`` (every
  insight appended to its class's skill);
- calls by role (``TrainOutcome.usage``) and the curve of test gap closure against the
  simulator's request count, sampled at every checkpoint (after each step and epoch end), from
  which the calls to reach 50/70/90 % of the gap are read;
- honesty: accepted edits whose true effect (oracle of version_after minus version_before) on
  val, and on test, is <= 0; the sum of the gates' alpha against those false accepts; whether the
  true test gain lay in the run's reported val-gain interval;
- ablations on the same worlds: the GEPA rule (strictly better on 3), the fixed-n 2-SE rule, no
  rank, no momentum, no diagnosis.

The section goes to ``docs/benchmarks.md`` under ``## SimLab``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shlex
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skillharness.config import load_config
from skillharness.data.loader import load_questions
from skillharness.data.pools import load_pools, write_split
from skillharness.data.split import SplitParams, make_split
from skillharness.data.synth import MICRO_TASK_TYPES, ensure_synthetic_benchmark
from skillharness.sim import SimConfig, SimServer, decisive_world
from skillharness.sim.oracle import BundleText, Oracle
from skillharness.skills import Bundle, Workspace, initial_bundle
from skillharness.store import GateDecisionRow, RunMetric, RunReader
from skillharness.train.checkpoint import Checkpoint
from skillharness.train.context import TrainContext
from skillharness.train.training import TrainRequest, run_folder, run_training
from skillharness.util.atomic import atomic_write_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
BENCH_CACHE = Path.home() / ".cache" / "skillharness-bench" / "synth"
VIDEOMME = Path(__file__).resolve().parents[2] / "shared" / "data" / "videomme" / "videomme_questions.json"
SYNTH = {"seed": 3, "videos": 36}
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
ROWS: dict[str, dict[str, Any]] = {
    "full loop (e-process gate)": {},
    "GEPA rule: strictly better on 3": {"gate": {"rule": "minibatch"}},
    "fixed n = 48, mean > 2 SE": {"gate": {"rule": "fixed_n"}},
    "no rank": {"evolve": {"rank": False}},
    "no momentum": {"momentum": {"enabled": False}},
    "no diagnosis": {"diagnosis": {"enabled": False}},
}
ROLES = ("agent", "judge", "evolve", "rank", "momentum", "consolidate")


@dataclass(frozen=True)
class Data:
    """The benchmark files, the trained classes and the question ids the truth is measured on."""

    source: Source
    pools: Path
    bundle: Path
    classes: tuple[str, ...]
    val: tuple[str, ...]
    test: tuple[str, ...]
    test_all: tuple[str, ...]  # every class: what the run's val-gain interval speaks of


@dataclass
class Truth:
    """The oracle's view of one world: initial and best accuracy on val and test."""

    oracle: Oracle
    data: Data
    initial: dict[str, float] = field(default_factory=dict)
    best: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        start = Bundle.load(self.data.bundle)
        best = self.oracle.best_bundle(BundleText.from_bundle(start))
        for pool in ("val", "test"):
            self.initial[pool] = self.accuracy(start, pool)
            self.best[pool] = self.accuracy(best, pool)

    def accuracy(self, bundle: Bundle | BundleText, pool: str) -> float:
        ids = self.data.val if pool == "val" else self.data.test
        return self.oracle.expected_accuracy(bundle, ids)

    def closure(self, bundle: Bundle, pool: str) -> float:
        gap = self.best[pool] - self.initial[pool]
        return (self.accuracy(bundle, pool) - self.initial[pool]) / gap if gap > 0 else 0.0


class CurveObserver:
    """Test gap closure of the incumbent against the simulator's request count, at each checkpoint."""

    def __init__(self, sim: SimServer, truth: Truth, workspace: Path) -> None:
        self.sim = sim
        self.truth = truth
        self.workspace = workspace
        self.points: list[tuple[int, float]] = []
        self._closure: dict[str, float] = {}

    def on_start(self, ctx: TrainContext) -> None:
        return None

    def on_step(self, ckpt: Checkpoint, steps_in_epoch: int) -> None:
        self._record(ckpt)

    def on_checkpoint(self, ckpt: Checkpoint) -> None:
        self._record(ckpt)

    def _record(self, ckpt: Checkpoint) -> None:
        if ckpt.version not in self._closure:
            bundle = Workspace.open(self.workspace, verify=False).load(ckpt.version)
            self._closure[ckpt.version] = self.truth.closure(bundle, "test")
        self.points.append((int(self.sim.stats()["requests"]), self._closure[ckpt.version]))

    def calls_to(self, share: float) -> int | None:
        return next((calls for calls, closure in self.points if closure >= share), None)


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
    gain_in_interval: bool
    wall_s: float

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


@dataclass(frozen=True)
class Source:
    """Where a dataset's questions and media come from, and how it is split."""

    questions: Path
    videos_dir: Path
    subtitles_dir: Path | None
    split: tuple[int, int, int]
    classes: int


def synth_source(_: Path) -> Source:
    root = ensure_synthetic_benchmark(BENCH_CACHE, **SYNTH)
    return Source(root / "questions.json", root / "videos", root / "subtitles", (24, 48, 36), 3)


def videomme_source(folder: Path) -> Source:
    """The real questions; every video is the same placeholder file (see the module docstring)."""
    questions = load_questions(VIDEOMME)
    placeholder = next((ensure_synthetic_benchmark(BENCH_CACHE, **SYNTH) / "videos").glob("*.mp4"))
    videos = folder / "videomme-videos"
    videos.mkdir(parents=True, exist_ok=True)
    for video_id in {q.videoID for q in questions}:
        link = videos / f"{video_id}.mp4"
        if not link.exists():
            link.symlink_to(placeholder)
    return Source(VIDEOMME, videos, None, (240, 480, 600), 4)


def prepare_data(folder: Path, source: Source) -> Data:
    """The questions split by question, and the non-micro classes with the most val questions."""
    questions = load_questions(source.questions)
    split = make_split(questions, SplitParams(sizes=source.split, unit="question", seed=SYNTH["seed"]))
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
        source, written.pools_path, folder / "bundle", classes, ids("val"), ids("test"), tuple(pools["test"])
    )


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def write_config(folder: Path, data: Data, sim: SimServer, ablation: dict[str, Any]) -> Path:
    train = _merge(TRAIN, ablation) | {"task_types": list(data.classes)}
    doc = {
        "data": {
            "questions": str(data.source.questions),
            "pools": str(data.pools),
            "videos_dir": str(data.source.videos_dir),
            "subtitles_dir": None if data.source.subtitles_dir is None else str(data.source.subtitles_dir),
        },
        "llm": {"model": sim.model_name, "endpoints": [{"base_url": sim.base_url}]},
        "cache": {"url": f"sqlite:///{folder / 'cache.sqlite'}"},
        "store": {"url": f"sqlite:///{folder / 'runs.sqlite'}"},
        "agent": {
            "bundle": str(data.bundle),
            "concurrency": 8,
            "vision": False,
            "sampling": {"temperature": 0.7},
            "frames": {"cache_dir": str(folder / "frames")},
        },
        "eval": {"run_holdout_eval": False},
        "train": train,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _honesty(store_url: str, run_id: str, truth: Truth, workspace: Workspace) -> tuple[int, int, int, float]:
    """Accepts, accepts with true val effect <= 0, the same on test, and the sum of alpha spent."""
    with RunReader(store_url) as reader:
        accepted = [r for r in reader.ledger(GateDecisionRow, train_run_id=run_id) if r.reason == "accept"]
        metrics = {m.name: m.value for m in reader.ledger(RunMetric, run_id=run_id)}
    harmful = Counter[str]()
    for row in accepted:
        before, after = workspace.load(row.version_before), workspace.load(row.version_after or "")
        for pool in ("val", "test"):
            if truth.accuracy(after, pool) - truth.accuracy(before, pool) <= 0:
                harmful[pool] += 1
    return len(accepted), harmful["val"], harmful["test"], float(metrics["alpha_spent"]["sum"])


async def run_one(data: Data, world: SimConfig, ablation: dict[str, Any], folder: Path) -> RunResult:
    """Train once on ``world`` with ``ablation`` merged into the train settings; measure the truth."""
    start = time.perf_counter()
    with SimServer(world, questions=data.source.questions) as sim:
        truth = Truth(sim.oracle, data)
        config_path = write_config(folder, data, sim, ablation)
        config = load_config(config_path)
        request = TrainRequest(run_id="simlab", folder=run_folder(folder, "simlab"))
        curve = CurveObserver(sim, truth, request.folder / "workspace")
        outcome = await run_training(config, request, observer=curve)
    ws = Workspace.open(outcome.workspace)
    final = ws.load(outcome.checkpoint.version)
    accepts, harm_val, harm_test, alpha_sum = _honesty(config.store.url, "simlab", truth, ws)
    every = data.test_all
    true_gain = truth.oracle.expected_accuracy(final, every) - truth.oracle.expected_accuracy(
        ws.load("v0000"), every
    )
    return RunResult(
        closure_val=truth.closure(final, "val"),
        closure_test=truth.closure(final, "test"),
        calls={role: int(u.get("calls", 0)) for role, u in outcome.usage.items()},
        calls_to={m: curve.calls_to(m) for m in MILESTONES},
        accepts=accepts,
        harmful_val=harm_val,
        harmful_test=harm_test,
        alpha_sum=alpha_sum,
        gain_in_interval=outcome.gain["low"] <= true_gain <= outcome.gain["high"],
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
        "| true test gain in val-gain interval |",
        "|---|---|---|---|---|---|",
    ]
    for name, rs in results.items():
        accepts = sum(r.accepts for r in rs)
        hv, ht = sum(r.harmful_val for r in rs), sum(r.harmful_test for r in rs)
        alpha = sum(r.alpha_sum for r in rs)
        inside = sum(r.gain_in_interval for r in rs)
        lines.append(
            f"| {name} | {accepts} | {_share(hv, accepts)} | {_share(ht, accepts)} | {alpha:.2f} "
            f"| {inside}/{len(rs)} |"
        )
    return "\n".join(lines) + "\n"


async def measure(
    dataset: str, seeds: list[int], rows: list[str], world: str
) -> tuple[Data, dict[str, list[RunResult]]]:
    results: dict[str, list[RunResult]] = {name: [] for name in rows}
    with tempfile.TemporaryDirectory(prefix="simlab-") as tmp:
        source = (videomme_source if dataset == "videomme" else synth_source)(Path(tmp))
        data = prepare_data(Path(tmp) / "data", source)
        for seed in seeds:
            config = decisive_world(seed) if world == "decisive" else SimConfig(seed=seed)
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


def write_section(title: str, text: str) -> None:
    old = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^### {re.escape(title)}\n.*?(?=^##+ |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    atomic_write_text(DOC, new)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=list(DATASETS), default="synth")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="Simulator world seeds.")
    parser.add_argument("--rows", nargs="+", choices=[*ROWS, "all"], default=["all"])
    parser.add_argument("--world", choices=["decisive", "realistic"], default="decisive")
    parser.add_argument("--no-write", action="store_true", help="Print only; leave docs/benchmarks.md.")
    args = parser.parse_args(argv)
    if args.dataset == "videomme" and not VIDEOMME.is_file():
        sys.exit(f"no Video-MME questions at {VIDEOMME}: nothing to measure")
    rows = list(ROWS) if "all" in args.rows else args.rows
    start = time.perf_counter()
    data, results = asyncio.run(measure(args.dataset, args.seeds, rows, args.world))
    title = f"SimLab: {DATASETS[args.dataset]}, {args.world} world"
    command = shlex.join(["benchmarks/train.py", *(argv if argv is not None else sys.argv[1:])])
    header = (
        f"### {title}\n\n`.venv/bin/python {command}`: seeds {args.seeds}; trained classes "
        f"{', '.join(data.classes)} ({len(data.val)} val / {len(data.test)} test questions of them); "
        f"{time.perf_counter() - start:.0f} s on the shared 2 cores.\n\n"
    )
    text = header + tables(results)
    if not args.no_write:
        write_section(title, text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
