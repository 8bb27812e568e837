"""The ``skillharness`` command line: one typer app composed of one module per command group.

Each module in :mod:`skillharness.commands` owns its sub-commands; this file only wires them.
"""

from __future__ import annotations

import sys

import typer

from skillharness import __version__
from skillharness.errors import SkillharnessError

app = typer.Typer(
    name="skillharness",
    help="Evolve a video-QA agent's skills; accept an edit only when a statistical gate says it helps.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """skillharness command line."""


def _register() -> None:
    # Imported here so `skillharness --version` stays fast and a broken group names itself.
    from skillharness.commands import bundle as bundle_cmd
    from skillharness.commands import cache as cache_cmd
    from skillharness.commands import data as data_cmd
    from skillharness.commands import demo as demo_cmd
    from skillharness.commands import diagnose as diagnose_cmd
    from skillharness.commands import eval as eval_cmd
    from skillharness.commands import frames as frames_cmd
    from skillharness.commands import gate as gate_cmd
    from skillharness.commands import infer as infer_cmd
    from skillharness.commands import preflight as preflight_cmd
    from skillharness.commands import report as report_cmd
    from skillharness.commands import runs as runs_cmd
    from skillharness.commands import sim as sim_cmd
    from skillharness.commands import split as split_cmd
    from skillharness.commands import templates as templates_cmd
    from skillharness.commands import train as train_cmd

    split_cmd.register(app)
    gate_cmd.register(app)
    bundle_cmd.register(app)
    cache_cmd.register(app)
    data_cmd.register(app)
    frames_cmd.register(app)
    sim_cmd.register(app)
    infer_cmd.register(app)
    runs_cmd.register(app)
    demo_cmd.register(app)
    templates_cmd.register(app)
    preflight_cmd.register(app)
    train_cmd.register(app)
    diagnose_cmd.register(app)
    eval_cmd.register(app)
    report_cmd.register(app)


def main() -> None:
    """Console entry point: user errors print one clear message and exit 2, never a traceback."""
    _register()
    try:
        code = app(standalone_mode=False)
    except SkillharnessError as exc:
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors: typer vendors click, so not click's classes
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        else:
            typer.secho(f"error: {exc.format_message()}", err=True, fg=typer.colors.RED)
        sys.exit(exc.exit_code)
    # Without standalone mode typer *returns* an Exit's code (Ctrl-C becomes 130) instead of exiting.
    if isinstance(code, int) and code:
        if code == 130:
            typer.secho("interrupted", err=True, fg=typer.colors.YELLOW)
        sys.exit(code)


if __name__ == "__main__":
    main()
