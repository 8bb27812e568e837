"""What the demo prints after training: the simulator's scored truth beside every measured number.

The scored truth is the probability that the harness scores an answer right on the demo's agent
path (misread questions, unparsed answers and plans over the step limit included): what the
measured accuracies estimate. Gap closure is read on the intended-letter accuracy, what the
insights training adds are worth, which no answer shape or step limit touches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.markup import escape

from skillharness.commands.fit_table import Col, FitTable
from skillharness.config import Config
from skillharness.data import Pool
from skillharness.eval import agent_path
from skillharness.sim import AgentPath, BundleText, SimServer
from skillharness.skills import Bundle, EditTarget, Workspace
from skillharness.store import GateDecisionRow, RunReader
from skillharness.train import TrainOutcome, decision_counts

__all__ = ["gap_closed", "print_demo_truth"]


def gap_closed(initial: float, final: float, best: float) -> float:
    """Share of the initial-to-oracle-best gap that training closed (nan when there is no gap)."""
    gap = best - initial
    return (final - initial) / gap if gap > 1e-12 else float("nan")


def _pool_truth(
    sim: SimServer, bundles: Mapping[str, Bundle | BundleText], ids: list[str], path: AgentPath
) -> dict[str, float]:
    """Scored truth of each bundle on ``ids``, and the gap closed on the intended-letter accuracy."""
    row = {name: sim.oracle.expected_accuracy(b, ids, path) for name, b in bundles.items()}
    intended = {name: sim.oracle.intended_accuracy(b, ids) for name, b in bundles.items()}
    row["closed"] = gap_closed(intended["initial"], intended["final"], intended["best"])
    return row


def print_demo_truth(
    console: Console,
    sim: SimServer,
    outcome: TrainOutcome,
    pools: Mapping[str, Sequence[str]],
    settings: Config,
) -> dict[str, dict[str, float]]:
    """The scored truth of the initial, final and oracle-best bundles per pool, and the edits'."""
    ws = Workspace.read(outcome.workspace)
    initial, final = ws.load("v0000"), ws.load(outcome.checkpoint.version)
    bundles = {"initial": initial, "final": final, "best": sim.oracle.best_bundle(initial)}
    path = AgentPath(**agent_path(settings.agent))
    table = FitTable(
        "scored truth (the oracle's probability that the harness scores an answer right; a simulator, "
        "not a real model); gap closed: on the intended letter",
        [Col(column) for column in ("pool", "initial", "final", "oracle-best", "gap closed")],
    )
    truth: dict[str, dict[str, float]] = {}
    for pool in (Pool.VAL, Pool.TEST):
        row = truth[pool] = _pool_truth(sim, bundles, list(pools[pool]), path)
        table.add_row(
            pool, f"{row['initial']:.1%}", f"{row['final']:.1%}", f"{row['best']:.1%}", f"{row['closed']:.0%}"
        )
    table.print(console)
    with RunReader(settings.store) as reader:
        decisions = reader.ledger(GateDecisionRow, train_run_id=outcome.run_id)
    accepted = [d for d in decisions if d.reason == "accept"]
    console.print("decisions: " + decision_counts(decisions))
    # The evidence is free text: it wraps at the console's width, whole (never cut mid-word).
    edits = FitTable(
        f"accepted edits ({len(accepted)})",
        [
            Col("version", "left"),
            Col("target", "left", wrap=True),
            Col("evidence", "left", wrap=True),
            Col("scored truth Δ"),
        ],
    )
    for d in accepted:
        scope = edit_scope(sim, d.target, pools[Pool.VAL])
        before = sim.oracle.expected_accuracy(ws.load(d.version_before), scope, path)
        after = sim.oracle.expected_accuracy(ws.load(d.version_after or d.version_before), scope, path)
        evidence = d.detail.removeprefix(f"{d.target}: ")
        edits.add_row(d.version_after or "-", d.target, escape(evidence), points(after - before))
    edits.print(console)
    if accepted:
        console.print("scored truth Δ: on the edit's class for a skill, all val otherwise")
    return truth


def edit_scope(sim: SimServer, target: str, val: Sequence[str]) -> list[str]:
    """The val questions an edit's true effect is read on: its class for a skill, all val otherwise
    (the report's ``true Δ`` reads the same ones, so the two print one number)."""
    reached = EditTarget.parse(target)
    return [q for q in val if reached.reaches(sim.oracle.world.question(q).task_type)]


def points(delta: float) -> str:
    """A difference of two accuracies, in percentage points (as the report writes it)."""
    return f"{100 * delta:+.1f} pt"
