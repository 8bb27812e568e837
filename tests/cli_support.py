"""Run the real ``skillharness`` command line in a subprocess, as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


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
