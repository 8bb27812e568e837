"""``skillharness demo``: the whole mission on a synthetic benchmark and the built-in simulator.

synthesize → split → bundle → simulator (in-process) → baseline and training → holdout eval →
report. No GPU, no network. Re-running reuses the benchmark, the split, the bundle and the
response cache and replaces the previous demo run, so its numbers are the same and it is quick.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import typer
from rich.console import Console

from skillharness import __version__
from skillharness.agent import BundleSlot, ProtocolName, check_bundle_slot
from skillharness.commands.demo_report import print_demo_truth
from skillharness.commands.demo_setup import (
    DEMO_GATE,
    DEMO_TEMPERATURE,
    DEMO_VIDEOS,
    demo_sizes,
    size_explanation,
    write_experiment,
)
from skillharness.commands.eval import holdout_for_run, transfer_for_run
from skillharness.commands.eval_table import print_holdout
from skillharness.commands.folders import ensure_folder
from skillharness.commands.split import micro_verdicts, print_split
from skillharness.commands.train import print_outcome
from skillharness.config import Config, load_config
from skillharness.data import DEFAULT_BENCHMARK, read_questions, synthetic_questions
from skillharness.data.pools import existing_artifacts, load_pools, verify_split, write_split
from skillharness.data.questions import Question
from skillharness.data.split import SplitParams, make_split
from skillharness.data.synth import ensure_synthetic_benchmark
from skillharness.errors import ConfigError, SplitError, StoreError, StoreNotInitialised
from skillharness.eval import agent_path, build_report
from skillharness.infer.progress import RichProgress
from skillharness.sim import SimServer, decisive_world
from skillharness.skills import Bundle, initial_bundle
from skillharness.store import RunReader
from skillharness.train import TrainProgress, TrainRequest, run_folder, run_training

_MIN_VAL_PER_CLASS = 6
_RUN_ID = "demo"
_BENCH_CACHE = Path.home() / ".cache" / "skillharness" / "synth"


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
        min_val_per_class=_MIN_VAL_PER_CLASS,
        seed=seed,
    )
    result = make_split(questions, params)
    written = write_split(result, questions, questions_path, out, force=False, version=__version__)
    print_split(console, result, questions, micro_verdicts(result, questions, DEMO_GATE, DEMO_TEMPERATURE))
    return written.pools_path


def _bundle(console: Console, folder: Path, questions: list[Question]) -> Path:
    if not (folder / "system.md").is_file():
        initial_bundle(q.task_type for q in questions).save(folder)  # a skill per task type the data holds
        console.print(f"wrote the initial bundle to {folder}")
    else:
        console.print(f"reusing the bundle in {folder} (hash {Bundle.load(folder).bundle_hash[:12]})")
    return folder


def _foreign_runs(store: Path) -> list[str]:
    """Runs in ``store`` that are neither the demo's run nor made on its behalf (its baseline,
    rollouts, holdout): a user's evidence, which the demo must never delete."""
    try:
        with RunReader(f"sqlite:///{store}") as reader:
            infos = reader.runs()
    except StoreNotInitialised:
        return []  # created, never written: nothing to lose
    except StoreError as exc:
        raise ConfigError(
            f"--out {store.parent}: {store} is not the demo's run store ({exc}); choose another --out",
            file=str(store),
        ) from exc
    return [i.run_id for i in infos if _RUN_ID not in (i.run_id, i.provenance.parent_run_id)]


def _check_own_store(out: Path) -> None:
    """Before any work: a store in ``out`` that holds other runs stops the demo (it replaces its store)."""
    store = out / "runs.sqlite"
    if not store.exists():
        return
    foreign = _foreign_runs(store)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise ConfigError(
            f"--out {out}: {store} holds runs the demo did not make ({shown}); the demo replaces its "
            "run store on every run, so choose another --out (or move that store away)",
            file=str(store),
        )


