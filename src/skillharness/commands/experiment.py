"""``skillharness experiment init``: one command from the files on disk to a ready experiment.

It checks every flag first (:mod:`skillharness.commands.experiment_checks`), so an input at fault
(a missing questions file, a videos folder without the questions' videos, an endpoint that does
not answer after the probe's retries, a model it does not serve, ``--sizes`` beyond the data) is
named before anything is written, and the corrected command needs no ``--force``. Then it sizes
the split from the data unless ``--sizes`` is given
(:mod:`skillharness.commands.experiment_sizes`), freezes it, writes the initial bundle and a
complete, commented ``experiment.yaml`` (:mod:`skillharness.commands.experiment_files`), runs
preflight on it and prints ``gate plan`` for the split; the commands to run next only when
preflight passed, and otherwise what failed and what to change. Nothing existing is replaced
without ``--force``; a second run with the same arguments writes nothing.
"""

from __future__ import annotations

import os
import shlex
import shutil
from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.console import Console

from skillharness import __version__
from skillharness.commands.experiment_checks import check_endpoint, check_videos
from skillharness.commands.experiment_files import (
    BUNDLE_DIR,
    EXPERIMENT_FILE,
    SPLIT_DIR,
    Experiment,
    State,
    bundle_state,
    experiment_yaml,
    split_state,
    yaml_state,
)
from skillharness.commands.experiment_sizes import SizeChoice, choose_split
from skillharness.commands.folders import ensure_folder
from skillharness.commands.gate import gate_app
from skillharness.commands.preflight import preflight
from skillharness.commands.split import benchmark_name, micro_verdicts, print_split
from skillharness.config import Config, load_config
from skillharness.data import (
    DEFAULT_BENCHMARK,
    MANIFEST_FILE,
    Pool,
    Question,
    load_adapter,
    pools_bytes,
    read_questions,
    write_split,
)
from skillharness.errors import ConfigError, SkillharnessError
from skillharness.skills import Bundle, initial_bundle
from skillharness.util.atomic import atomic_write_text, sha256_bytes

experiment_app = typer.Typer(help="Set up an experiment folder (experiment init).", no_args_is_help=True)


_QUESTIONS = typer.Option(
    ..., "--questions", help="Questions file (parquet/json/jsonl/csv/tsv), or folder of a per-task layout."
)
_BENCHMARK = typer.Option(
    DEFAULT_BENCHMARK,
    "--benchmark",
    help="Layout of the questions: a built-in adapter name or an adapter .yaml (data.benchmark).",
)
_VIDEOS = typer.Option(..., "--videos", help="Folder of <videoID>.mp4 files.")
_SUBTITLES = typer.Option(None, "--subtitles", help="Folder of <videoID>.srt files.")
_ENDPOINT = typer.Option(..., "--endpoint", help="OpenAI-compatible base URL, e.g. http://host:8000/v1.")
_MODEL = typer.Option(..., "--model", help="Model name the endpoint serves.")
_HOLDOUT = typer.Option(
    None,
    "--holdout/--no-holdout",
    help="Required: whether training ends with one read of the sealed test pool (eval.run_holdout_eval).",
)
_OUT = typer.Option(Path("experiment"), "--out", help="The experiment folder.")
_API_KEY_ENV = typer.Option(
    None, "--api-key-env", help="Name of the env var holding the endpoint's API key (never the key)."
)
_TEMPERATURE = typer.Option(
    0.7, "--temperature", min=0.0, max=2.0, help="The agent's sampling temperature (above 0: gates resample)."
)
_SIZES = typer.Option(
    None,
    "--sizes",
    help="Split units in train,val,test (default: sized from the data, and the choice printed).",
)
_UNIT = typer.Option("video", "--unit", help="Split unit: video or question.")
_SAMPLE = typer.Option(None, "--sample", help="Draw a stratified subsample of N units first.")
_MIN_VAL_PER_CLASS = typer.Option(
    8, "--min-val-per-class", help="At least K val questions per class (8: what a gate needs to accept)."
)
_EXCLUDE_TASK_TYPES = typer.Option(
    [], "--exclude-task-types", help="Task type to leave out of the split (repeatable)."
)
_SEED = typer.Option(0, "--seed", help="Seed of the split.")
_FORCE = typer.Option(
    False, "--force", help="Replace a different split (backed up), bundle or experiment.yaml."
)


