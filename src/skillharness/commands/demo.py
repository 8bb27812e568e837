"""``skillharness demo``: the whole pipeline so far, on a synthetic benchmark and the simulator.

synthesize → split → simulator (in-process) → bundle init → baseline infer on val and test →
summary. No GPU, no network. Re-running reuses the frozen split and the bundle (and the response
cache), so the second run is quick and its numbers are the same.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.console import Console

from skillharness import __version__
from skillharness.commands.folders import ensure_folder
from skillharness.commands.split import gate_min_val, print_split
from skillharness.commands.summary_table import print_summary
from skillharness.config import Config, load_config
from skillharness.data.loader import load_questions
from skillharness.data.pools import existing_artifacts, load_pools, verify_split, write_split
from skillharness.data.questions import Question
from skillharness.data.split import SplitParams, make_split
from skillharness.data.synth import ensure_synthetic_benchmark
from skillharness.errors import SplitError
from skillharness.infer import load_job, run_inference
from skillharness.infer.progress import RichProgress
from skillharness.sim import SimConfig, SimServer
from skillharness.skills import Bundle, initial_bundle

_BENCH_CACHE = Path.home() / ".cache" / "skillharness" / "synth"


def demo_sizes(videos: int) -> tuple[int, int, int]:
    """Train/val/test video counts for a demo of ``videos`` videos (a third to train, ~28 % to val)."""
    train, val = round(videos / 3), round(videos * 0.28)
    return train, val, videos - train - val


def _split(
    console: Console, questions: list[Question], questions_path: Path, out: Path, seed: int, videos: int
) -> Path:
    if existing_artifacts(out):
        problems = verify_split(out, questions_path)
        if problems:
            raise SplitError(
                f"the demo's frozen split in {out} does not verify: {problems}; delete {out} to start over"
            )
        console.print(f"reusing the frozen split in {out} (verified)")
        return out / "pools.json"
    params = SplitParams(
        sizes=demo_sizes(videos),
        unit="video",
        min_val_per_class=3,
        seed=seed,
        micro_min_val=gate_min_val(0.05, 0.5),
    )
    result = make_split(questions, params)
    written = write_split(result, questions, questions_path, out, force=False, version=__version__)
    print_split(console, result, questions)
    return written.pools_path


def _bundle(console: Console, folder: Path) -> Path:
    if not (folder / "system.md").is_file():
        initial_bundle().save(folder)
        console.print(f"wrote the initial bundle to {folder}")
    else:
        console.print(f"reusing the bundle in {folder} (hash {Bundle.load(folder).bundle_hash[:12]})")
    return folder


def _config(out: Path, bench: Path, pools: Path, bundle: Path, sim: SimServer) -> Config:
    return load_config(
        None,
        {
            "data.questions": bench / "questions.json",
            "data.pools": pools,
            "data.videos_dir": bench / "videos",
            "data.subtitles_dir": bench / "subtitles",
            "agent.bundle": bundle,
            "agent.concurrency": 8,
            "llm.model": sim.model_name,
            "llm.endpoints": [{"base_url": sim.base_url}],
            "store.url": f"sqlite:///{out / 'runs.sqlite'}",
            "cache.url": f"sqlite:///{out / 'cache.sqlite'}",
            "agent.frames.cache_dir": out / "frame-cache",
        },
    )


def demo(
    out: Path = typer.Option(Path("demo-output"), "--out", help="Where the demo writes everything."),
    seed: int = typer.Option(0, "--seed", help="Seed of the benchmark, the split and the simulator."),
    videos: int = typer.Option(36, "--videos", min=6, help="Synthetic videos (3 questions each)."),
    bench_cache: Path = typer.Option(
        _BENCH_CACHE,
        "--bench-cache",
        help="Where the benchmark is cached.",
    ),
) -> None:
    """Run the pipeline end to end on a synthetic benchmark against the built-in simulator."""
    console = Console()
    out = ensure_folder(out.resolve(), "--out")
    ensure_folder(bench_cache, "--bench-cache")
    console.rule("1. synthetic benchmark")
    bench = ensure_synthetic_benchmark(bench_cache, seed, videos)
    questions = load_questions(bench / "questions.json")
    console.print(f"benchmark: {bench} ({len(questions)} questions)")
    console.rule("2. frozen split")
    pools = _split(console, questions, bench / "questions.json", out / "split", seed, videos)
    console.rule("3. initial bundle")
    bundle = _bundle(console, out / "bundle")
    console.rule("4. baseline inference (the simulator stands in for a real model)")
    with SimServer(SimConfig(seed=seed), questions=bench / "questions.json") as sim:
        config = _config(out, bench, pools, bundle, sim)
        frozen = load_pools(pools)
        for pool in ("val", "test"):
            job = load_job(config, pool=pool, run_id=None, resume=False)
            with RichProgress(console, label=f"baseline {pool}") as progress:
                result = asyncio.run(run_inference(job, progress))
            label = f"baseline on {pool} ({result.run_id})"
            print_summary(console, result.summary, result.status_counts, label, job.confidence)
            truth = sim.oracle.expected_accuracy(job.bundle, frozen.questions[pool])
            console.print(
                f"simulator ground truth for this bundle on {pool}: expected accuracy {100 * truth:.1f}%"
            )
    console.rule("done")
    console.print(
        f"everything is in {out}: split/ (pools.json, split_manifest.json), bundle/, runs.sqlite "
        f"(inspect with `skillharness runs list --store sqlite:///{out / 'runs.sqlite'}`), cache.sqlite"
    )


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
