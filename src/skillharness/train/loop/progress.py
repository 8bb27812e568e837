"""What a person sees while training runs: a live panel refreshed at every step and decision on a
terminal; elsewhere (``nohup``, ``tee``, a batch scheduler's log) one plain line per step or
decision, flushed at once. A live panel on a file is drawn only when it stops: hours of silence."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.table import Table

from skillharness.infer import short_name
from skillharness.infer.session import RunSession
from skillharness.store import GateDecisionRow, RunStore
from skillharness.train.config import BudgetConfig
from skillharness.train.state.checkpoint import Checkpoint, Spent
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import decision_label, untested_calls

__all__ = ["TrainProgress", "decision_counts", "fit_parts", "spent_of_budget"]


def decision_counts(rows: Iterable[GateDecisionRow]) -> str:
    """Decisions by outcome, the tested ones first; proposals refused before any draw (and rank
    declines) after them, so half the gates never read as failing tests."""
    tested: Counter[str] = Counter()
    untested: Counter[str] = Counter()
    calls = 0
    for row in rows:
        label = decision_label(row.reason, row.evidence)
        (tested if label == row.reason else untested)[label] += 1
        calls += untested_calls(row.evidence)
    parts = [f"{k} {v}" for k, v in sorted(tested.items())]
    if untested:
        cost = f" ({calls} evolve calls)" if calls else ""
        parts.append("not tested: " + ", ".join(f"{k} {v}" for k, v in sorted(untested.items())) + cost)
    return "; ".join(parts) or "none yet"


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


def fit_parts(parts: list[str], width: int) -> str:
    """``parts`` joined by `` · `` in lines of at most ``width`` characters, broken only between
    parts (continuation lines indented), so a log read at 80 columns never wraps mid-word."""
    lines: list[str] = []
    line = ""
    for part in parts:
        joined = f"{line} · {part}" if line else part
        if len(joined) <= width or not line.strip():
            line = joined
        else:
            lines.append(line)
            line = f"  {part}"
    return "\n".join([*lines, line])


class TrainProgress:
    """A rich live table: epoch and step, decisions, open candidates, val EMA, calls by role, ETA."""

    def __init__(self, console: Console, *, run_id: str, epochs: int) -> None:
        self.console = console
        self.run_id = run_id
        self.epochs = epochs
        self.session: RunSession | None = None
        self.store: RunStore | None = None
        self.budget: BudgetConfig | None = None
        # Not a terminal: a live display would draw once, at its end, so plain lines instead.
        self._plain = not console.is_terminal
        self._live = Live(console=console, refresh_per_second=4, transient=False)
        self._said: list[str] | None = None
        self._ckpt: Checkpoint | None = None
        self._steps = 0
        self._started = time.monotonic()
        self._steps_done = 0

    def on_start(self, ctx: TrainContext) -> None:
        self.session, self.store, self.budget = ctx.session, ctx.store, ctx.config.budget

    def on_step(self, ckpt: Checkpoint, steps_in_epoch: int) -> None:
        # The loop's own copy of the checkpoint carries the spending of its last load; the saved
        # one (on_checkpoint) carries the run's, so a step never shows the calls going back.
        if self._ckpt is not None:
            ckpt = ckpt.model_copy(update={"spent": self._ckpt.spent})
        self._ckpt, self._steps = ckpt, steps_in_epoch
        self._show()

    def on_checkpoint(self, ckpt: Checkpoint) -> None:
        if self._ckpt is not None and (ckpt.epoch, ckpt.step) != (self._ckpt.epoch, self._ckpt.step):
            self._steps_done += 1
        self._ckpt = ckpt
        self._show()

    def _show(self) -> None:
        if not self._plain:
            self._live.update(self._render())
            return
        parts = self._parts()
        if parts is None or parts == self._said:  # a checkpoint that moved nothing shown says nothing
            return
        self._said = parts
        text = fit_parts([*parts, f"ETA {self._eta()}"], self.console.width)
        self.console.print(text, soft_wrap=True, markup=False, highlight=False)
        self.console.file.flush()  # a file or pipe is block-buffered: the line is for now

    def _parts(self) -> list[str] | None:
        """Where the run is, its decisions and its spending (ETA apart: it always moves)."""
        ckpt = self._ckpt
        if ckpt is None:
            return None
        return [
            f"train {self.run_id}",
            self._position(ckpt),
            ckpt.version,
            f"{ckpt.gates_run} tests, {ckpt.accepts} accepted",
            spent_of_budget(ckpt.spent, self.budget),
        ]

    def _position(self, ckpt: Checkpoint) -> str:
        """Epoch and step, never past their totals: the cursor names the *next* step, so it passes
        the last epoch when training is done, and evidence rounds after the planned steps (drain)
        are numbered on past them."""
        if ckpt.epoch > self.epochs:
            return f"epoch {self.epochs}/{self.epochs} done"
        where = f"epoch {ckpt.epoch}/{self.epochs}"
        if not self._steps:
            return where
        if ckpt.step >= self._steps:
            return f"{where} evidence round {ckpt.step - self._steps + 1}"
        return f"{where} step {ckpt.step + 1}/{self._steps}"

    def _eta(self) -> str:
        """Time left at the pace so far; unknown (never 0) while work remains that no step count
        measures (the first step, evidence rounds after the plan, the final val score)."""
        if self._ckpt is None or not self._steps_done or not self._steps:
            return "unknown"
        per_step = (time.monotonic() - self._started) / self._steps_done
        left = max(self.epochs - self._ckpt.epoch, 0) * self._steps + max(self._steps - self._ckpt.step, 0)
        if left <= 0:
            return "unknown"
        seconds = per_step * left  # as if every epoch runs (early stopping ends it sooner)
        return f"{seconds:.0f} s" if seconds >= 1 else "< 1 s"  # rounded to 0, it read as done

    def _reasons(self) -> str:
        if self.store is None:
            return "-"
        return decision_counts(self.store.select(GateDecisionRow, train_run_id=self.run_id))

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
            table.add_row("position", self._position(ckpt))
            table.add_row("incumbent", ckpt.version)
            table.add_row("decisions", self._reasons())
            table.add_row("budget", spent_of_budget(ckpt.spent, self.budget))
            table.add_row("alpha spent", f"{ckpt.alpha_spent:.3f} over {ckpt.gates_run} test(s) opened")
            table.add_row("open candidates", self._open(ckpt))
            ema = ", ".join(f"{short_name(t, 18)} {v:.2f}" for t, v in sorted(ckpt.ema.items()))
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
        if not self._plain:
            self._live.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._plain:
            self._live.__exit__(kind, exc, tb)
