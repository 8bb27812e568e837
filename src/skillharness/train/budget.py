"""When training must stop cleanly: the budget (calls, cost, wall time) and the stop file.

Checked between decisions, never inside one: a stop always leaves a checkpoint that a resume
continues exactly. Ctrl-C and SIGTERM arrive as cancellation and are handled by the runner.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from skillharness.errors import RunError
from skillharness.infer.session import RunSession
from skillharness.train.config import BudgetConfig

__all__ = ["StopGuard", "TrainingStopped"]


class TrainingStopped(RunError):
    """Training stopped at a clean point (budget or stop file); the checkpoint is resumable."""


@dataclass
class StopGuard:
    budget: BudgetConfig
    session: RunSession
    stop_file: Path | None = None
    started: float = field(default_factory=time.monotonic)

    def usage(self) -> tuple[int, float]:
        """Model calls (cache hits excluded) and cost of every role so far in this invocation."""
        summary = self.session.usage()
        calls = int(sum(role.get("calls", 0) - role.get("cache_hits", 0) for role in summary.values()))
        cost = float(sum(role.get("cost", 0.0) for role in summary.values()))
        return calls, cost

    def check(self) -> None:
        """Raise :class:`TrainingStopped` naming the limit reached, if any."""
        if self.stop_file is not None and self.stop_file.exists():
            raise TrainingStopped(f"stop file {self.stop_file} found", reason="stop_file")
        calls, cost = self.usage()
        if self.budget.max_calls is not None and calls >= self.budget.max_calls:
            raise TrainingStopped(
                f"call budget reached ({calls} ≥ {self.budget.max_calls})", reason="max_calls"
            )
        if self.budget.max_cost is not None and cost >= self.budget.max_cost:
            raise TrainingStopped(
                f"cost budget reached ({cost:.4f} ≥ {self.budget.max_cost})", reason="max_cost"
            )
        elapsed = time.monotonic() - self.started
        if self.budget.max_wall_s is not None and elapsed >= self.budget.max_wall_s:
            raise TrainingStopped(
                f"wall-time budget reached ({elapsed:.0f} s ≥ {self.budget.max_wall_s:.0f} s)",
                reason="max_wall",
            )
