"""A settings model's refusal told in the command's flags: the user typed flags, not fields."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from skillharness.util.model import validation_problems

__all__ = ["flag_problems"]


def flag_problems(
    exc: ValidationError,
    flags: Mapping[str, str] | None = None,
    *,
    given: Mapping[str, Any] | None = None,
    whole: str | None = None,
) -> str:
    """Each problem of ``exc`` named by the flag that set its field (``flags``, else ``--field-name``),
    with the value given when ``given`` holds it (``--alpha 2.0: ...``). A problem of the whole model
    is ``whole``'s; without ``whole``, a rule across settings names them in its text, and each name
    is swapped for its flag (``--guard-power (0.8) + --guard-clear (0.99) ...``)."""
    named = flags or {}
    parts = []
    for problem in validation_problems(exc):
        message = problem.message.removeprefix("Value error, ")
        name = str(problem.loc[0]) if problem.loc else whole
        if name is None:
            parts.append(re.sub(r"[a-z_]+", lambda word: named.get(word.group(0), word.group(0)), message))
            continue
        value = f" {given[name]}" if given is not None and name in given else ""
        parts.append(f"{named.get(name, '--' + name.replace('_', '-'))}{value}: {message}")
    return "; ".join(parts)
