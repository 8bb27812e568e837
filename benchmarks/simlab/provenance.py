"""Which code a benchmark's result was measured on.

A result names its commit so it can be re-run; a commit alone would mislead when the tree held
changes (the run measured code no commit holds), so those are named too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

# What a run writes into the tree while it runs; its own output does not make the code modified.
_OUTPUTS = ("benchmarks/results/",)


def code_state(root: Path) -> str:
    """``<commit>``, ``<commit>+modified`` (uncommitted changes outside the results folder), or
    ``unknown (not a git checkout)``."""
    head = _git(root, "rev-parse", "HEAD").strip()
    if not head:
        return "unknown (not a git checkout)"
    status = _git(root, "status", "--porcelain", "--untracked-files=no").splitlines()
    modified = any(not line[3:].startswith(_OUTPUTS) for line in status)  # "XY path"
    return f"{head}+modified" if modified else head


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    except FileNotFoundError:  # no git on the machine: the same as no checkout
        return ""
    # not stripped: a status line starts with a space when only the work tree changed
    return done.stdout if done.returncode == 0 else ""