@experiment_app.command("init")
def init(
    questions: Path = _QUESTIONS,
    videos: Path = _VIDEOS,
    benchmark: str = _BENCHMARK,
    subtitles: Path | None = _SUBTITLES,
    endpoint: str = _ENDPOINT,
    model: str = _MODEL,
    holdout: bool | None = _HOLDOUT,
    out: Path = _OUT,
    api_key_env: str | None = _API_KEY_ENV,
    temperature: float = _TEMPERATURE,
    sizes: str | None = _SIZES,
    unit: str = _UNIT,
    sample: int | None = _SAMPLE,
    min_val_per_class: int = _MIN_VAL_PER_CLASS,
    exclude_task_types: list[str] = _EXCLUDE_TASK_TYPES,
    seed: int = _SEED,
    force: bool = _FORCE,
) -> None:
    """Freeze a split, write the bundle and experiment.yaml, probe, preflight and plan the gates."""
    holdout = _require_holdout(holdout)
    console = Console()
    benchmark = benchmark_name(benchmark)
    rows = _check_inputs(questions, videos, subtitles, benchmark)
    flags = {
        "unit": unit,
        "sample": sample,
        "min_val_per_class": min_val_per_class,
        "exclude_task_types": tuple(exclude_task_types),
        "seed": seed,
    }
    # The micro verdicts of the run the YAML sets up: train.gate's defaults (and the environment's
    # SKILLHARNESS_TRAIN__GATE__*, as preflight reads them), at its temperature.
    sized = choose_split(rows, sizes, flags, Config().train.gate, temperature)
    check_videos(rows, videos)
    check_endpoint(endpoint, model, api_key_env)
    console.print(f"endpoint {endpoint} answers and serves {model}")
    exp = Experiment(
        folder=out.resolve(),
        questions=questions.resolve(),
        videos=videos.resolve(),
        subtitles=subtitles.resolve() if subtitles else None,
        endpoint=endpoint,
        model=model,
        api_key_env=api_key_env,
        holdout=holdout,
        temperature=temperature,
        benchmark=benchmark,
        min_distinct=sized.min_distinct,
        min_distinct_note=sized.min_distinct_note,
    )
    ensure_folder(exp.folder, "--out")
    _write(console, exp, sized, rows, force=force)
    _check(console, exp)


def _require_holdout(holdout: bool | None) -> bool:
    """The holdout is the user's decision: no default, so the flag is refused when missing."""
    if holdout is None:
        raise ConfigError(
            "decide the holdout: --holdout (when training ends, the final and the initial bundle run once "
            "on the sealed test pool) or --no-holdout (training never reads it; `skillharness eval` can "
            "later). Training refuses to start until eval.run_holdout_eval is set.",
            field="--holdout",
        )
    return holdout


def _check_inputs(questions: Path, videos: Path, subtitles: Path | None, benchmark: str) -> list[Question]:
    """Load the questions and check the folders; each error names its flag and path."""
    for flag, folder in (("--videos", videos), ("--subtitles", subtitles)):
        if folder is None:
            continue
        if not folder.is_dir():
            raise ConfigError(f"{flag} {folder}: not a folder", field=flag)
        if not os.access(folder, os.R_OK | os.X_OK):
            raise ConfigError(f"{flag} {folder}: the folder cannot be read (permissions)", field=flag)
    try:
        load_adapter(benchmark)
    except SkillharnessError as exc:
        raise ConfigError(f"--benchmark: {exc}", field="--benchmark") from exc
    try:
        return list(read_questions(questions, benchmark))
    except SkillharnessError as exc:
        raise ConfigError(f"--questions: {exc}", field="--questions", file=str(questions)) from exc


