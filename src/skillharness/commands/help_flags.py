"""Boolean flags read as flags in ``--help``.

typer 0.29's rich help panel prints every option's type, flags included (``--json <bool>``), so a
flag looks as if it took a value; its plain formatter already leaves the type off flags and
counters. This applies the plain formatter's rule to the rich panel: a flag or counter shows no
type. One patch of one method, applied once when the commands package is imported.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption

__all__ = ["show_flags_as_flags"]

_MARK = "_skillharness_flags_as_flags"


def show_flags_as_flags() -> None:
    """Make typer's rich help omit the type of flags and counters (idempotent)."""
    typed = TyperOption.display_type_rich
    if getattr(typed, _MARK, False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        return typed(self, ctx)

    setattr(display_type_rich, _MARK, True)
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
