"""Every command's ``--help`` at 80 columns: flags read as flags, and no line is wider than 80."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer
from typer.testing import CliRunner

from skillharness import cli

_WIDTH = 80
# A type shown after a flag (`--json <bool>`, `--force BOOLEAN`): the flag looks as if it took a value.
_TYPED = re.compile(r"(?:<bool(?:ean)?>|\bBOOLEAN\b)", re.IGNORECASE)


def _full_app() -> typer.Typer:
    """The real root app with every command group registered (once per process)."""
    if not cli.app.registered_commands and not cli.app.registered_groups:
        cli._register()
    return cli.app


def _paths(command: object, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield prefix
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not getattr(sub, "hidden", False):
            yield from _paths(sub, (*prefix, name))


def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(
        _full_app(), [*path, "--help"], env={"COLUMNS": str(_WIDTH), "TERMINAL_WIDTH": str(_WIDTH)}
    )
    assert result.exit_code == 0, (path, result.output)
    return result.output


def _flags(command: object) -> list[str]:
    return [
        opt
        for param in getattr(command, "params", [])
        if getattr(param, "is_flag", False)
        for opt in (*param.opts, *param.secondary_opts)
    ]


def _every_command() -> list[tuple[str, ...]]:
    return list(_paths(typer.main.get_command(_full_app())))


@pytest.mark.slow
def test_every_help_shows_flags_as_flags_within_80_columns() -> None:
    root = typer.main.get_command(_full_app())
    paths = _every_command()
    assert len(paths) > 20  # the walk reached the sub-commands, not only the root
    checked_flags = 0
    for path in paths:
        command = root
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        text = _help(path)
        wide = [line for line in text.splitlines() if len(line.rstrip()) > _WIDTH]
        assert not wide, (path, wide)
        assert not _TYPED.search(text), (path, text)
        for flag in _flags(command):
            shown = [line for line in text.splitlines() if re.search(rf"{re.escape(flag)}(?![\w-])", line)]
            assert shown, (path, flag)
            after = shown[0].split(flag, 1)[1]
            assert not re.match(r"\s+<", after), (path, flag, shown[0])
            checked_flags += 1
    assert checked_flags > 10
