"""``skillharness split`` and ``skillharness split verify``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console

from skillharness import __version__
from skillharness.commands.fit_table import Col, FitTable
from skillharness.commands.flag_errors import flag_problems
from skillharness.data.adapter import builtin_adapters
from skillharness.data.config import DEFAULT_BENCHMARK
from skillharness.data.pools import FrozenPools, verify_split, write_split
from skillharness.data.questions import Question
from skillharness.data.selection import read_questions
from skillharness.data.split import Pool, Split, SplitParams, count_table, make_split
from skillharness.errors import ConfigError, SplitError
from skillharness.train import class_coverage, include_hint
from skillharness.train.config import GateConfig

split_app = typer.Typer(help="Freeze train/val/test pools (split) or check frozen ones (split verify).")


def _parse_sizes(text: str) -> tuple[int, int, int]:
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError as exc:
        raise ConfigError(f"--sizes must be three integers like 210,90,600, got {text!r}") from exc
    if len(sizes) != 3:
        raise ConfigError(f"--sizes must be three integers like 210,90,600, got {text!r}")
    return sizes  # type: ignore[return-value]


def split_gate(
    alpha: float | None = None,
    bet_cap: float | None = None,
    n_max: int | None = None,
    min_distinct: int | None = None,
    reserve: float | None = None,
) -> GateConfig:
    """train.gate with the split's --alpha, --bet-cap, --n-max, --min-distinct and --reserve (None:
    train.gate's default), so the micro report judges the classes as the experiment's gate will."""
    given = {
        "alpha": alpha,
        "bet_cap": bet_cap,
        "n_max": n_max,
        "min_distinct": min_distinct,
        "reserve": reserve,
    }
    try:
        return GateConfig(**{k: v for k, v in given.items() if v is not None})  # type: ignore[arg-type]
    except ValidationError as exc:
        raise ConfigError(f"invalid gate flag: {flag_problems(exc, given=given)}") from exc


def split_coverage(
    result: Split, questions: Sequence[Question], gate: GateConfig, temperature: float
) -> dict[str, Any]:
    """Every class's ``ClassCoverage`` under ``result``, by the one rule training uses
    (train/validate/coverage.py; the type stays inside the train layer)."""
    pools = FrozenPools(
        result.params.unit,
        {pool: tuple(u.id for u in units) for pool, units in result.pools.items()},
        {pool: tuple(q for u in units for q in u.question_ids) for pool, units in result.pools.items()},
        "",
    )
    return class_coverage(questions, pools, gate, temperature)


@dataclass(frozen=True)
class MicroVerdicts:
    """Each micro class of a split and why, and how to train the ones left out for few questions."""

    reasons: dict[str, str]
    hint: str = ""


def micro_verdicts(
    result: Split, questions: Sequence[Question], gate: GateConfig, temperature: float
) -> MicroVerdicts:
    """Each micro class of ``result`` and why (:func:`split_coverage`)."""
    coverage = split_coverage(result, questions, gate, temperature)
    micro = [c for c in coverage.values() if c.micro]
    return MicroVerdicts({c.task_type: c.reason() for c in micro}, include_hint(micro))


def split_params(sizes: str, **flags: Any) -> SplitParams:
    """The split's parameters from its flags; a bad flag is the user's error, not a traceback."""
    try:
        return SplitParams(sizes=_parse_sizes(sizes), **flags)
    except ValidationError as exc:
        given = {**flags, "sizes": sizes}  # SplitParams checks its sizes together: a rule of --sizes
        raise ConfigError(f"invalid split flag: {flag_problems(exc, given=given, whole='sizes')}") from exc


def benchmark_name(benchmark: str) -> str:
    """``--benchmark`` as recorded: a built-in adapter's name, or its file as an absolute path (so a
    manifest or experiment.yaml names the same file from any working folder)."""
    path = Path(benchmark).expanduser()
    if benchmark in builtin_adapters() or not (path.suffix.lower() in (".yaml", ".yml") or path.is_file()):
        return benchmark  # a name (an unknown one is refused by name when it is read)
    return str(path.resolve())


# ``split``'s options, named here so the command reads as its steps.
_QUESTIONS = typer.Option(
    None, "--questions", help="Questions file (parquet/json/jsonl/csv/tsv), or folder of a per-task layout."
)
_BENCHMARK = typer.Option(
    DEFAULT_BENCHMARK, "--benchmark", help="Layout: a built-in adapter name or an adapter .yaml file."
)
_OUT = typer.Option(None, "--out", help="Folder for pools.json and split_manifest.json.")
_SIZES = typer.Option("210,90,600", "--sizes", help="Units in train,val,test.")
_UNIT = typer.Option("video", "--unit", help="video (default: a video never crosses pools) or question.")
_SAMPLE = typer.Option(None, "--sample", help="Draw a stratified subsample of N units first.")
_MIN_VAL_PER_CLASS = typer.Option(0, "--min-val-per-class", help="At least K val questions per class.")
_EXCLUDE_TASK_TYPES = typer.Option([], "--exclude-task-types", help="Task type to leave out (repeatable).")
_SEED = typer.Option(0, "--seed")
_ALPHA = typer.Option(
    None, "--alpha", help="Gate alpha for the micro-class report (default: train.gate.alpha's)."
)
_BET_CAP = typer.Option(
    None, "--bet-cap", help="Gate bet cap for the micro-class report (default: train.gate.bet_cap's)."
)
_N_MAX = typer.Option(
    None, "--n-max", help="Gate budget for the micro-class report (default: train.gate.n_max's)."
)
_MIN_DISTINCT = typer.Option(
    None,
    "--min-distinct",
    help="Fewest distinct val questions of a class that is not micro (default: train.gate.min_distinct's).",
)
_RESERVE = typer.Option(
    None,
    "--reserve",
    help="Share of the val videos no gate draws, left out of each class's count (default: "
    "train.gate.reserve's, 0).",
)
_TEMPERATURE = typer.Option(
    0.7,
    "--temperature",
    min=0.0,
    max=2.0,  # agent.sampling.temperature's range
    help="Agent temperature for the micro-class report (as `experiment init`'s default): at 0 a "
    "gate draws each val question once.",
)


@split_app.callback(invoke_without_command=True)
def split(
    ctx: typer.Context,
    questions: Path | None = _QUESTIONS,
    out: Path | None = _OUT,
    benchmark: str = _BENCHMARK,
    sizes: str = _SIZES,
    unit: str = _UNIT,
    sample: int | None = _SAMPLE,
    min_val_per_class: int = _MIN_VAL_PER_CLASS,
    exclude_task_types: list[str] = _EXCLUDE_TASK_TYPES,
    seed: int = _SEED,
    alpha: float | None = _ALPHA,
    bet_cap: float | None = _BET_CAP,
    n_max: int | None = _N_MAX,
    min_distinct: int | None = _MIN_DISTINCT,
    reserve: float | None = _RESERVE,
    temperature: float = _TEMPERATURE,
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
    # A bad flag is refused before anything is read.
    gate = split_gate(alpha, bet_cap, n_max, min_distinct, reserve)
    benchmark = benchmark_name(benchmark)
    rows = list(read_questions(questions, benchmark))
    params = split_params(
        sizes,
        unit=unit,
        sample=sample,
        min_val_per_class=min_val_per_class,
        exclude_task_types=tuple(exclude_task_types),
        seed=seed,
    )
    result = make_split(rows, params)
    written = write_split(result, rows, questions, out, force=force, version=__version__, benchmark=benchmark)
    console = Console()
    print_split(console, result, rows, micro_verdicts(result, rows, gate, temperature))
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


def print_split(
    console: Console, result: Split, questions: Sequence[Question], verdicts: MicroVerdicts
) -> None:
    """The pool table (questions per task type and pool) and the micro-class report (``micro``:
    each micro class and why, from :func:`micro_verdicts`)."""
    micro = verdicts.reasons
    columns = [Col("task type", "left", wrap=True), *(Col(pool) for pool in Pool)]
    table = FitTable(f"Pools ({result.params.unit} units, seed {result.params.seed})", columns)
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
    if micro:
        console.print(
            "[bold magenta]Micro classes[/] (training leaves them out unless train.task_types names "
            "them; their accepts are then reported apart):"
        )
        for name, reason in sorted(micro.items()):
            console.print(f"  - {name}: {reason}")
        if verdicts.hint:
            console.print(f"  ({verdicts.hint})")
    else:
        console.print(
            "No micro classes: every task type has enough distinct val questions for a claim, a gate "
            "that can accept, and a train question."
        )
    if result.unmet_min_val:
        console.print(
            f"[yellow]Could not reach --min-val-per-class {result.params.min_val_per_class} for:[/] "
            + ", ".join(result.unmet_min_val)
        )


def register(app: typer.Typer) -> None:
    app.add_typer(split_app, name="split")
