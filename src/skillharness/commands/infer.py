"""``skillharness infer``: run a bundle over a pool (the ``infer_adhoc`` baseline)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import typer
from rich.console import Console

from skillharness.commands.folders import output_file
from skillharness.commands.scores_table import print_scores
from skillharness.config import load_config
from skillharness.data import Pool
from skillharness.errors import ConfigError, StoreError, StoreMissing, StoreNotInitialised, StoreOutdated
from skillharness.infer import (
    SIGTERM_EXIT,
    InferJob,
    InferResult,
    Terminated,
    cancel_on_sigterm,
    is_official_export,
    load_job,
    run_inference,
    score_run,
    write_official_results,
)
from skillharness.infer.progress import RichProgress
from skillharness.store import RunInfo, RunKind, RunReader, RunStatus, RunStore, StoreConfig, run_id_problem
from skillharness.video import default_cache_dir

_SHOWN_RUNS = 10  # the run ids a refused resume names: enough to spot a typo, never a wall of ids


def infer(
    config: Path | None = typer.Option(None, "--config", help="Experiment YAML."),
    pool: str | None = typer.Option("val", "--pool", help="train | val | test, or 'all' for every question."),
    run_id: str | None = typer.Option(None, "--run-id", help="Name the run (default: generated)."),
    resume: bool = typer.Option(
        False, "--resume", help="Continue --run-id: skip final answers, retry infra errors."
    ),
    questions: Path | None = typer.Option(None, "--questions", help="Override data.questions."),
    pools: Path | None = typer.Option(None, "--pools", help="Override data.pools."),
    videos_dir: Path | None = typer.Option(None, "--videos-dir", help="Override data.videos_dir."),
    subtitles_dir: Path | None = typer.Option(None, "--subtitles-dir", help="Override data.subtitles_dir."),
    bundle: Path | None = typer.Option(None, "--bundle", help="Override agent.bundle."),
    model: str | None = typer.Option(None, "--model", help="Override llm.model."),
    concurrency: int | None = typer.Option(None, "--concurrency", help="Override agent.concurrency."),
    samples: int | None = typer.Option(None, "--samples", help="Override agent.samples."),
    vision: bool | None = typer.Option(None, "--vision/--no-vision", help="Override agent.vision."),
    protocol: str | None = typer.Option(
        None, "--protocol", help="Override agent.protocol: skillharness | lmms_eval | vlmevalkit | official."
    ),
    bundle_slot: str | None = typer.Option(
        None,
        "--bundle-slot",
        help="Override agent.protocol_bundle_slot: none | auto | system (where a reference "
        "protocol's request carries the bundle; docs/protocols.md).",
    ),
    export_official: Path | None = typer.Option(
        None, "--export-official", help="Also write the answers in the official Video-MME results format."
    ),
    store: str | None = typer.Option(None, "--store", help="Override store.url."),
    cache: str | None = typer.Option(None, "--cache", help="Override cache.url."),
) -> None:
    """Run the bundle over a pool and print accuracy per task type and duration, with Wilson CIs."""
    chosen = None if pool == "all" or pool is None else Pool.named(pool, what="--pool (or 'all')")
    flags = {
        "data.questions": questions,
        "data.pools": pools,
        "data.videos_dir": videos_dir,
        "data.subtitles_dir": subtitles_dir,
        "agent.bundle": bundle,
        "llm.model": model,
        "agent.concurrency": concurrency,
        "agent.samples": samples,
        "agent.vision": vision,
        "agent.protocol": protocol,
        "agent.protocol_bundle_slot": bundle_slot,
        "store.url": store,
        "cache.url": cache,
    }
    if export_official is not None:  # checked before the run, not found out after it
        output_file(export_official, "--export-official", ours=is_official_export, has_force=False)
    job = _job(config, flags, chosen, run_id, resume)
    console = Console()
    console.print(
        f"run [bold]{job.run_id}[/]: {len(job.questions)} questions × {job.agent.samples} sample(s), "
        f"pool {job.pool or 'all'}, model {job.llm.model}, protocol {job.agent.protocol}" + _slot(job)
    )
    console.print(_where(job))
    result = _execute(console, job)
    _report(console, job, result, export_official)
    _exit_for(job, result)


def _slot(job: InferJob) -> str:
    """Where the bundle goes, when a reference protocol's request carries it."""
    slot = job.agent.protocol_bundle_slot
    if job.agent.protocol == "skillharness" or slot == "none":
        return ""
    return f" (bundle slot {slot})"