def _fresh_run(out: Path, experiment: Path) -> None:
    """The demo's previous run (its own store, checked by ``_check_own_store``, and its run folder) is
    replaced; the cache is kept."""
    store = out / "runs.sqlite"
    previous = run_folder(experiment, _RUN_ID)
    if store.exists() or previous.exists():
        for leftover in (store, store.with_name(store.name + "-wal"), store.with_name(store.name + "-shm")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(previous, ignore_errors=True)


def _transfer(console: Console, settings: Config) -> None:
    """The same two bundles under lmms-eval's videomme request, the bundle in its post_prompt (the
    report's Transfer section). videomme_w_subtitle has no instruction slot: asked without subtitles."""
    console.rule("5b. transfer: the same bundles under lmms-eval's request")
    try:
        check_bundle_slot(
            ProtocolName.LMMS_EVAL, BundleSlot.AUTO, subtitles=False, benchmark=settings.data.benchmark
        )
    except ConfigError as exc:  # a layout whose lmms-eval task has no slot mapped: said, not fatal
        console.print(f"transfer not run: {exc}")
        return
    agent = settings.agent.model_copy(update={"subtitles": False})
    plain = settings.model_copy(update={"agent": agent})
    with RichProgress(console, label="transfer") as progress:
        reports = transfer_for_run(
            plain, _RUN_ID, (ProtocolName.LMMS_EVAL,), purpose="demo", progress=progress
        )
    for report in reports:
        print_holdout(console, report)


def _write_report(console: Console, settings: Config, out: Path, folder: Path, oracle_url: str) -> None:
    files = build_report(
        settings.store.url,
        _RUN_ID,
        out / "report.html",
        gate=settings.train.gate,
        confidence=settings.eval.confidence,
        workspace=folder / "workspace",
        oracle_url=oracle_url,
        agent_path=agent_path(settings.agent),
    )
    console.print(f"report: [bold]{files.html}[/] (open it in a browser; data for scripts: {files.json})")


def _benchmark(
    console: Console, cache: Path, seed: int, videos: int, layout: str
) -> tuple[Path, Path, str, list[Question]]:
    """The cached synthetic benchmark (made on first use): folder, questions file, layout, questions."""
    bench = ensure_synthetic_benchmark(cache, seed, videos, layout)
    questions_path, layout = synthetic_questions(bench)
    questions = list(read_questions(questions_path, layout))
    console.print(f"benchmark: {questions_path} ({len(questions)} questions, layout {layout})")
    return bench, questions_path, layout, questions


def demo(
    out: Path = typer.Option(Path("demo-output"), "--out", help="Where the demo writes everything."),
    seed: int = typer.Option(0, "--seed", help="Seed of the benchmark, the split and the simulator."),
    videos: int = typer.Option(DEMO_VIDEOS, "--videos", min=12, help="Synthetic videos (3 questions each)."),
    bench_cache: Path = typer.Option(_BENCH_CACHE, "--bench-cache", help="Where the benchmark is cached."),
    latency: float = typer.Option(0.01, "--latency", min=0.0, help="Simulated seconds to first token."),
    layout: str = typer.Option(
        DEFAULT_BENCHMARK, "--layout", help="The benchmark's file layout: a built-in adapter (docs/data.md)."
    ),
) -> None:
    """Train a bundle end to end on a synthetic benchmark against the built-in simulator."""
    console = Console()
    out = ensure_folder(out.resolve(), "--out")
    _check_own_store(out)  # and the cache resolved: the experiment YAML names it, read from elsewhere
    bench_cache = ensure_folder(bench_cache.resolve(), "--bench-cache")
    console.rule("1. synthetic benchmark")
    bench, questions_path, layout, questions = _benchmark(console, bench_cache, seed, videos, layout)
    console.rule("2. frozen split")
    pools = _split(console, questions, questions_path, out / "split", seed, videos)
    frozen = load_pools(pools)
    classes = {q.task_type for q in questions}
    console.print(size_explanation(videos, len(frozen.questions["val"]), len(classes)))
    console.rule("3. initial bundle")
    bundle = _bundle(console, out / "bundle", questions)
    console.rule("4. baseline and training against the simulator")
    console.print("The simulator stands in for a real model: its ground truth is known.")
    experiment = out / "experiment"
    _fresh_run(out, experiment)
    world = decisive_world(seed, latency_s=latency)
    with SimServer(world, questions=questions_path, benchmark=layout) as sim:
        config_path = write_experiment(
            experiment,
            bench=bench,
            questions=questions_path,
            benchmark=layout,
            pools=pools,
            bundle=bundle,
            sim=sim,
            store=out / "runs.sqlite",
            cache=out / "cache.sqlite",
        )
        settings = load_config(config_path)
        request = TrainRequest(run_id=_RUN_ID, folder=run_folder(experiment, _RUN_ID))
        with TrainProgress(console, run_id=_RUN_ID, epochs=settings.train.epochs) as progress:
            outcome = asyncio.run(run_training(settings, request, observer=progress))
        console.print()
        print_outcome(console, outcome)
        console.rule("5. holdout: final against baseline on the sealed test pool")
        with RichProgress(console, label="holdout") as progress:
            report = holdout_for_run(settings, _RUN_ID, purpose="demo", progress=progress)
        print_holdout(console, report)
        _transfer(console, settings)
        console.rule("6. what training achieved, by the simulator's scored truth")
        print_demo_truth(console, sim, outcome, frozen.questions, settings)
        console.rule("7. the report")
        _write_report(console, settings, out, request.folder, sim.base_url)
    console.rule("done")
    console.print(
        f"everything is in {out}: experiment/ (experiment.yaml, runs/), split/, bundle/, runs.sqlite"
    )


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
