"""``skillharness eval``: the final bundle against a baseline on the sealed test pool."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.console import Console

from skillharness.agent.protocols.names import ProtocolName
from skillharness.config import Config, load_config
from skillharness.data.pools import load_pools
from skillharness.errors import ConfigError, RunInputsChanged, SkillError
from skillharness.eval import (
    Arm,
    HoldoutReport,
    check_eval_id,
    check_transfers,
    default_eval_id,
    final_ref,
    run_holdout,
    run_transfers,
)
from skillharness.infer import InferProgress, RichProgress
from skillharness.infer.runner import load_bundle
from skillharness.skills import Workspace
from skillharness.store import RunKind, RunMetric, RunReader

_BASELINE_VERSION = "v0000"


def eval_command(
    config: Path = typer.Option(..., "--config", help="Experiment YAML (its pools name the test pool)."),
    run: str | None = typer.Option(
        None, "--run", help="A training run: its final bundle against its baseline (workspace v0000)."
    ),
    bundle: Path | None = typer.Option(None, "--bundle", help="A bundle folder or workspace (its current)."),
    against: str | None = typer.Option(
        None,
        "--against",
        help="With --bundle: the baseline, a bundle folder or workspace, or a training run (its final "
        "bundle). Default: agent.bundle of the config.",
    ),
    purpose: str | None = typer.Option(None, "--purpose", help="Why the test pool is read (recorded)."),
    eval_id: str | None = typer.Option(
        None, "--eval-id", help="Name the evaluation (resumes an existing one)."
    ),
    protocols: list[str] | None = typer.Option(
        None,
        "--protocol",
        help="Compare the two bundles under this reference protocol instead (repeatable: lmms_eval | "
        "vlmevalkit), the bundle in its own instruction slot. Default: our agent, then eval.protocols.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
) -> None:
    """Run two bundles on the test pool and compare them: intervals, paired gain, exact McNemar."""
    if run is not None and (bundle is not None or against is not None):
        raise ConfigError("--run evaluates a training run against its own v0000: drop --bundle / --against")
    settings = load_config(config)
    if run is not None:
        final, baseline = _run_arms(settings, run)
        purpose = purpose or f"skillharness eval --run {run}"
    elif bundle is not None:
        final, baseline = _bundle_arms(settings, bundle, against)
        purpose = purpose or "skillharness eval --bundle"
    else:
        raise ConfigError("name what to evaluate: either --run TRAIN_RUN or --bundle DIR")
    chosen = _protocols(protocols)
    eval_id = eval_id or default_eval_id()
    try:  # before our agent's holdout reads the test pool, not after it when a transfer's id fails
        check_eval_id(eval_id, settings.eval.protocols if chosen is None else chosen, ours=chosen is None)
    except ConfigError as exc:
        raise ConfigError(f"--eval-id: {exc}", key="--eval-id") from None
    console = Console(stderr=as_json)
    progress: InferProgress = InferProgress() if as_json else RichProgress(console, label="eval")
    with _resumable(eval_id), progress:
        reports = asyncio.run(_evaluate(settings, (final, baseline), run, purpose, eval_id, chosen, progress))
    if as_json:
        doc = [json.loads(report.model_dump_json()) for report in reports]
        typer.echo(json.dumps(doc[0] if len(doc) == 1 else doc, indent=2))
        return
    from skillharness.commands.eval_table import print_holdout

    for report in reports:
        print_holdout(console, report)


@contextlib.contextmanager
def _resumable(eval_id: str) -> Iterator[None]:
    """Ctrl-C: say the evaluation's id, printed nowhere else; without it, going on would be a new
    evaluation, one more read of the test pool. An id whose runs were made with other inputs is
    refused naming --eval-id, not a run id the user never typed."""
    try:
        yield
    except RunInputsChanged as exc:  # the store names a run id; an evaluation's are named by --eval-id
        run = exc.context.get("run_id")
        raise ConfigError(
            f"--eval-id {eval_id}: an evaluation made with other inputs (its run {run!r}: {exc.differences});"
            " omit --eval-id for a new evaluation",
            eval_id=eval_id,
        ) from exc
    except KeyboardInterrupt:
        typer.echo(
            f"interrupted; to finish this evaluation (the same read of the test pool, not another), "
            f"run the same command with --eval-id {eval_id}",
            err=True,
        )
        raise typer.Exit(130) from None


def _protocols(given: list[str] | None) -> tuple[ProtocolName, ...] | None:
    """``--protocol`` values as protocol names (None: not given)."""
    if not given:
        return None
    try:
        return tuple(ProtocolName(value) for value in given)
    except ValueError as exc:
        names = " | ".join(p.value for p in ProtocolName if p is not ProtocolName.SKILLHARNESS)
        raise ConfigError(f"--protocol: {exc}; choose one of {names}", key="--protocol") from None


async def _evaluate(
    settings: Config,
    arms: tuple[Arm, Arm],
    run: str | None,
    purpose: str,
    eval_id: str,
    protocols: tuple[ProtocolName, ...] | None,
    progress: InferProgress,
) -> list[HoldoutReport]:
    """Our agent's comparison then ``eval.protocols``'s transfers, or only the given protocols'."""
    final, baseline = arms
    check_transfers(settings, settings.eval.protocols if protocols is None else protocols)
    reports = []
    if protocols is None:
        reports.append(
            await run_holdout(
                settings,
                final,
                baseline,
                train_run_id=run,
                purpose=purpose,
                eval_id=eval_id,
                progress=progress,
            )
        )
    transfers = await run_transfers(
        settings,
        final,
        baseline,
        settings.eval.protocols if protocols is None else protocols,
        eval_id=eval_id,
        train_run_id=run,
        purpose=purpose,
        progress=progress,
    )
    return [*reports, *transfers.values()]


