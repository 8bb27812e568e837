"""Each layer's public surface is its ``__all__``: no module imports another layer's private name.

Layers are the packages below. A module may import its own layer's private modules. Importing
from another layer's submodule (``from skillharness.store.records import RunKind``) is allowed
only for a name that layer re-exports in ``__all__`` (the same object); importing the submodule
itself, or any other name, crosses the boundary. Imports inside functions count too.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "skillharness"
LAYERS = ("data", "video", "llm", "agent", "store", "skills", "train", "eval", "sim", "infer")


def _layer_of(path: Path) -> str | None:
    parts = path.relative_to(SRC).parts
    return parts[0] if len(parts) > 1 and parts[0] in LAYERS else None


def _target(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "skillharness" and parts[1] in LAYERS else None


def _public(layer: str, module: str, name: str) -> bool:
    package = importlib.import_module(f"skillharness.{layer}")
    if name not in getattr(package, "__all__", ()):
        return False
    source = importlib.import_module(module)
    return getattr(source, name, None) is getattr(package, name)


def _crossings(path: Path) -> Iterator[str]:
    yield from _crossings_in(
        path.read_text(encoding="utf-8"), _layer_of(path), str(path.relative_to(SRC.parent))
    )


def _crossings_in(source: str, own: str | None, where: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            layer = _target(node.module)
            if layer is None or layer == own:
                continue
            for alias in node.names:
                if not _public(layer, node.module, alias.name):
                    yield f"{where}:{node.lineno}: from {node.module} import {alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                layer = _target(alias.name)
                if layer is not None and layer != own and alias.name.count(".") > 1:
                    yield f"{where}:{node.lineno}: import {alias.name}"


def test_every_layer_declares_its_public_names() -> None:
    for layer in LAYERS:
        package = importlib.import_module(f"skillharness.{layer}")
        exported = getattr(package, "__all__", None)
        assert exported is not None, f"skillharness.{layer} has no __all__"
        missing = [name for name in exported if not hasattr(package, name)]
        assert not missing, f"skillharness.{layer}.__all__ names what it does not define: {missing}"


def test_no_module_imports_a_name_another_layer_does_not_export() -> None:
    found = [crossing for path in sorted(SRC.rglob("*.py")) for crossing in _crossings(path)]
    assert not found, "imports of names outside the target layer's __all__:\n  " + "\n  ".join(found)


def test_the_check_sees_private_imports_and_allows_public_ones() -> None:
    source = (
        "from skillharness.store.engine import parse_store_url\n"
        "from skillharness.store import RunKind\n"
        "from skillharness.store.records import RunKind as Kind\n"
        "from skillharness.store.writer import _open_run\n"
        "def later():\n"
        "    import skillharness.store.migrations\n"
    )
    assert list(_crossings_in(source, "train", "probe.py")) == [
        "probe.py:1: from skillharness.store.engine import parse_store_url",
        "probe.py:4: from skillharness.store.writer import _open_run",
        "probe.py:6: import skillharness.store.migrations",
    ]
    assert list(_crossings_in(source, "store", "probe.py")) == [], "a layer may use its own private modules"
