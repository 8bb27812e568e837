"""What the demo prints after training: the simulator's truth beside every measured number."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.markup import escape

from skillharness.commands.fit_table import Col, FitTable
from skillharness.config import Config
from skillharness.data import Pool
from skillharness.sim import SimServer
from skillharness.skills import Workspace
from skillharness.store import GateDecisionRow, RunReader
from skillharness.train import TrainOutcome

__all__ = ["gap_closed", "print_demo_truth"]


def gap_closed(initial: float, final: float, best: float) -> float:
    """Share of the initial-to-oracle-best gap that training closed (nan when there is no gap)."""
    gap = best - initial
    return (final - initial) / gap if gap > 1e-12 else float("nan")


def print_demo_truth(
    console: Console,
    sim: SimServer,
    outcome: TrainOutcome,
    pools: Mapping[str, Sequence[str]],
    settings: Config,
) -> dict[str, dict[str, float]]:
    """The oracle's expected accuracy of the initial, final and oracle-best bundles per pool."""
    ws = Workspace.open(outcome.workspace)
    initial, final = ws.load("v0000"), ws.load(outcome.checkpoint.version)
    best = sim.oracle.best_bundle(initial)
    table = FitTable(
        "simulator truth (the oracle's expected accuracy; a simulator, not a real model)",
        [Col(column) for column in ("pool", "initial", "final", "oracle-best", "gap closed")],
    )
    truth: dict[str, dict[str, float]] = {}
    for pool in (Pool.VAL, Pool.TEST):
        ids = list(pools[pool])
        row = {
            "initial": sim.oracle.expected_accuracy(initial, ids),
            "final": sim.oracle.expected_accuracy(final, ids),
            "best": sim.oracle.expected_accuracy(best, ids),
        }
        row["closed"] = gap_closed(row["initial"], row["final"], row["best"])
        truth[pool] = row
        table.add_row(
            pool, f"{row['initial']:.1%}", f"{row['final']:.1%}", f"{row['best']:.1%}", f"{row['closed']:.0%}"
        )
    table.print(console)
    with RunReader(settings.store) as reader:
        decisions = reader.ledger(GateDecisionRow, train_run_id=outcome.run_id)
    accepted = [d for d in decisions if d.reason == "accept"]
    counts: dict[str, int] = {}
    for d in decisions:
        counts[d.reason] = counts.get(d.reason, 0) + 1
    console.print("decisions: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    # The evidence is free text: it wraps at the console's width, whole (never cut mid-word).
    edits = FitTable(
        f"accepted edits ({len(accepted)})",
        [
            Col("version", "left"),
            Col("target", "left", wrap=True),
            Col("evidence", "left", wrap=True),
            Col("true effect on val"),
        ],
    )
    for d in accepted:
        before = sim.oracle.expected_accuracy(ws.load(d.version_before), list(pools[Pool.VAL]))
        after = sim.oracle.expected_accuracy(
            ws.load(d.version_after or d.version_before), list(pools[Pool.VAL])
        )
        evidence = d.detail.removeprefix(f"{d.target}: ")
        edits.add_row(d.version_after or "-", d.target, escape(evidence), f"{after - before:+.1%}")
    edits.print(console)
    return truth
