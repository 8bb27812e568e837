"""Preflight's report: one row per check (or per problem), and the collector the checks write to.

A check ends in one of four states. ``fail`` is a problem to fix. ``skip`` means it could not run
(an earlier check failed, or what it asks did not answer): it was not verified, so preflight does
not pass, and the row says why. ``warn`` means it ran but could not verify everything (a server
without a model listing), and says what went unchecked; training may start. ``pass`` claims only
what was checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from skillharness.errors import SkillharnessError

__all__ = ["CHECKS", "CheckRow", "CheckStatus", "Collector", "PreflightReport", "Problem"]

CHECKS = (
    "templates",
    "roles",
    "data",
    "bundle",
    "gate",
    "eval",
    "endpoint",
    "model",
    "request",
    "seed",
    "store",
    "cache",
    "cache salt",
)


class CheckStatus(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


@dataclass(frozen=True)
class Problem:
    """One thing to fix before training can start."""

    check: str
    message: str


@dataclass(frozen=True)
class CheckRow:
    """One line of the report: a check's outcome and what it found (or one of its problems)."""

    check: str
    status: CheckStatus
    message: str


@dataclass(frozen=True)
class PreflightReport:
    """Every problem found, and what the checks without problems found (their summary lines)."""

    problems: tuple[Problem, ...]
    passed: tuple[CheckRow, ...]
    skipped: tuple[CheckRow, ...] = ()
    warned: tuple[CheckRow, ...] = ()

    @property
    def ok(self) -> bool:
        """No problem, and no check left unverified: a check that could not run never passes."""
        return not self.problems and not self.skipped

    def unverified(self) -> tuple[str, ...]:
        """Each problem and each check that could not run, as ``check: message`` lines."""
        skipped = (
            r.message if r.message.startswith("not run") else f"not run: {r.message}" for r in self.skipped
        )
        return tuple(f"{p.check}: {p.message}" for p in self.problems) + tuple(
            f"{r.check}: {why}" for r, why in zip(self.skipped, skipped, strict=True)
        )

    def rows(self) -> tuple[CheckRow, ...]:
        """Every row in check order (a failing check has one row per problem)."""
        failed = tuple(CheckRow(p.check, CheckStatus.FAIL, p.message) for p in self.problems)
        everything = (*self.passed, *self.warned, *failed, *self.skipped)
        return tuple(sorted(everything, key=lambda r: CHECKS.index(r.check)))


@dataclass
class Collector:
    """Problems and summaries as the checks produce them; each check ends in one state, the worst
    it reached (fail, then skip, then warn, then pass)."""

    problems: list[Problem] = field(default_factory=list)
    summaries: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    warnings: dict[str, str] = field(default_factory=dict)

    def run(self, check: str, body: Callable[[], str | None]) -> None:
        """Run one check: its return value summarizes a pass; a user error raised is its problem."""
        before = len(self.problems)
        try:
            summary = body()
        except SkillharnessError as exc:
            self.fail(check, str(exc))
            return
        if summary is None:
            self.skipped.setdefault(check, "needs a check that failed")
        elif len(self.problems) == before:
            self.summaries[check] = summary

    def fail(self, check: str, message: str) -> None:
        self.problems.append(Problem(check, message))

    def skip(self, check: str, why: str) -> None:
        """``check`` could not run, for the reason ``why``: never a pass."""
        self.skipped[check] = why

    def warn(self, check: str, message: str) -> None:
        """``check`` ran, but ``message`` names what it could not verify."""
        self.warnings[check] = message

    def report(self) -> PreflightReport:
        failed = {p.check for p in self.problems}
        skipped = {c: m for c, m in self.skipped.items() if c not in failed}
        warned = {c: m for c, m in self.warnings.items() if c not in failed and c not in skipped}
        passed = {c: m for c, m in self.summaries.items() if c not in failed | skipped.keys() | warned.keys()}
        return PreflightReport(
            problems=tuple(self.problems),
            passed=tuple(CheckRow(c, CheckStatus.PASS, m) for c, m in passed.items()),
            skipped=tuple(CheckRow(c, CheckStatus.SKIP, m) for c, m in skipped.items()),
            warned=tuple(CheckRow(c, CheckStatus.WARN, m) for c, m in warned.items()),
        )
