"""Which val classes a gate draws from, which the McNemar guard checks, and the gate's budget.

A skill edit changes the text of one class only (its skill document), so it is gated on that
class and nothing else needs guarding. A system-prompt or tool edit changes what the agent sees
on every class: it is gated on the trained classes pooled, and the guard then checks every class
with val questions, trained or not (a micro class left out of training still answers with the
edited system prompt and tools).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from skillharness.data import Question
from skillharness.skills import Bundle, EditTarget
from skillharness.store import content_hash
from skillharness.train.gate import Reachability, best_gate_alpha, gate_alpha, reachability
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import draw_temperature, gate_budget

__all__ = ["GateScope", "gate_scope", "scope_hash", "scope_pool", "target_reachability"]


@dataclass(frozen=True)
class GateScope:
    """Which classes a gate draws from, and which the McNemar guard checks afterwards."""

    label: str
    classes: tuple[str, ...]
    guard_classes: tuple[str, ...]


def gate_scope(ctx: TrainContext, target: EditTarget) -> GateScope:
    """The gated classes of ``target`` and the classes its guard checks (see the module doc)."""
    if target.kind == "skill":
        known = (*ctx.task_types, *ctx.val_by_type)
        task_type = next((t for t in known if EditTarget.skill(t).name == target.name), target.name or "")
        return GateScope(target.label(), (task_type,), ())
    classes = tuple(t for t in ctx.task_types if t in ctx.val_by_type)
    guarded = tuple(ctx.val_by_type) if ctx.config.gate.guard_draws != 0 else ()
    return GateScope(target.label(), classes, guarded)


def scope_hash(ctx: TrainContext, bundle: Bundle, target: EditTarget) -> str:
    """What the classes a test of ``target`` draws and guards see of ``bundle``: the test is valid,
    and its incumbent's samples shareable, while it holds."""
    scope = gate_scope(ctx, target)
    classes = sorted({*scope.classes, *scope.guard_classes})
    return content_hash([bundle.relevant_hash(t) for t in classes])


def scope_pool(ctx: TrainContext, classes: Sequence[str], evidence: Collection[str] = ()) -> list[Question]:
    """The val questions of ``classes`` a gate may draw, minus the case pack's ``evidence``."""
    return [q for t in classes for q in ctx.val_by_type.get(t, ()) if q.question_id not in evidence]


def target_reachability(
    ctx: TrainContext, target: EditTarget, gate_index: int, *, accepts: int = 0, best: bool = False
) -> Reachability:
    """Whether ``target``'s gate, as the run's gate number ``gate_index`` with ``accepts`` accepts
    before it, could accept at all; ``best``: as any gate from ``gate_index`` on, whatever accepts
    come first (they raise the level under ``elond`` only).

    The same numbers :func:`skillharness.train.validate.paired_gate.validate` checks (its draw plan's budget,
    the spent level of that gate), computed before anything is spent. The case pack's evidence
    questions are train questions, never val ones, so they do not change the budget.
    """
    gate = ctx.config.gate
    distinct = len({q.question_id for q in scope_pool(ctx, gate_scope(ctx, target).classes)})
    budget = gate_budget(
        distinct, temperature=draw_temperature(ctx.session.agent_config.sampling), n_max=gate.n_max
    )
    level = (
        best_gate_alpha(gate.alpha, gate.alpha_spending, gate_index)
        if best
        else gate_alpha(gate.alpha, gate.alpha_spending, gate_index, accepts=accepts)
    )
    return reachability(level, gate.bet_cap, budget, gate.n_candidates)