def holdout_for_run(
    settings: Config,
    run_id: str,
    *,
    purpose: str,
    eval_id: str | None = None,
    progress: InferProgress | None = None,
) -> HoldoutReport:
    """A training run's final bundle against its v0000 on the test pool (``train`` ends with this).

    An existing ``eval_id`` is continued, not read again (default: a new evaluation).
    """
    final, baseline = _run_arms(settings, run_id)
    return asyncio.run(
        run_holdout(
            settings,
            final,
            baseline,
            train_run_id=run_id,
            purpose=purpose,
            eval_id=eval_id,
            progress=progress,
        )
    )


def transfer_for_run(
    settings: Config,
    run_id: str,
    protocols: tuple[ProtocolName, ...],
    *,
    purpose: str,
    progress: InferProgress | None = None,
) -> list[HoldoutReport]:
    """A training run's final bundle against its v0000 under each of ``protocols`` (the demo)."""
    final, baseline = _run_arms(settings, run_id)
    reports = asyncio.run(
        run_transfers(
            settings,
            final,
            baseline,
            protocols,
            eval_id=default_eval_id(),
            train_run_id=run_id,
            purpose=purpose,
            progress=progress,
        )
    )
    return list(reports.values())


def _metrics(settings: Config, run_id: str, flag: str) -> list[RunMetric]:
    """The run's metrics, once it is known to be trained on this config's split."""
    with contextlib.closing(RunReader(settings.store)) as reader:
        provenance = reader.run(run_id).provenance  # StoreError naming the known runs
        metrics = reader.ledger(RunMetric, run_id=run_id)
    if provenance.kind is not RunKind.TRAIN:
        # Only a training run records a final bundle; say what this run is, not "did it finish?".
        part = f", part of training run {provenance.parent_run_id!r}" if provenance.parent_run_id else ""
        raise ConfigError(
            f"{flag} {run_id!r}: a run of kind {provenance.kind.value}{part}; only a training run records a "
            "final bundle to evaluate (name a bundle folder or workspace instead)",
            run_id=run_id,
        )
    trained_on = provenance.pools_sha256
    if settings.data.pools is None:
        raise ConfigError("data.pools is not set: the holdout is the test pool of a pools.json")
    split = load_pools(settings.data.pools, settings.data.pools_sha256).sha256
    if trained_on != split:
        # Another split's test pool may hold this run's training or val questions: no holdout at all.
        raise ConfigError(
            f"run {run_id!r} was trained on the split with pools sha256 {str(trained_on)[:12]}, but "
            f"{settings.data.pools} has {split[:12]}: evaluate it with its own experiment's config",
            run_id=run_id,
        )
    return metrics


def _workspace_arm(settings: Config, run_id: str, flag: str = "--run") -> tuple[Workspace, Arm]:
    ref = final_ref(_metrics(settings, run_id, flag), run_id)
    workspace = Workspace.read(ref.workspace)
    bundle = workspace.load(ref.version)
    if bundle.bundle_hash != ref.bundle_hash:
        raise SkillError(
            f"{ref.workspace}/{ref.version} does not hold run {run_id!r}'s final bundle: its hash is "
            f"{bundle.bundle_hash[:12]}, the run recorded {ref.bundle_hash[:12]}",
            file=str(ref.workspace),
        )
    return workspace, Arm(bundle, f"{run_id} ({ref.version})")


def _run_arms(settings: Config, run_id: str) -> tuple[Arm, Arm]:
    workspace, final = _workspace_arm(settings, run_id)
    baseline = Arm(workspace.load(_BASELINE_VERSION), f"{run_id} ({_BASELINE_VERSION})")
    return final, baseline


def _bundle_arms(settings: Config, bundle: Path, against: str | None) -> tuple[Arm, Arm]:
    final = Arm(load_bundle(bundle), str(bundle))
    if against is None:
        if settings.agent.bundle is None:
            raise ConfigError("no baseline: give --against DIR|RUN or set agent.bundle in the config")
        return final, Arm(load_bundle(settings.agent.bundle), str(settings.agent.bundle))
    if Path(against).is_dir():
        return final, Arm(load_bundle(Path(against)), against)
    if Path(against).exists():
        raise ConfigError(f"--against {against}: not a bundle folder or workspace")
    return final, _workspace_arm(settings, against, "--against")[1]


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
