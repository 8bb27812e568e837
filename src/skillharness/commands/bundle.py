"""``skillharness bundle init | check | diff | export``."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from skillharness.commands.fit_table import Col, FitTable
from skillharness.data import DEFAULT_BENCHMARK, read_questions
from skillharness.data.questions import VIDEO_MME, slugify
from skillharness.errors import ConfigError, SkillError
from skillharness.skills.bundle import (
    SKILLS_DIR,
    SYSTEM_FILE,
    TOOLS_FILE,
    Bundle,
    initial_bundle,
    stray_skill_entries,
)
from skillharness.skills.export import ExportFormat, export_bundle, load_export_source
from skillharness.skills.workspace import MANIFEST_FILE

bundle_app = typer.Typer(help="Create, validate and compare skill bundles.", no_args_is_help=True)


def _looks_like_bundle(folder: Path) -> bool:
    return any((folder / name).exists() for name in (SYSTEM_FILE, TOOLS_FILE, SKILLS_DIR))


QuestionsOption = Annotated[
    Path | None,
    typer.Option("--questions", help="A questions file (or folder): a skill for each of its task types."),
]
BenchmarkOption = Annotated[
    str, typer.Option("--benchmark", help="The layout of --questions: a built-in name or an adapter .yaml.")
]


def _task_types(questions: Path | None, benchmark: str) -> tuple[str, ...]:
    """The task types a bundle is for: the questions' own, else Video-MME's twelve."""
    if questions is None:
        return VIDEO_MME.task_types
    return tuple(sorted({q.task_type for q in read_questions(questions, benchmark)}))


def _load(folder: Path) -> Bundle:
    """The bundle in ``folder``; a workspace is named as one ("system.md: missing" would not say
    that its bundles are the version folders inside it)."""
    if (folder / MANIFEST_FILE).is_file() and not (folder / SYSTEM_FILE).exists():
        versions = sorted(p.name for p in folder.glob("v[0-9][0-9][0-9][0-9]*") if p.is_dir())
        raise SkillError(
            f"{folder}: is a workspace, not a bundle folder; name one of its versions "
            f"({', '.join(str(folder / v) for v in versions[-2:]) or 'none yet'})",
            file=str(folder),
        )
    return Bundle.load(folder)


@bundle_app.command("init")
def init(
    out: Annotated[Path, typer.Option("--out", help="Folder to write the initial bundle into.")],
    questions: QuestionsOption = None,
    benchmark: BenchmarkOption = DEFAULT_BENCHMARK,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite the bundle files of an existing bundle.")
    ] = False,
) -> None:
    """Write the initial bundle: for Video-MME's 12 task types, or those of --questions."""
    if out.exists() and not out.is_dir():
        raise SkillError(f"{out}: exists and is not a folder")
    if _looks_like_bundle(out) and not force:
        raise SkillError(f"{out}: already holds a bundle; pass --force to overwrite it")
    bundle = initial_bundle(_task_types(questions, benchmark) if questions is not None else None)
    bundle.save(out, prune=force)  # a stale skill file would silently join the bundle on its next load
    typer.echo(f"wrote {len(bundle.files())} files to {out}")
    typer.echo(f"bundle hash {bundle.bundle_hash}")


@bundle_app.command("check")
def check(
    folder: Annotated[Path, typer.Argument(help="Bundle folder.")],
    partial: Annotated[
        bool, typer.Option("--partial", help="Allow task types without a skill document.")
    ] = False,
    questions: QuestionsOption = None,
    benchmark: BenchmarkOption = DEFAULT_BENCHMARK,
) -> None:
    """Validate a bundle folder (a skill for each task type: Video-MME's, or --questions') and
    print its hashes."""
    bundle = _load(folder)
    task_types = _task_types(questions, benchmark)
    missing = bundle.missing_task_types(task_types)
    if missing and not partial:
        raise SkillError(f"{folder}: no skill document for {', '.join(missing)} (use --partial to allow)")
    _notes(folder, bundle, task_types, questions)
    console = Console()
    table = FitTable(
        f"{folder}  ·  bundle {bundle.bundle_hash[:16]}",
        [
            Col("skill", "left", wrap=True),
            Col("body chars"),
            Col("momentum chars"),
            Col("relevant hash", "left"),
        ],
    )
    for slug, doc in bundle.skills.items():
        table.add_row(slug, str(len(doc.body)), str(len(doc.momentum)), bundle.relevant_hash(slug)[:16])
    table.print(console)
    summary = f"ok: {len(bundle.skills)} skills, {len(bundle.tools)} tools"
    typer.echo(f"{summary}; bundle hash {bundle.bundle_hash}")


