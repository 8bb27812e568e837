"""When training must stop cleanly: the run's budget (calls, cost, wall time) and the stop file.

The budget is one number for the run. What earlier invocations spent comes from the checkpoint
(:class:`~skillharness.train.state.checkpoint.Spent`); this invocation adds its own, so any number of
``--resume`` spends the budget once. The check runs before every unit that spends calls (a step,
a ladder stage, a guard stage, an epoch-end test, a part of the val scores), never inside
one: a stop always leaves a checkpoint that a resume continues exactly, and a run overshoots by at
most the one unit it was in. Ctrl-C and SIGTERM arrive as cancellation and are handled by the
runner. Outside the budget (neither counted nor stopped): the preflight probes, the seed check at a
run's first start and the holdout eval after training (docs/train.md, "Stopping").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from skillharness.errors import RunError
from skillharness.infer.session import RunSession
from skillharness.train.config import BudgetConfig
from skillharness.train.state.checkpoint import Spent

__all__ = ["BUDGET_REASONS", "StopGuard", "TrainingStopped"]

# The stop reasons that mean the budget ran out (a stop file or a signal is not one).
BUDGET_REASONS = frozenset({"max_calls", "max_cost", "max_wall"})


class TrainingStopped(RunError):
    """Training stopped at a clean point (budget or stop file); the checkpoint is resumable."""

    @property
    def budget(self) -> bool:
        """The budget ran out (not a stop file)."""
        return self.context.get("reason") in BUDGET_REASONS


@dataclass
class StopGuard:
    budget: BudgetConfig
    session: RunSession
    stop_file: Path | None = None
    before: Spent = field(default_factory=Spent)  # spent by the run's earlier invocations
    started: float = field(default_factory=time.monotonic)

    def spent(self) -> Spent:
        """The run's spending so far: earlier invocations' plus this one's model calls (cache hits
        excluded, failed attempts included), cost, wall time and usage by role."""
        summary = self.session.usage()
        calls = int(sum(role.get("calls", 0) - role.get("cache_hits", 0) for role in summary.values()))
        cost = float(sum(role.get("cost", 0.0) for role in summary.values()))
        return self.before.plus(calls, cost, time.monotonic() - self.started, summary)

    def limits(self) -> dict[str, float | None]:
        """The budget as shown beside what is spent (None: no limit)."""
        return {
            "calls": self.budget.max_calls,
            "cost": self.budget.max_cost,
            "wall_s": self.budget.max_wall_s,
        }

    def check(self) -> None:
        """Raise :class:`TrainingStopped` naming the limit reached, if any."""
        if self.stop_file is not None and self.stop_file.exists():
            raise TrainingStopped(f"stop file {self.stop_file} found", reason="stop_file")
        spent = self.spent()
        if self.budget.max_calls is not None and spent.calls >= self.budget.max_calls:
            raise TrainingStopped(
                f"call budget reached ({spent.calls} ≥ {self.budget.max_calls}, every invocation of the run)",
                reason="max_calls",
            )
        if self.budget.max_cost is not None and spent.cost >= self.budget.max_cost:
            raise TrainingStopped(
                f"cost budget reached ({spent.cost:.4f} ≥ {self.budget.max_cost})", reason="max_cost"
            )
        if self.budget.max_wall_s is not None and spent.wall_s >= self.budget.max_wall_s:
            raise TrainingStopped(
                f"wall-time budget reached ({spent.wall_s:.0f} s ≥ {self.budget.max_wall_s:.0f} s)",
                reason="max_wall",
            )
