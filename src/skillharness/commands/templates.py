"""``skillharness templates check | export | show``: the training loop's prompt templates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillharness.commands.folders import ensure_folder
from skillharness.errors import TemplateError
from skillharness.train.roles.prompt_specs import TEMPLATE_SPECS
from skillharness.train.roles.templates import check_templates, load_templates, packaged_prompts
from skillharness.util.atomic import atomic_write_files

templates_app = typer.Typer(
    help="Check, export and preview the training prompt templates.", no_args_is_help=True
)

_FOLDER_HELP = "Prompt folder (default: the packaged templates)."


@templates_app.command("check")
def check(
    folder: Annotated[Path | None, typer.Argument(help=_FOLDER_HELP)] = None,
) -> None:
    """Load every template and render it with sample values; list every problem."""
    problems = check_templates(folder)
    if problems:
        for problem in problems:
            typer.echo(f"- {problem}", err=True)
        raise TemplateError(f"{len(problems)} problem(s) with the prompt templates", problems=problems)
    loaded = load_templates(folder)
    for name in loaded.names:
        typer.echo(f"ok  {name:<20} {loaded.spec(name).role.value:<12} {loaded.template_hash(name)[:12]}")


@templates_app.command("export")
def export(
    out: Annotated[Path, typer.Option("--out", help="Folder to copy the packaged templates into.")],
    force: Annotated[bool, typer.Option("--force", help="Overwrite template files already there.")] = False,
) -> None:
    """Copy the packaged templates into a folder to edit (then set train.prompts_dir to it)."""
    entries = [e for e in packaged_prompts().iterdir() if e.name.endswith(".md") and e.is_file()]
    clashes = sorted(e.name for e in entries if (out / e.name).exists())
    if clashes and not force:
        raise TemplateError(f"{out}: already holds {', '.join(clashes)}; pass --force to overwrite them")
    ensure_folder(out, "--out")
    atomic_write_files({out / entry.name: entry.read_bytes() for entry in entries})
    typer.echo(f"wrote {len(entries)} template files to {out}")


@templates_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help=f"One of: {', '.join(sorted(TEMPLATE_SPECS))}.")],
    folder: Annotated[Path | None, typer.Option("--folder", help=_FOLDER_HELP)] = None,
) -> None:
    """Print a template rendered with its sample values (what the model would read)."""
    rendered = load_templates(folder).render(
        name, TEMPLATE_SPECS[name].sample() if name in TEMPLATE_SPECS else {}
    )
    typer.echo(f"=== system ({rendered.role.value})\n{rendered.system}\n\n=== user\n{rendered.user}")


def register(app: typer.Typer) -> None:
    """Add the ``templates`` command group to the root app."""
    app.add_typer(templates_app, name="templates")
