"""The ``skillharness`` command line in tests: in a subprocess as a user runs it, or one command
group in process (``command_app``, for ``typer.testing.CliRunner``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import typer


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m skillharness.cli ARGS``; output captured as text, never raising on exit codes."""
    return subprocess.run(
        [sys.executable, "-m", "skillharness.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def command_app(*register: Callable[[typer.Typer], None]) -> typer.Typer:
    """A root app holding only the given command groups (each a ``commands.<name>.register``).

    The whole CLI would import every command's dependencies; the root's callback keeps a single
    group a sub-command (``["bundle", "init"]``), as in the real CLI.
    """
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Test root."""

    for add in register:
        add(root)
    return root
