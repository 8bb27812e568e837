"""``skillharness train``: preflight, baseline, the loop, and (when chosen) the holdout eval."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from skillharness.commands.cells import ci, signed
from skillharness.commands.eval import holdout_for_run
from skillharness.commands.eval_table import print_holdout
from skillharness.config import Config, load_config
from skillharness.errors import ConfigError, StoreError
from skillharness.eval import holdout_of_final
from skillharness.infer.progress import RichProgress
from skillharness.store import RunMetric, RunReader, run_id_problem
from skillharness.train import (
    VAL_GAIN_LABEL,
    Checkpoint,
    TrainingStopped,
    TrainOutcome,
    TrainProgress,
    TrainRequest,
    default_train_run_id,
    describe_unselected,
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
        help="Continue this run from its checkpoint (an id this experiment never started is refused; "
        "give --run-id ID too to start it then); once it has ended, say so and do nothing.",
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", help="Reuse this infer run of the initial bundle on val as the baseline."
    ),
    stop_file: Path | None = typer.Option(
        None, "--stop-file", help="Stop cleanly after the current decision when this file appears."
    ),
    skip_preflight: bool = typer.Option(False, "--skip-preflight", help="Do not run preflight first."),
    max_calls: int | None = typer.Option(
        None,
        "--max-calls",
        min=1,
        metavar="N",
        help="Set train.budget.max_calls (over every invocation of the run).",
    ),
) -> None:
    """Train the bundle against the gate; Ctrl-C, a stop file or the budget stop it resumably."""
    settings = load_config(config, {"train.budget.max_calls": max_calls})
    if resume is not None and run_id is not None and run_id != resume:
        raise ConfigError("give --resume RUN alone, or --resume RUN --run-id RUN to start it if new")
    _check_flags(config, resume, run_id, stop_file)
    chosen = resume or run_id or default_train_run_id()
    console = Console()
    folder = run_folder(config.resolve().parent, chosen)
    if resume is not None and run_id is None:
        _refuse_unknown_resume(settings, config, folder, resume)
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
    console.print(f"training run [bold]{chosen}[/] in {folder}", soft_wrap=True)  # a path stays whole
    outcome = _run(console, settings, request, config, max_calls)
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
    if not report.ok:  # a problem, or a check that could not run
        for line in report.unverified():
            console.print(f"[red]preflight[/] {escape(line)}")
        raise typer.Exit(2)


def _run(
    console: Console, settings: Config, request: TrainRequest, config: Path, max_calls: int | None = None
) -> TrainOutcome:
    """The training loop under its progress display; a stop or Ctrl-C ends the command resumably.
    ``max_calls`` is the ``--max-calls`` given: each resume command printed repeats it."""
    try:
        with TrainProgress(console, run_id=request.run_id, epochs=settings.train.epochs) as progress:
            return asyncio.run(run_training(settings, request, observer=progress))
    except TrainingStopped as exc:
        console.print(f"[yellow]stopped[/]: {exc}")
        # Unwrapped: a command cut across lines (a log is 80 wide) cannot be pasted back.
        hint = _resume_hint(settings, config, request, exc.context.get("reason"), max_calls=max_calls)
        console.print(hint, soft_wrap=True)
        raise typer.Exit(3) from None
    except KeyboardInterrupt:
        resume = _resume_command(config, request.run_id, max_calls)
        console.print(f"[yellow]interrupted[/]; resume with: {resume}", soft_wrap=True)
        raise typer.Exit(130) from None


# What to raise after each budget stop (the keys are train.state.budget.BUDGET_REASONS): resuming
# with the same limit stops again before its first call.
BUDGET_SETTINGS = {
    "max_calls": "train.budget.max_calls",
    "max_cost": "train.budget.max_cost",
    "max_wall": "train.budget.max_wall_s",
}


def _resume_command(config: Path, run_id: str, max_calls: int | None) -> str:
    """The command that resumes ``run_id``, with the ``--max-calls`` this invocation was given:
    pasted without it, a resume would run with no call limit at all (the flag is no setting stored)."""
    resume = f"skillharness train --config {config} --resume {run_id}"
    return resume if max_calls is None else f"{resume} --max-calls {max_calls:d}"


def _resume_hint(
    settings: Config, config: Path, request: TrainRequest, reason: object, *, max_calls: int | None = None
) -> str:
    """How to go on after a stop; after a budget stop, with the limit that stopped it raised; after
    a stop file, with the file removed (left there, it stops every resume at once). ``max_calls``
    is the ``--max-calls`` given, repeated in every hint but the one that raises it."""
    resume = _resume_command(config, request.run_id, max_calls)
    if reason == "stop_file":
        return f"remove the stop file {request.stop_file}, then resume with: {resume}"
    if reason not in BUDGET_SETTINGS:
        return f"resume with: {resume}"
    setting = BUDGET_SETTINGS[str(reason)]
    if reason == "max_calls":
        more = 2 * (settings.train.budget.max_calls or 0) or 1
        raised = _resume_command(config, request.run_id, more)
        return f"the budget stopped it: raise {setting} to resume, e.g. {raised}"
    return f"the budget stopped it: raise {setting} in {config}, then {resume}"


# Room a training run's id leaves for its children's suffixes (the longest, ".val.fresh<sample>.<16
# hex>", is about 40 characters): every child id must still pass the store's rule of 200 characters.
_CHILD_ROOM = 48


def _check_flags(config: Path, resume: str | None, run_id: str | None, stop_file: Path | None) -> None:
    """The run ids and stop file given, checked before anything is read or created."""
    for flag, given in (("--resume", resume), ("--run-id", run_id)):
        if given is not None:
            check_run_id(flag, given, new=not run_folder(config.resolve().parent, given).is_dir())
    if stop_file is not None:
        check_stop_file(stop_file)


def check_run_id(flag: str, run_id: str, *, new: bool = True) -> None:
    """Refuse a run id the store would refuse, before anything is created: it names the run's folder
    (``runs/../../x`` would be written outside the experiment) and every child run's id. A ``new``
    run's id must also leave its children room; a run that exists is not locked out by that rule."""
    why = run_id_problem(run_id, longest=200 - _CHILD_ROOM) if new else run_id_problem(run_id)
    if why:
        raise ConfigError(f"invalid {flag} {run_id!r}: {why}", field=flag)


