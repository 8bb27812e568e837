"""Before a step evolves anything: drop the targets whose gate could not accept (audit P0-3).

Preflight checks each class at the first gate's level. With alpha spending the k-th gate of a
run gets a smaller level and needs more wins, so a class reachable at gate 1 can become
unreachable later in the run. Each step therefore screens its case packs *before* the evolve
calls, at the level of the gate each one would get:

- a target unreachable at the run's next gate (``gates_run + 1``) can never be accepted again
  (levels only shrink): it is *retired*, reported once (the step's row and the checkpoint name
  it) and never evolved again;
- a target reachable at the next gate but not at the last gate this step could give it (each
  earlier target of the step may run one gate first) is *deferred*: not evolved in this step,
  screened again in the next.

So no evolve call is ever paid for a gate that could only end in an "unreachable"
``reject_inertia``. The baseline rules (``gate.rule`` other than ``eprocess``) have no threshold
and are not screened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from skillharness.train.context import TrainContext
from skillharness.train.gate import Reachability
from skillharness.train.records import CasePack
from skillharness.train.scope import target_reachability

__all__ = ["Screened", "screen_packs"]


@dataclass(frozen=True)
class Screened:
    """The packs a step evolves, and the targets it leaves out with why."""

    packs: tuple[CasePack, ...]
    retired: dict[str, str] = field(default_factory=dict)  # newly unreachable for good
    deferred: dict[str, str] = field(default_factory=dict)  # unreachable at this step's worst case


def _why(reach: Reachability, gate_index: int) -> str:
    return (
        f"unreachable at gate {gate_index} (alpha {reach.alpha:.3g}): acceptance needs {reach.min_wins} "
        f"wins, only {reach.drawable} observations can be drawn"
    )


def screen_packs(
    ctx: TrainContext, packs: Sequence[CasePack], *, gates_run: int, retired: Mapping[str, object]
) -> Screened:
    """Keep the packs whose gate can accept at the level it will get; ``gates_run`` at step start."""
    if ctx.config.gate.rule != "eprocess":
        return Screened(tuple(packs))
    kept: list[CasePack] = []
    new_retired: dict[str, str] = {}
    deferred: dict[str, str] = {}
    for pack in packs:
        label = pack.target.label()
        if label in retired:
            continue
        now = target_reachability(ctx, pack.target, gates_run + 1)
        if not now.reachable:
            new_retired[label] = _why(now, gates_run + 1)
            continue
        worst_index = gates_run + len(kept) + 1  # every kept pack before it may run a gate first
        worst = target_reachability(ctx, pack.target, worst_index)
        if not worst.reachable:
            deferred[label] = _why(worst, worst_index)
            continue
        kept.append(pack)
    return Screened(tuple(kept), new_retired, deferred)
