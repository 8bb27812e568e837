"""The eval layer's public surface is deliberate and pinned, and it imports only downward."""

from __future__ import annotations

import ast
from pathlib import Path

import skillharness.eval as ev

EVAL_SOURCES = Path(ev.__file__).parent


def test_public_surface_is_sorted_and_importable() -> None:
    assert ev.__all__ == sorted(ev.__all__, key=lambda name: (not name.isupper(), name))
    for name in ev.__all__:
        assert getattr(ev, name) is not None
    assert {"run_holdout", "HoldoutReport", "compare_val_holdout", "count_test_pool_runs"} <= set(ev.__all__)


def test_the_eval_layer_never_imports_the_command_line() -> None:
    for path in EVAL_SOURCES.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("skillharness.commands", "skillharness.cli")), path.name


def test_every_eval_config_field_is_documented() -> None:
    for name, field in ev.EvalConfig.model_fields.items():
        assert field.description, name
