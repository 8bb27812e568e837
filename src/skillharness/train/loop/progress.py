"""What a person sees while training runs: a live panel refreshed at every step and decision."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.table import Table

from skillharness.infer.session import RunSession
from skillharness.store import GateDecisionRow, RunStore
from skillharness.train.config import BudgetConfig
from skillharness.train.state.checkpoint import Checkpoint, Spent
from skillharness.train.state.context import TrainContext

__all__ = ["TrainProgress", "spent_of_budget"]


def spent_of_budget(spent: Spent, budget: BudgetConfig | None) -> str:
    """The run's spending against its budget, e.g. ``1,204 / 8,000 calls (15 %)``; over every
    invocation of the run, as the checkpoint keeps it."""
    limit = None if budget is None else budget.max_calls
    parts = [
        f"{spent.calls:,} / {limit:,} calls ({spent.calls / limit:.0%})"
        if limit
        else f"{spent.calls:,} calls"
    ]
    if budget is not None and budget.max_cost is not None:
        parts.append(f"cost {spent.cost:.4f} / {budget.max_cost:g}")
    if budget is not None and budget.max_wall_s is not None:
        parts.append(f"{spent.wall_s:.0f} / {budget.max_wall_s:.0f} s")
    return ", ".join(parts)


class TrainProgress:
    """A rich live table: epoch and step, decisions, open candidates, val EMA, calls by role, ETA."""

    def __init__(self, console: Console, *, run_id: str, epochs: int) -> None:
        self.console = console
        self.run_id = run_id
        self.epochs = epochs
        self.session: RunSession | None = None
        self.store: RunStore | None = None
        self.budget: BudgetConfig | None = None
        self._live = Live(console=console, refresh_per_second=4, transient=False)
        self._ckpt: Checkpoint | None = None
        self._steps = 0
        self._started = time.monotonic()
        self._steps_done = 0

    def on_start(self, ctx: TrainContext) -> None:
        self.session, self.store, self.budget = ctx.session, ctx.store, ctx.config.budget

    def on_step(self, ckpt: Checkpoint, steps_in_epoch: int) -> None:
        self._ckpt, self._steps = ckpt, steps_in_epoch
        self._live.update(self._render())

    def on_checkpoint(self, ckpt: Checkpoint) -> None:
        if self._ckpt is not None and (ckpt.epoch, ckpt.step) != (self._ckpt.epoch, self._ckpt.step):
            self._steps_done += 1
        self._ckpt = ckpt
        self._live.update(self._render())

    def _eta(self) -> str:
        if self._ckpt is None or not self._steps_done or not self._steps:
            return "-"
        per_step = (time.monotonic() - self._started) / self._steps_done
        left = (self.epochs - self._ckpt.epoch) * self._steps + max(self._steps - self._ckpt.step, 0)
        return f"{per_step * left:.0f} s (if every epoch runs)"

    def _reasons(self) -> str:
        if self.store is None:
            return "-"
        counts: dict[str, int] = {}
        for row in self.store.select(GateDecisionRow, train_run_id=self.run_id):
            counts[row.reason] = counts.get(row.reason, 0) + 1
        return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none yet"

    @staticmethod
    def _open(ckpt: Checkpoint) -> str:
        """Each open test: target, observations of its size, wealth (the strongest first)."""
        if not ckpt.open:
            return "none"
        ranked = sorted(ckpt.open, key=lambda o: (-o.wealth, o.key))
        shown = [f"{o.target} {len(o.observed)}/{o.n_max} w {o.wealth:.2g}" for o in ranked[:4]]
        more = f" (+{len(ranked) - 4} more)" if len(ranked) > 4 else ""
        return f"{len(ranked)}: " + "; ".join(shown) + more

    def _render(self) -> Table:
        table = Table(title=f"training {self.run_id}", show_header=False, expand=False)
        ckpt = self._ckpt
        if ckpt is not None:
            table.add_row("epoch / step", f"{ckpt.epoch}/{self.epochs} · step {ckpt.step + 1}/{self._steps}")
            table.add_row("incumbent", ckpt.version)
            table.add_row("decisions", self._reasons())
            table.add_row("budget", spent_of_budget(ckpt.spent, self.budget))
            table.add_row("alpha spent", f"{ckpt.alpha_spent:.3f} over {ckpt.gates_run} test(s) opened")
            table.add_row("open candidates", self._open(ckpt))
            ema = ", ".join(f"{t[:18]} {v:.2f}" for t, v in sorted(ckpt.ema.items()))
            table.add_row("val EMA", ema or "-")
        if self.session is not None:
            for role, used in self.session.usage().items():
                table.add_row(
                    f"calls: {role}",
                    f"{used['calls']:.0f} ({used['cache_hits']:.0f} cached), cost {used['cost']:.4f}",
                )
        table.add_row("ETA", self._eta())
        return table

    def __enter__(self) -> TrainProgress:
        self._live.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._live.__exit__(kind, exc, tb)