def check_stop_file(path: Path) -> None:
    """Refuse a ``--stop-file`` that could never be created, or is a folder: a typo found only when
    the run must stop, or a stop at once whose hint says to remove that folder."""
    if path.is_dir():
        raise ConfigError(
            f"--stop-file {path} is a folder; name a file (it need not exist: creating it stops the run)",
            field="--stop-file",
        )
    if not path.parent.is_dir():
        what = "is no folder" if path.parent.exists() else "does not exist"
        raise ConfigError(
            f"--stop-file {path}: its folder {path.parent} {what}, so the file could never be "
            "created to stop the run; create the folder or name another path",
            field="--stop-file",
        )


def _refuse_unknown_resume(settings: Config, config: Path, folder: Path, run_id: str) -> None:
    """Refuse ``--resume`` of a run this experiment has never started (a mistyped id would start a
    new run, spend a new budget and read the test pool again); ``--run-id`` with it starts one."""
    if folder.exists():
        return
    try:
        with contextlib.closing(RunReader(settings.store)) as reader:
            reader.run(run_id)
        return  # the store knows it: training refuses a run of another folder, naming that folder
    except StoreError:  # no store yet, or no such run in it
        pass
    runs = folder.parent
    known = sorted(p.name for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []
    raise ConfigError(
        f"--resume {run_id}: no run of that id in {runs} (known: {', '.join(known) or 'none'}; "
        f"see skillharness runs list --config {config}). To start it, give --run-id {run_id} too",
        run_id=run_id,
        known=known,
    )


def val_gain_line(gain: Mapping[str, Any]) -> str:
    """The val gain, labelled selected-on-val, with its interval by video and the per-question one."""
    line = f"val gain {signed(gain['gain'])} pts {ci(gain['low'], gain['high'], True)}"
    if gain.get("per_question_low") is not None and gain.get("per_question_high") is not None:
        deff = gain.get("design_effect")
        line += f" by video; per question {ci(gain['per_question_low'], gain['per_question_high'], True)}" + (
            f", design effect {deff:.2f}" if deff is not None else ""
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
            metrics = reader.ledger(RunMetric, run_id=ckpt.run_id)
        if not holdout_of_final(metrics, ckpt.run_id):  # none, or one of an earlier incumbent
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
    if isinstance(outcome.gain.get("unselected"), dict):
        console.print(f"  {describe_unselected(outcome.gain['unselected'])}")
    console.print(
        f"state {ckpt.state.value}{' (' + ckpt.stop_reason + ')' if ckpt.stop_reason else ''}; "
        f"final version {ckpt.version} in {outcome.workspace}"
    )
    console.print(f"alpha spent {ckpt.alpha_spent:.3f} over {ckpt.gates_run} gate(s)")


def register(app: typer.Typer) -> None:
    app.command("train")(train)