def _write(
    console: Console, exp: Experiment, sized: SizeChoice, rows: list[Question], *, force: bool
) -> None:
    """Write what is new, keep what is the same; what differs is refused (nothing written) unless
    ``force`` replaces it. Every state is known before the first write."""
    split = sized.split
    split_dir, bundle_dir = exp.folder / SPLIT_DIR, exp.folder / BUNDLE_DIR
    initial = initial_bundle(q.task_type for q in rows)  # a skill per task type the data holds
    pools_sha = sha256_bytes(pools_bytes(split))
    text = experiment_yaml(exp, pools_sha)
    states = {
        f"{SPLIT_DIR}/ (the frozen split)": split_state(split_dir, pools_sha, exp.questions),
        f"{BUNDLE_DIR}/ (the initial bundle)": bundle_state(bundle_dir, initial),
        EXPERIMENT_FILE: yaml_state(exp, text),
    }
    differ = [name for name, state in states.items() if state is State.DIFFERS]
    if differ and not force:
        raise ConfigError(
            f"{exp.folder} already holds something else in: {'; '.join(differ)}. Nothing was written. "
            "Pass --force to replace it (a split is backed up first, a bundle to "
            f"{BUNDLE_DIR}.bak-<time>/, experiment.yaml to {EXPERIMENT_FILE}.bak), or choose another --out",
            files=differ,
        )
    split_is, bundle_is, yaml_is = states.values()
    gate = Config().train.gate
    if exp.min_distinct is not None:
        gate = gate.model_copy(update={"min_distinct": exp.min_distinct})
    print_split(console, split, rows, micro_verdicts(split, rows, gate, exp.temperature))
    for line in sized.lines:
        console.print(line, highlight=False)
    if split_is is State.SAME:
        console.print(f"split: {split_dir} already holds this split (verified); kept")
    else:
        written = write_split(
            split, rows, exp.questions, split_dir, force=force, version=__version__, benchmark=exp.benchmark
        )
        console.print(f"split: wrote {written.pools_path} and {written.manifest_path}")
    _write_bundle(console, bundle_dir, initial, bundle_is, force=force)
    if yaml_is is State.SAME:
        console.print(f"{EXPERIMENT_FILE}: {exp.yaml_path} is unchanged; kept")
        if split_is is State.SAME and bundle_is is State.SAME:
            console.print("nothing written: the experiment is already set up with these arguments")
        return
    if yaml_is is State.DIFFERS:
        shutil.copy2(exp.yaml_path, exp.yaml_path.with_name(EXPERIMENT_FILE + ".bak"))
    atomic_write_text(exp.yaml_path, text)
    console.print(f"{EXPERIMENT_FILE}: wrote {exp.yaml_path}")


def _write_bundle(console: Console, folder: Path, initial: Bundle, state: State, *, force: bool) -> None:
    """The initial bundle in ``folder``; one that differs (a hand edit: the one file here nothing
    can regenerate) is copied aside first, as the split and the YAML are."""
    if state is State.SAME:
        console.print(f"bundle: {folder} already holds the initial bundle; kept")
        return
    if state is State.DIFFERS:
        backup = folder.with_name(f"{BUNDLE_DIR}.bak-{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}")
        shutil.copytree(folder, backup)
        console.print(f"bundle: backed up {folder} to {backup}")
    initial.save(folder, prune=force)
    console.print(f"bundle: wrote {folder}, a skill for each of the {len(initial.skills)} task types")


def _check(console: Console, exp: Experiment) -> None:
    """Preflight on the written YAML, the gate plan of its split, and what to run next."""
    config = exp.yaml_path
    console.rule("preflight")
    failed: ConfigError | None = None
    try:
        preflight(config=config, pool=Pool.VAL, timeout=None)
    except ConfigError as exc:
        failed = exc
    console.rule("gate plan")
    settings = load_config(config)
    manifest = exp.folder / SPLIT_DIR / MANIFEST_FILE
    gate = settings.train.gate
    plan = ["plan", "--manifest", str(manifest), "--budget", str(gate.n_max), "--alpha", f"{gate.alpha:g}"]
    plan += ["--bet-cap", f"{gate.bet_cap:g}", "--min-distinct", str(gate.min_distinct)]
    plan += ["--temperature", f"{settings.agent.sampling.temperature or 0:g}"]
    if gate.alpha_spending != "none":
        plan += ["--alpha-spending", gate.alpha_spending]
    console.print(f"$ skillharness gate {shlex.join(plan)}")
    typer.main.get_command(gate_app).main(args=plan, prog_name="skillharness gate", standalone_mode=False)
    if failed is None:
        _next_steps(console, config)
        return
    _failed(console, config, failed)


def _failed(console: Console, config: Path, failed: ConfigError) -> None:
    """Training would refuse to start: say what failed and what to change, never what to run next."""
    here = shlex.quote(os.path.relpath(config))
    console.rule("preflight failed")
    for problem in failed.context.get("problems", ()):
        console.print(f"  - {problem}", highlight=False)
    console.print(
        f"not ready to train. Change what each problem names: a setting in {here} (then run "
        f"`skillharness preflight --config {here}`), or a flag of this command (run it again with "
        "--force: what it replaces is backed up). The split's report above says which classes are "
        "micro and why.",
        highlight=False,
    )
    raise ConfigError(
        f"{failed}; fix them, then run `skillharness preflight --config {shlex.quote(str(config))}`",
        **failed.context,
    )


def _next_steps(console: Console, config: Path) -> None:
    here = shlex.quote(os.path.relpath(config))
    console.rule("next")
    console.print(
        f"skillharness train --config {here} --resume r1 --run-id r1  # starts r1, and continues it\n"
        f"skillharness report --config {here} --run r1      # the run's HTML report\n"
        f"skillharness eval --config {here} --run r1        # the holdout again, on demand",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add the ``experiment`` command group to the root app."""
    app.add_typer(experiment_app, name="experiment")
