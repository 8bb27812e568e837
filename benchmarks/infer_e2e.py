"""Benchmark: the user's path, a ``skillharness infer`` process from start to exit.

Run: ``.venv/bin/python benchmarks/infer_e2e.py [--latencies 0.2 1] [--variants text vision]
[--repeats 3] [--questions-count 300] [--concurrency 24] [--code-root DIR]``.

``benchmarks/infer.py`` measures ``run_inference`` inside a prepared process; this measures what a
user waits for: a fresh ``python -m skillharness.cli infer --config ... --pool all`` process
(imports, config, store, run, summary, exit) against the simulator in another process with a
fixed time to first token L. Each run has a fresh store, response cache and frame cache. Repeats
alternate the variants, and the report gives medians.

- ``text``: ``agent.vision: false, agent.subtitles: false``;
- ``vision``: 8 uniform frames per question at 448 px (the defaults), subtitles on.

Definitions (the simulator records the epoch time of the first call's start, the last call's
finish, and the integral of its calls in flight): *calls* = calls the simulator completed;
*ideal* = calls x L / C; *share* = ideal / (exit - spawn); *after start-up* = ideal / (last
finish - first start); *start-up* = first start - spawn; *tail* = exit - last finish; *CPU per
call* = user + system CPU of the process and its waited-for children (decoder workers) / calls;
*in flight* = mean calls in flight at the simulator between first start and last finish.
``--code-root`` runs another checkout's ``src`` (e.g. the code before a change) with this venv.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from infer import BENCH_CACHE, Simulator, _questions_file, machine
from skillharness.data.synth import ensure_synthetic_benchmark
from skillharness.skills import initial_bundle

_VARIANTS: dict[str, dict[str, object]] = {
    "text": {"vision": False, "subtitles": False},
    "vision": {"vision": True, "subtitles": True, "initial_frames": 8, "frames": {"longest_side": 448}},
}


@dataclass(frozen=True)
class Run:
    variant: str
    latency_s: float
    calls: int
    wall_s: float
    startup_s: float
    tail_s: float
    cpu_s: float
    in_flight: float
    concurrency: int

    @property
    def ideal_s(self) -> float:
        return self.calls * self.latency_s / self.concurrency

    @property
    def share(self) -> float:
        return self.ideal_s / self.wall_s

    @property
    def share_after_startup(self) -> float:
        return self.ideal_s / max(1e-9, self.wall_s - self.startup_s - self.tail_s)


def _config(work: Path, bench: Path, questions: Path, base_url: str, variant: str, concurrency: int) -> Path:
    agent = {**_VARIANTS[variant], "bundle": str(work.parent / "bundle"), "concurrency": concurrency}
    agent["frames"] = {**dict(agent.get("frames", {})), "cache_dir": str(work / "frame-cache")}  # type: ignore[call-overload]
    doc = {
        "data": {
            "questions": str(questions),
            "videos_dir": str(bench / "videos"),
            "subtitles_dir": str(bench / "subtitles"),
        },
        "agent": agent,
        "llm": {"model": "sim-vl", "endpoints": [{"base_url": base_url, "max_in_flight": concurrency}]},
        "store": {"url": f"sqlite:///{work / 'runs.sqlite'}"},
        "cache": {"url": f"sqlite:///{work / 'cache.sqlite'}"},
    }
    path = work / "experiment.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def one_run(sim: Simulator, config: Path, variant: str, latency: float, concurrency: int, env: dict) -> Run:
    """Spawn ``skillharness infer`` and measure it from spawn to exit."""
    sim.reset()
    argv = [sys.executable, "-m", "skillharness.cli", "infer", "--config", str(config), "--pool", "all"]
    log = config.with_name("infer.log").open("wb")
    spawned = time.time()
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    exited = time.time()
    process.returncode = os.waitstatus_to_exitcode(status)
    log.close()
    if process.returncode != 0:
        raise RuntimeError(f"infer exited {process.returncode}: {config.with_name('infer.log').read_text()}")
    stats = httpx.get(sim.base_url.removesuffix("/v1") + "/sim/stats", timeout=10).json()
    first, last = stats["first_start_epoch_s"], stats["last_finish_epoch_s"]
    in_flight = stats["call_seconds_in_flight"] / max(1e-9, last - first)
    return Run(
        variant, latency, stats["completed"], exited - spawned, first - spawned, exited - last,
        usage.ru_utime + usage.ru_stime, in_flight, concurrency,
    )  # fmt: skip


def measure(args: argparse.Namespace, tmp: Path) -> list[Run]:
    bench = ensure_synthetic_benchmark(BENCH_CACHE, args.seed, -(-args.questions_count // 3))
    questions = _questions_file(bench, args.questions_count, tmp)
    initial_bundle().save(tmp / "bundle")
    env = dict(os.environ)
    if args.code_root:
        env["PYTHONPATH"] = str(Path(args.code_root).resolve() / "src")
    runs: list[Run] = []
    for latency in args.latencies:
        sim = Simulator(questions, latency, tmp)
        try:
            for repeat in range(args.repeats):
                order = args.variants if repeat % 2 == 0 else list(reversed(args.variants))
                for variant in order:
                    work = tmp / f"{variant}-L{latency}-r{repeat}"
                    work.mkdir()
                    config = _config(work, bench, questions, sim.base_url, variant, args.concurrency)
                    run = one_run(sim, config, variant, latency, args.concurrency, env)
                    print(_row(run), flush=True)
                    runs.append(run)
        finally:
            sim.close()
    return runs


def _row(r: Run) -> str:
    return (
        f"| {r.variant} | {r.latency_s:g} s | {100 * r.share:.1f} % | {100 * r.share_after_startup:.1f} % | "
        f"{r.startup_s:.2f} s | {r.tail_s:.2f} s | {1000 * r.cpu_s / max(1, r.calls):.1f} ms | "
        f"{r.in_flight:.1f} | {r.calls} | {r.wall_s:.1f} s |"
    )


def median_rows(runs: list[Run]) -> list[str]:
    """One row per (variant, L): the median of each column over the repeats."""
    rows = []
    for key in dict.fromkeys((r.variant, r.latency_s) for r in runs):
        group = [r for r in runs if (r.variant, r.latency_s) == key]

        def med(value: object, group: list[Run] = group) -> float:
            return statistics.median(value(r) for r in group)  # type: ignore[operator]

        rows.append(
            f"| {key[0]} | {key[1]:g} s | {100 * med(lambda r: r.share):.1f} % | "
            f"{100 * med(lambda r: r.share_after_startup):.1f} % | {med(lambda r: r.startup_s):.2f} s | "
            f"{med(lambda r: r.tail_s):.2f} s | {1000 * med(lambda r: r.cpu_s / max(1, r.calls)):.1f} ms | "
            f"{med(lambda r: r.in_flight):.1f} | {med(lambda r: r.calls):.0f} | "
            f"{med(lambda r: r.wall_s):.1f} s |"
        )
    return rows


HEADER = (
    "| variant | L | share of C/L, end to end | after start-up | start-up | tail | CPU per call "
    "| calls in flight | calls | wall |\n|---|---|---|---|---|---|---|---|---|---|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies", type=float, nargs="+", default=[0.2, 1.0])
    parser.add_argument("--variants", nargs="+", choices=list(_VARIANTS), default=list(_VARIANTS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--questions-count", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--code-root", type=Path, default=None, help="Run this checkout's src instead.")
    args = parser.parse_args()
    print(machine(), flush=True)
    print(HEADER, flush=True)
    with tempfile.TemporaryDirectory(prefix="skillharness-bench-e2e-") as tmp:
        runs = measure(args, Path(tmp))
    print(f"\nmedians of {args.repeats} ({args.questions_count} questions, C = {args.concurrency}):")
    print(HEADER)
    print("\n".join(median_rows(runs)))


if __name__ == "__main__":
    main()
