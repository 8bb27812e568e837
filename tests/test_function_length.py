"""No function in ``src/`` is longer than 60 lines (issue #38), checked on the source.

A function's length runs from its ``def`` line to its last line (decorators not counted), so a
typer command's signature counts: name its options at module level instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "skillharness"
MAX_LINES = 60


def _too_long() -> list[str]:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_LINES:
                    offenders.append(f"{name}:{node.lineno} {node.name} ({length} lines)")
    return offenders


def test_no_function_is_over_60_lines() -> None:
    assert _too_long() == []