def _job(
    config: Path | None, flags: dict[str, object], pool: Pool | None, run_id: str | None, resume: bool
) -> InferJob:
    """The run the flags describe, every input checked before anything is asked."""
    settings = load_config(config, flags)
    if run_id is not None:
        _check_run_id(run_id)
    job = load_job(settings, pool=pool, run_id=run_id, resume=resume)
    if resume:
        _check_resumable(job.store, job.run_id)
    elif run_id is not None:
        _check_new(job.store, job.run_id)
    return job


def _execute(console: Console, job: InferJob) -> InferResult:
    """The run with its progress bar; SIGTERM ends it as interrupted, with exit code 143."""
    with RichProgress(console, label=job.run_id) as progress:
        try:
            return asyncio.run(_run(job, progress))
        except Terminated:
            typer.secho(
                f"terminated (SIGTERM): run {job.run_id} is interrupted; continue it with "
                f"--resume --run-id {job.run_id}",
                err=True,
                fg=typer.colors.YELLOW,
            )
            raise typer.Exit(SIGTERM_EXIT) from None


def _exit_for(job: InferJob, result: InferResult) -> None:
    """Say why a run did not finish cleanly; a failed run exits 1."""
    outcome = result.outcome
    if outcome is None or outcome.status is RunStatus.FINISHED:
        return
    failed = outcome.status is RunStatus.FAILED
    typer.secho(
        outcome.describe(job.run_id), err=True, fg=typer.colors.RED if failed else typer.colors.YELLOW
    )
    if failed:
        raise typer.Exit(1)


async def _run(job: InferJob, progress: RichProgress) -> InferResult:
    """The run, with SIGTERM stopping it like Ctrl-C (status interrupted, last batch flushed)."""
    with cancel_on_sigterm() as received:
        try:
            return await run_inference(job, progress)
        except asyncio.CancelledError:
            if received[0]:
                raise Terminated(job.run_id) from None
            raise


def _where(job: InferJob) -> str:
    """Where the run writes: the store, the response cache and the frame cache (the last one
    defaults to the user's cache folder, shared by every run, so it is named every time)."""
    frames = job.agent.frames
    if not frames.cache_enabled:
        frame_cache = "off"
    elif frames.cache_dir is not None:
        frame_cache = str(frames.cache_dir)
    else:
        frame_cache = f"{default_cache_dir()} (the default; set agent.frames.cache_dir to keep it elsewhere)"
    response_cache = job.cache.url if job.cache.enabled else "off"
    return f"store {job.store.url} · response cache {response_cache} · frame cache {frame_cache}"


def _report(console: Console, job: InferJob, result: InferResult, export_official: Path | None) -> None:
    scores = score_run(
        job.store, result.run_id, job.questions, job.confidence, job.data.benchmark, job.agent.subtitles
    )
    print_scores(console, scores, result.status_counts, f"run {result.run_id}", job.confidence)
    if export_official is not None:
        write_official_results(export_official, scores.answers)
        console.print(f"official results format: {export_official}")
    console.print(f"asked {result.asked}, already final {result.skipped}; store: {job.store.url}")
    console.print(result.cache_scope)
    for role, used in result.usage.items():
        console.print(
            f"{role}: {used['calls']:.0f} calls ({used['cache_hits']:.0f} from cache), "
            f"{used['prompt_tokens']:.0f} prompt + {used['completion_tokens']:.0f} completion tokens"
        )