def _notes(folder: Path, bundle: Bundle, task_types: tuple[str, ...], questions: Path | None) -> None:
    """Say (on stderr) what the folder holds that the agent will never be shown."""
    stray = stray_skill_entries(folder)
    if stray:  # a skill in a subfolder, or saved as .txt or .MD, is silently not part of the bundle
        typer.secho(
            f"note: {len(stray)} entr{'y' if len(stray) == 1 else 'ies'} in {folder / SKILLS_DIR} never "
            f"read (only {SKILLS_DIR}/<slug>.md files are skills): {', '.join(stray)}",
            err=True,
            fg=typer.colors.YELLOW,
        )
    unused = sorted(set(bundle.skills) - {slugify(t) for t in task_types})
    if unused:  # a misnamed file, or a skill for another benchmark: the agent is never shown it
        typer.secho(
            f"note: {len(unused)} skill(s) for no task type of {questions or 'Video-MME'}, never shown to "
            f"the agent: {', '.join(unused)}",
            err=True,
            fg=typer.colors.YELLOW,
        )


@bundle_app.command("diff")
def diff(
    a: Annotated[Path, typer.Argument(help="Old bundle folder.")],
    b: Annotated[Path, typer.Argument(help="New bundle folder.")],
    plain: Annotated[bool, typer.Option("--plain", help="No colours.")] = False,
    context: Annotated[int, typer.Option("--context", min=0, help="Context lines around each change.")] = 3,
) -> None:
    """Print a unified diff per file between two bundles."""
    old, new = _load(a).files(), _load(b).files()
    console = Console(no_color=plain, highlight=False)
    changed = 0
    for rel in sorted(set(old) | set(new)):
        lines = list(
            difflib.unified_diff(
                old.get(rel, b"").decode("utf-8").splitlines(keepends=True),
                new.get(rel, b"").decode("utf-8").splitlines(keepends=True),
                fromfile=f"a/{rel}" if rel in old else "/dev/null",
                tofile=f"b/{rel}" if rel in new else "/dev/null",
                n=context,
            )
        )
        if lines:
            changed += 1
            for line in lines:
                console.print(_styled(line.rstrip("\n")), soft_wrap=True)
    typer.echo(f"{changed} file(s) differ" if changed else "bundles are identical")


@bundle_app.command("export")
def export(
    out: Annotated[Path, typer.Option("--out", help="File (prompt, json) or folder (skills) to write.")],
    fmt: Annotated[
        ExportFormat,
        typer.Option("--format", help="prompt: one text; skills: Agent Skills folder; json: texts, hashes."),
    ],
    source: Annotated[
        Path | None,
        typer.Argument(
            metavar="BUNDLE_DIR",
            help="Bundle folder, workspace version folder, or workspace (its current version).",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out.")] = False,
    config: Annotated[Path | None, typer.Option("--config", help="Experiment YAML (with --run).")] = None,
    run: Annotated[str | None, typer.Option("--run", help="A training run: export its final bundle.")] = None,
) -> None:
    """Write a bundle out of the harness: a prompt text, Agent Skills folder, or JSON with hashes."""
    bundle, label = _export_source(source, config, run)
    written = export_bundle(bundle, fmt, out, force=force, known=VIDEO_MME.task_types)
    what = f"{len(written)} files" if fmt is ExportFormat.SKILLS else "1 file"
    typer.echo(f"exported {label} as {fmt.value}: {what} at {out}")
    typer.echo(f"bundle hash {bundle.bundle_hash}")


def _export_source(source: Path | None, config: Path | None, run: str | None) -> tuple[Bundle, str]:
    if run is None:
        if source is None:
            raise ConfigError("name the bundle to export: a BUNDLE_DIR, or --config X --run R")
        if config is not None:
            raise ConfigError("--config is read only with --run: drop it, or name the run")
        return load_export_source(source)
    if source is not None or config is None:
        raise ConfigError("--run exports a training run's final bundle: give --config, and no BUNDLE_DIR")
    # Imported here: the run's final bundle is found through the store, which other bundle
    # commands never open. The same lookup (and the same checks) as ``skillharness eval --run``.
    from skillharness.commands.eval import _workspace_arm
    from skillharness.config import load_config

    arm = _workspace_arm(load_config(config), run)[1]
    return arm.bundle, arm.label


def _styled(line: str) -> Text:
    if line.startswith(("+++", "---")):
        return Text(line, style="bold")
    if line.startswith("@@"):
        return Text(line, style="cyan")
    if line.startswith("+"):
        return Text(line, style="green")
    if line.startswith("-"):
        return Text(line, style="red")
    return Text(line)


def register(app: typer.Typer) -> None:
    """Add the ``bundle`` command group to the root app."""
    app.add_typer(bundle_app, name="bundle")
