"""Before a step evolves anything: drop the targets whose gate could not accept (audit P0-3).

Preflight checks each class at the first gate's level. With alpha spending the k-th gate of a
run gets a smaller level and needs more wins, so a class reachable at gate 1 can become
unreachable later in the run. Each step therefore screens its case packs *before* the evolve
calls, at the level of the gate each one would get:

- a target unreachable at every gate from the run's next one (``gates_run + 1``) on can never be
  accepted again: it is *retired*, reported once (the step's row and the checkpoint name it) and
  never evolved again. Under ``basel`` and ``geometric`` the levels only shrink, so that is the
  next gate's level; under ``elond`` an accept raises the later levels, so it is the highest level
  any later test can get (:func:`~skillharness.train.gate.best_gate_alpha`);
- a target reachable then, but not at the next gate with the run's accepts so far (``elond``), or
  not at the last gate this step could give it (each earlier target of the step may run one gate
  first, with no accept in between), is *deferred*: not evolved in this step, screened again in
  the next.

So no evolve call is ever paid for a gate that could only end in an "unreachable"
``reject_inertia``. The baseline rules (``gate.rule`` other than ``eprocess``) have no threshold
and are not screened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from skillharness.train.gate import Reachability
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import CasePack
from skillharness.train.validate.scope import target_reachability

__all__ = ["Screened", "screen_packs"]


@dataclass(frozen=True)
class Screened:
    """The packs a step evolves, and the targets it leaves out with why."""

    packs: tuple[CasePack, ...]
    retired: dict[str, str] = field(default_factory=dict)  # newly unreachable for good
    deferred: dict[str, str] = field(default_factory=dict)  # unreachable at this step's worst case


def _why(reach: Reachability, where: str) -> str:
    return (
        f"unreachable {where} (alpha {reach.alpha:.3g}): acceptance needs {reach.min_wins} "
        f"wins, only {reach.drawable} observations can be drawn"
    )


def screen_packs(
    ctx: TrainContext,
    packs: Sequence[CasePack],
    *,
    gates_run: int,
    retired: Mapping[str, object],
    accepts: int = 0,
) -> Screened:
    """Keep the packs whose gate can accept at the level it will get; ``gates_run`` and
    ``accepts`` (the run's accepts, which raise the levels under ``elond``) at step start."""
    if ctx.config.gate.rule != "eprocess":
        return Screened(tuple(packs))
    elond = ctx.config.gate.alpha_spending == "elond"
    kept: list[CasePack] = []
    new_retired: dict[str, str] = {}
    deferred: dict[str, str] = {}
    after = f" with {accepts} accept(s) before it" if elond else ""
    for pack in packs:
        label, target, index = pack.target.label(), pack.target, gates_run + 1
        if label in retired:
            continue
        ever = target_reachability(ctx, target, index, best=True)
        if not ever.reachable:
            where = f"at any gate from {index} on, whatever accepts come" if elond else f"at gate {index}"
            new_retired[label] = _why(ever, where)
            continue
        now = target_reachability(ctx, target, index, accepts=accepts)
        if not now.reachable:  # elond only: a later accept raises the level
            deferred[label] = _why(now, f"at gate {index}{after}")
            continue
        worst_index = gates_run + len(kept) + 1  # every kept pack before it may run a gate first
        worst = target_reachability(ctx, target, worst_index, accepts=accepts)
        if not worst.reachable:
            deferred[label] = _why(worst, f"at gate {worst_index}{after}")
            continue
        kept.append(pack)
    return Screened(tuple(kept), new_retired, deferred)