def _check_run_id(run_id: str) -> None:
    """The store's own rule for run ids, checked before anything starts (one message, no traceback)."""
    if why := run_id_problem(run_id):
        raise ConfigError(f"invalid --run-id {run_id!r}: {why}", field="--run-id")


def _open_reader(store: StoreConfig) -> RunReader | None:
    """A reader of the store; None when it does not exist yet or was never initialised (the run
    creates it). A store of an older schema is upgraded first, as the run's own writer would do a
    moment later: a reader never upgrades, and its refusal would block the resume of a run it holds."""
    try:
        return RunReader(store)
    except (StoreMissing, StoreNotInitialised):  # it holds no run yet; the run creates it
        return None
    except StoreOutdated:
        pass  # any other StoreError (unreadable, a newer schema) says why itself
    RunStore.open(store).close()  # an older schema is upgraded, as the run's writer would
    return RunReader(store)


def _stored_run(store: StoreConfig, run_id: str) -> tuple[RunInfo | None, list[RunInfo]]:
    """The stored run, or None and every run of the store (read only then: a typo's likely targets)."""
    reader = _open_reader(store)
    if reader is None:
        return None, []
    with contextlib.closing(reader):
        try:
            return reader.run(run_id), []
        except StoreError:  # no such run
            return None, reader.runs()


def _resumable_ids(runs: list[RunInfo]) -> str:
    """The runs ``infer --resume`` continues, the latest few: a typo's likely targets, not every gate arm
    of every training run in the store."""
    ids = [
        info.run_id
        for info in runs
        if info.provenance.kind is RunKind.INFER and not info.provenance.parent_run_id
    ]
    if not ids:
        return "it holds no run `infer` started"
    shown = ", ".join(ids[-_SHOWN_RUNS:])
    return f"its infer runs: {shown}" + (
        f" (the latest {_SHOWN_RUNS} of {len(ids)})" if len(ids) > _SHOWN_RUNS else ""
    )


def _check_resumable(store: StoreConfig, run_id: str) -> None:
    """``--resume`` continues a stored infer run: an unknown run id is a typo, never a new run, and a
    training run's part (its baseline, a gate arm, a holdout) is continued by its own command."""
    found, runs = _stored_run(store, run_id)
    if found is None:
        raise ConfigError(
            f"cannot resume run {run_id!r}: the run store holds no such run ({_resumable_ids(runs)}); drop "
            "--resume to start a new run",
            run_id=run_id,
        )
    provenance = found.provenance
    if provenance.parent_run_id is not None or provenance.kind is not RunKind.INFER:
        owner = provenance.parent_run_id or run_id
        part = f", part of run {owner!r}" if provenance.parent_run_id else ""
        raise ConfigError(
            f"cannot resume run {run_id!r} (kind {provenance.kind.value}{part}): `infer --resume` continues "
            f"runs `infer` started; continue this one with `skillharness train --resume {owner}` (or, for a "
            "holdout, `skillharness eval`)",
            run_id=run_id,
        )


def _check_new(store: StoreConfig, run_id: str) -> None:
    """A new run's id is free, checked before the endpoints are probed; the advice fits the run that
    holds it (``--resume`` only for a run `infer` started: it refuses any other)."""
    found, _ = _stored_run(store, run_id)
    if found is None:
        return
    provenance = found.provenance
    if provenance.kind is RunKind.INFER and provenance.parent_run_id is None:
        advice = "continue it with --resume, or choose another --run-id"
    else:
        part = f", part of training run {provenance.parent_run_id!r}" if provenance.parent_run_id else ""
        advice = f"it is no run `infer` started (kind {provenance.kind.value}{part}); choose another --run-id"
    raise ConfigError(
        f"--run-id {run_id!r}: the run store already holds this run ({found.status.value}); {advice}",
        run_id=run_id,
    )


def register(app: typer.Typer) -> None:
    app.command("infer")(infer)
