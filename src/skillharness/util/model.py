"""The base for every typed boundary object, and the one way a failed validation becomes a message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["StrictModel", "ValidationProblem", "describe_validation", "validation_problems"]


class StrictModel(BaseModel):
    """Frozen pydantic model that rejects unknown keys (a typo is an error, not a default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class ValidationProblem:
    """One thing wrong with a validated value: where, what, and pydantic's error type."""

    loc: tuple[str | int, ...]
    message: str
    kind: str  # pydantic's error type, e.g. "extra_forbidden", "missing", "json_invalid"

    @property
    def where(self) -> str:
        """The dotted path of the faulty field (``edits.0.target``), ``<root>`` for the whole value."""
        return ".".join(str(part) for part in self.loc) or "<root>"

    def __str__(self) -> str:
        if self.kind == "extra_forbidden":
            return f"{self.where}: unknown key {str(self.loc[-1])!r}"
        return f"{self.where}: {self.message}"


def validation_problems(exc: ValidationError) -> list[ValidationProblem]:
    """The leaf problems of ``exc``, in pydantic's order.

    A container's error caused by a nested one (a union member, a list around a bad item) is left
    out: the nested error names the field the user has to fix.
    """
    errors = exc.errors(include_url=False)
    locs = [tuple(e["loc"]) for e in errors]
    problems = []
    for err in errors:
        loc = tuple(err["loc"])
        if any(len(other) > len(loc) and other[: len(loc)] == loc for other in locs):
            continue
        problems.append(ValidationProblem(loc, str(err["msg"]), str(err["type"])))
    return problems


def describe_validation(
    exc: ValidationError, *, limit: int | None = None, max_chars: int | None = None, sep: str = "; "
) -> str:
    """``exc`` as one line a user can act on: ``where: what`` per problem, the first ``limit`` only.

    ``max_chars`` bounds the text (a reply's refusal is stored and shown; a model can send megabytes).
    """
    problems: Sequence[ValidationProblem] = validation_problems(exc)
    shown = list(problems[:limit]) if limit is not None else list(problems)
    text = sep.join(str(p) for p in shown)
    if limit is not None and len(problems) > limit:
        text += f"{sep}... ({len(problems)} problems in all)"
    return text[:max_chars] if max_chars is not None else text
