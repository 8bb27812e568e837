"""``skillharness train``: preflight, baseline, the loop, and (when chosen) the holdout eval."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from skillharness.commands.eval import holdout_for_run
from skillharness.commands.eval_table import print_holdout
from skillharness.config import Config, load_config
from skillharness.errors import ConfigError
from skillharness.eval import HOLDOUT
from skillharness.infer.progress import RichProgress
from skillharness.store import RunMetric, RunReader
from skillharness.train import (
    VAL_GAIN_LABEL,
    Checkpoint,
    TrainingStopped,
    TrainOutcome,
    TrainProgress,
    TrainRequest,
    default_train_run_id,
    ended_run,
    run_folder,
    run_training,
)
from skillharness.train.preflight.checks import run_preflight


def train(
    config: Path = typer.Option(..., "--config", help="The experiment's YAML (experiment.yaml)."),
    run_id: str | None = typer.Option(None, "--run-id", help="Name the run (default: generated)."),
    resume: str | None = typer.Option(
        None,
        "--resume",
        help="Start or continue this run: from its checkpoint, or from the start when nothing was "
        "saved yet; once it has ended, say so and do nothing.",
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", help="Reuse this infer run of the initial bundle on val as the baseline."
    ),
    stop_file: Path | None = typer.Option(
        None, "--stop-file", help="Stop cleanly after the current decision when this file appears."
    ),
    skip_preflight: bool = typer.Option(False, "--skip-preflight", help="Do not run preflight first."),
) -> None:
    """Train the bundle against the gate; Ctrl-C, a stop file or the budget stop it resumably."""
    settings = load_config(config)
    if resume is not None and run_id is not None and run_id != resume:
        raise ConfigError("give --resume RUN alone (it names the run to continue)")
    chosen = resume or run_id or default_train_run_id()
    console = Console()
    folder = run_folder(config.resolve().parent, chosen)
    request = TrainRequest(
        run_id=chosen,
        folder=folder,
        resume=resume is not None,
        baseline_run=baseline,
        stop_file=stop_file or folder / "STOP",
    )
    ended = ended_run(request, settings.store.url)
    if ended is not None:  # before preflight: an ended run asks nothing of anyone
        _ended(console, settings, config, ended)
        return
    if not skip_preflight:
        _preflight(console, settings)
    console.print(f"training run [bold]{chosen}[/] in {folder}")
    outcome = _run(console, settings, request, config)
    print_outcome(console, outcome)
    if settings.eval.run_holdout_eval:
        _holdout(console, settings, chosen)
    else:
        console.print(
            f"eval.run_holdout_eval is false: no test-pool number. Run `skillharness eval --config {config} "
            f"--run {chosen}` when you decide to read the holdout."
        )


def _preflight(console: Console, settings: Config) -> None:
    """Preflight before training; its problems are printed and end the command (exit 2)."""
    report = run_preflight(settings)
    if not report.ok:
        for problem in report.problems:
            console.print(f"[red]preflight[/] {problem.check}: {problem.message}")
        raise typer.Exit(2)


def _run(console: Console, settings: Config, request: TrainRequest, config: Path) -> TrainOutcome:
    """The training loop under its progress display; a stop or Ctrl-C ends the command resumably."""
    try:
        with TrainProgress(console, run_id=request.run_id, epochs=settings.train.epochs) as progress:
            return asyncio.run(run_training(settings, request, observer=progress))
    except TrainingStopped as exc:
        console.print(f"[yellow]stopped[/]: {exc}")
        console.print(f"resume with: skillharness train --config {config} --resume {request.run_id}")
        raise typer.Exit(3) from None
    except KeyboardInterrupt:
        console.print(
            "[yellow]interrupted[/]; resume with: "
            f"skillharness train --config {config} --resume {request.run_id}"
        )
        raise typer.Exit(130) from None


def val_gain_line(gain: Mapping[str, Any]) -> str:
    """The val gain, labelled selected-on-val, with its interval by video and the per-question one."""
    line = f"val gain {gain['gain']:+.1%}  [{gain['low']:+.1%}, {gain['high']:+.1%}]"
    if gain.get("per_question_low") is not None and gain.get("per_question_high") is not None:
        deff = gain.get("design_effect")
        line += (
            f" by video; per question [{gain['per_question_low']:+.1%}, {gain['per_question_high']:+.1%}]"
            + (f", design effect {deff:.2f}" if deff is not None else "")
        )
    fresh = "fresh samples" if gain.get("fresh_samples") else "temperature 0: the gates' own answers"
    return f"{line}  {gain.get('selection', VAL_GAIN_LABEL)}; {fresh}. The holdout is the headline."


def _holdout(console: Console, settings: Config, run_id: str) -> None:
    """The end-of-training holdout. Its fixed eval id makes a resume after a kill continue the same
    two eval runs (one read of the test pool) instead of starting another."""
    console.rule("holdout: final against baseline on the sealed test pool")
    with RichProgress(console, label="holdout") as holdout_progress:
        report = holdout_for_run(
            settings,
            run_id,
            purpose="end of training",
            eval_id=f"{run_id}.holdout",
            progress=holdout_progress,
        )
    print_holdout(console, report)


def _ended(console: Console, settings: Config, config: Path, ckpt: Checkpoint) -> None:
    """A resume of an ended run: say so, and only finish an end-of-training holdout cut short."""
    reason = f" ({ckpt.stop_reason})" if ckpt.stop_reason else ""
    console.print(
        f"run [bold]{ckpt.run_id}[/] has ended: {ckpt.state.value}{reason}, final version "
        f"{ckpt.version}; nothing to resume"
    )
    if settings.eval.run_holdout_eval:
        with contextlib.closing(RunReader(settings.store)) as reader:
            read = reader.ledger(RunMetric, run_id=ckpt.run_id, name=HOLDOUT)
        if not read:
            console.print("its end-of-training holdout did not complete: finishing it")
            _holdout(console, settings, ckpt.run_id)
            return
    console.print(
        f"each holdout is one more read of the test pool; when you decide to read it again: "
        f"skillharness eval --config {config} --run {ckpt.run_id}"
    )


def print_outcome(console: Console, outcome: TrainOutcome) -> None:
    """Baseline against final on val with intervals, the decisions, and alpha spent."""
    ckpt = outcome.checkpoint
    for name, score in (("baseline", outcome.baseline), ("final", outcome.final)):
        low, high = score.interval()
        console.print(
            f"val {name:8s} {score.accuracy:6.1%}  [{low:.1%}, {high:.1%}]  ({score.correct}/{score.n})"
        )
    console.print(val_gain_line(outcome.gain))
    console.print(
        f"state {ckpt.state.value}{' (' + ckpt.stop_reason + ')' if ckpt.stop_reason else ''}; "
        f"final version {ckpt.version} in {outcome.workspace}"
    )
    console.print(f"alpha spent {ckpt.alpha_spent:.3f} over {ckpt.gates_run} gate(s)")


def register(app: typer.Typer) -> None:
    app.command("train")(train)
