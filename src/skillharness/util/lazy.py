"""Package surfaces that import their modules on first use.

``skillharness.train`` and ``skillharness.eval`` offer many names from heavy modules (the loop, the
gate, the holdout report), while ``skillharness.config`` needs only their config classes. With an
eager ``__init__`` every ``skillharness infer`` paid for importing training before its first call.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def public_order(name: str) -> tuple[bool, str]:
    """Constants first, then the rest by name: the order of every ``__all__`` in the package."""
    return (not name.isupper(), name)


def lazy_surface(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[list[str], Callable[[str], object]]:
    """``__all__`` and a module ``__getattr__`` for ``package``: each name of ``exports`` (module ->
    names) is imported from its module when first read, then kept on the package."""
    home = {name: module for module, names in exports.items() for name in names}

    def attribute(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return sorted(home, key=public_order), attribute
