"""``skillharness split`` and ``skillharness split verify``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console

from skillharness import __version__
from skillharness.commands.fit_table import Col, FitTable
from skillharness.data.loader import load_questions
from skillharness.data.pools import verify_split, write_split
from skillharness.data.questions import Question
from skillharness.data.split import Pool, Split, SplitParams, count_table, make_split
from skillharness.errors import ConfigError, SplitError
from skillharness.util.model import describe_validation

split_app = typer.Typer(help="Freeze train/val/test pools (split) or check frozen ones (split verify).")


def _parse_sizes(text: str) -> tuple[int, int, int]:
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError as exc:
        raise ConfigError(f"--sizes must be three integers like 210,90,600, got {text!r}") from exc
    if len(sizes) != 3:
        raise ConfigError(f"--sizes must be three integers like 210,90,600, got {text!r}")
    return sizes  # type: ignore[return-value]


def gate_min_val(alpha: float | None, bet_cap: float | None) -> int:
    """Val questions a class needs so that its gate can ever accept (see train.gate).

    ``None`` takes train.gate's default, so this command never restates the gate's settings.
    """
    from skillharness.train.config import GateConfig
    from skillharness.train.gate import min_net_wins

    given = {"alpha": alpha, "bet_cap": bet_cap}
    gate = GateConfig(**{k: v for k, v in given.items() if v is not None})  # type: ignore[arg-type]
    return min_net_wins(alpha=gate.alpha, bet_cap=gate.bet_cap)


def split_params(sizes: str, alpha: float | None, bet_cap: float | None, **flags: Any) -> SplitParams:
    """The split's parameters from its flags; a bad flag is the user's error, not a traceback."""
    try:
        return SplitParams(sizes=_parse_sizes(sizes), micro_min_val=gate_min_val(alpha, bet_cap), **flags)
    except ValidationError as exc:
        raise ConfigError(f"invalid split parameters: {describe_validation(exc)}") from exc


@split_app.callback(invoke_without_command=True)
def split(
    ctx: typer.Context,
    questions: Path | None = typer.Option(
        None, "--questions", help="Questions file (parquet/json/jsonl/csv/tsv)."
    ),
    out: Path | None = typer.Option(None, "--out", help="Folder for pools.json and split_manifest.json."),
    sizes: str = typer.Option("210,90,600", "--sizes", help="Units in train,val,test."),
    unit: str = typer.Option(
        "video", "--unit", help="video (default: a video never crosses pools) or question."
    ),
    sample: int | None = typer.Option(None, "--sample", help="Draw a stratified subsample of N units first."),
    min_val_per_class: int = typer.Option(
        0, "--min-val-per-class", help="At least K val questions per class."
    ),
    exclude_task_types: list[str] = typer.Option(
        [], "--exclude-task-types", help="Task type to leave out (repeatable)."
    ),
    seed: int = typer.Option(0, "--seed"),
    alpha: float | None = typer.Option(
        None, "--alpha", help="Gate alpha for the micro-class report (default: train.gate.alpha's)."
    ),
    bet_cap: float | None = typer.Option(
        None, "--bet-cap", help="Gate bet cap for the micro-class report (default: train.gate.bet_cap's)."
    ),
    force: bool = typer.Option(False, "--force", help="Replace existing artifacts (old ones are backed up)."),
) -> None:
    """Split a questions file into frozen train/val/test pools."""
    if ctx.invoked_subcommand is not None:
        return
    if questions is None or out is None:
        raise ConfigError("split needs --questions PATH and --out DIR (or use `split verify DIR`)")
    if unit not in ("video", "question"):
        raise ConfigError(f"--unit must be 'video' or 'question', got {unit!r}")
    started = time.perf_counter()
    rows = load_questions(questions)
    params = split_params(
        sizes,
        alpha,
        bet_cap,
        unit=unit,
        sample=sample,
        min_val_per_class=min_val_per_class,
        exclude_task_types=tuple(exclude_task_types),
        seed=seed,
    )
    result = make_split(rows, params)
    written = write_split(result, rows, questions, out, force=force, version=__version__)
    console = Console()
    print_split(console, result, rows)
    if written.backup_dir is not None:
        console.print(f"[yellow]Replaced existing artifacts; the old ones are in {written.backup_dir}[/]")
    console.print(
        f"Wrote {written.pools_path} (sha256 {written.pools_sha256}) and {written.manifest_path} "
        f"in {time.perf_counter() - started:.2f}s"
    )


@split_app.command("verify")
def verify(
    directory: Path = typer.Argument(..., help="Folder holding pools.json and split_manifest.json."),
    questions: Path | None = typer.Option(None, "--questions", help="Source file, if it moved."),
) -> None:
    """Re-hash and re-count the frozen split; exit non-zero on any mismatch."""
    problems = verify_split(directory, questions)
    if problems:
        raise SplitError(f"split in {directory} does NOT verify:\n  " + "\n  ".join(problems))
    typer.echo(f"split in {directory} verified: hashes and counts match the manifest")


def print_split(console: Console, result: Split, questions: Sequence[Question]) -> None:
    """The pool table (questions per task type and pool) and the micro-class report."""
    columns = [Col("task type", "left", wrap=True), *(Col(pool) for pool in Pool)]
    table = FitTable(f"Pools ({result.params.unit} units, seed {result.params.seed})", columns)
    micro = {m.task_type for m in result.micro}
    cells = count_table(result, questions)
    counts = {
        pool: {task: sum(by_duration.values()) for task, by_duration in cells[pool].items()} for pool in Pool
    }
    for task in sorted({t for c in counts.values() for t in c}):
        label = f"{task} [magenta](micro)[/]" if task in micro else task
        table.add_row(label, *(str(counts[p].get(task, 0)) for p in Pool))
    table.add_section()
    table.add_row("units", *(str(len(result.pools[p])) for p in Pool))
    table.add_row("questions", *(str(sum(counts[p].values())) for p in Pool))
    table.print(console)
    if result.micro:
        console.print(
            "[bold magenta]Micro classes[/] (exclude them from training, or name them in the config):"
        )
        for m in result.micro:
            console.print(f"  - {m.task_type}: {m.reason}")
    else:
        console.print(
            f"No micro classes: every task type has at least {result.params.micro_min_val} val "
            "questions and a train question, so every gate can accept."
        )
    if result.unmet_min_val:
        console.print(
            f"[yellow]Could not reach --min-val-per-class {result.params.min_val_per_class} for:[/] "
            + ", ".join(result.unmet_min_val)
        )


def register(app: typer.Typer) -> None:
    app.add_typer(split_app, name="split")
