"""The ``skillharness`` command line: one typer app composed of one module per command group.

Each module in :mod:`skillharness.commands` owns its sub-commands; this file only wires them.
"""

from __future__ import annotations

import gc
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


# Command name -> the module in skillharness.commands that registers it (in help order).
_COMMANDS = {
    "experiment": "experiment",
    "split": "split",
    "gate": "gate",
    "bundle": "bundle",
    "cache": "cache",
    "data": "data",
    "frames": "frames",
    "sim": "sim",
    "infer": "infer",
    "runs": "runs",
    "demo": "demo",
    "templates": "templates",
    "preflight": "preflight",
    "train": "train",
    "diagnose": "diagnose",
    "eval": "eval",
    "compare": "compare",
    "report": "report",
}


def _register(argv: list[str] | None = None) -> None:
    """Register the command named first in ``argv``, or every command (for help, errors, tests).

    Importing only the invoked command's module keeps the others' imports (scipy, the simulator,
    the trainer) out of its start-up; imported here so `skillharness --version` stays fast and a
    broken group names itself.
    """
    import importlib

    named = argv[0] if argv else None
    modules = [_COMMANDS[named]] if named in _COMMANDS else list(_COMMANDS.values())
    for module in modules:
        importlib.import_module(f"skillharness.commands.{module}").register(app)


def main() -> None:
    """Console entry point: user errors print one clear message and exit 2, a file the system would
    not read or write (naming it) exits 1; never a traceback for either."""
    _register(sys.argv[1:2])
    # The modules just imported live as long as the process: a full collection during the command
    # (a pause in its event loop) need not walk them again.
    gc.freeze()
    try:
        _run()
    finally:
        # Every store, cache and file is closed by now; collecting what is left at exit (about 100,000
        # objects after an infer run, 0.2 s) only delays the user's prompt.
        gc.freeze()


def _run() -> None:
    try:
        code = app(standalone_mode=False)
    except SkillharnessError as exc:
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        sys.exit(2)
    except OSError as exc:
        if exc.filename is None:  # not about a path the user named: a bug to show in full
            raise
        # A read-only or full disk, a file where a folder must go, a permission: the path and the
        # system's reason are the whole message (exit 1: the environment, not the command line).
        paths = " -> ".join(str(p) for p in (exc.filename, exc.filename2) if p is not None)
        typer.secho(f"error: {paths}: {exc.strerror or exc}", err=True, fg=typer.colors.RED)
        sys.exit(1)
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
    # Without standalone mode typer *returns* an Exit's code instead of exiting. A command that
    # exits 130 (train, after Ctrl-C) has said so and how to resume: one line, not a second one.
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":
    main()
