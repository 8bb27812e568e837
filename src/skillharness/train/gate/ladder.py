"""The ladder: the e-process fed in stages of growing size, with a decision after each stage.

Acceptance and harm are checked at every observation (stopping at the first crossing is valid by
Ville's inequality); the futility stop ``reject_inertia`` is checked at stage ends. It fires when
``K_n * (1 + cap)^(budget - n) < threshold``: every factor is at most ``1 + cap`` whatever the
strategy and the outcomes, so this is a sound upper bound on any wealth still achievable, and the
stop never discards a gate that could still accept. At the budget the bound is ``K_n`` itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
from numpy.typing import NDArray

from skillharness.errors import GateError
from skillharness.train.config import GateConfig
from skillharness.train.gate.bets import BetStrategy, make_bet_strategy
from skillharness.train.gate.eprocess import Outcome, WealthPaths, split_observations, wealth_paths
from skillharness.train.gate.reachability import Reachability, ensure_reachable

__all__ = ["Decision", "DecisionKind", "Ladder", "PathDecisions", "decide_paths", "stage_ends"]


class DecisionKind(IntEnum):
    """What the gate concluded; ``CONTINUE`` asks the caller for the next stage."""

    CONTINUE = 0
    ACCEPT = 1
    REJECT_EVIDENCE = 2
    REJECT_INERTIA = 3

    @property
    def label(self) -> str:
        """Lower-case name, as used in logs and reports (``reject_inertia``)."""
        return self.name.lower()


@dataclass(frozen=True)
class Decision:
    """A gate decision with the evidence it rests on (counts are up to the decision point)."""

    kind: DecisionKind
    wealth: float
    harm_wealth: float
    threshold: float
    n: int
    wins: int
    losses: int
    ties: int
    infra: int
    stage: int
    next_request: int

    @property
    def terminal(self) -> bool:
        """True for every kind but ``CONTINUE``."""
        return self.kind is not DecisionKind.CONTINUE


def stage_ends(first_stage: int, growth: float, budget: int) -> tuple[int, ...]:
    """Cumulative observation counts at which stages end: ``first, ceil(first*g), ...``, then ``budget``."""
    ends: list[int] = []
    end = min(first_stage, budget)
    while end < budget:
        ends.append(end)
        end = min(budget, max(end + 1, math.ceil(end * growth)))
    ends.append(budget)
    return tuple(ends)


@dataclass(frozen=True)
class PathDecisions:
    """Vectorized decisions: kind codes and the observation count each decision was taken at."""

    kinds: NDArray[np.int8]
    n_used: NDArray[np.int64]


def _first_crossing(wealth: NDArray[np.float64], thr: float) -> NDArray[np.int64]:
    """1-based observation index of the first crossing per run; a huge value when none."""
    hit = wealth[:, 1:] >= thr
    first = np.argmax(hit, axis=1) + 1
    return np.where(hit.any(axis=1), first, np.iinfo(np.int64).max)


def decide_paths(
    paths: WealthPaths, checkpoints: Sequence[int], thr: float, cap: float, budget: int
) -> PathDecisions:
    """Decide every run from its wealth paths; stages end at ``checkpoints`` (observation counts).

    A run whose data end before any crossing or futile checkpoint gets ``CONTINUE``.
    """
    runs, n = paths.up.shape[0], paths.up.shape[1] - 1
    cross_up = _first_crossing(paths.up, thr)
    cross_down = _first_crossing(paths.down, thr)
    never = np.iinfo(np.int64).max
    futile_at = np.full(runs, never, dtype=np.int64)
    for end in sorted(checkpoints, reverse=True):
        if end > n:
            continue
        bound = paths.up[:, end] * (1.0 + cap) ** (budget - end)
        futile_at = np.where(bound < thr, end, futile_at)
    crossing = np.minimum(cross_up, cross_down)
    kinds = np.zeros(runs, dtype=np.int8)
    kinds[cross_up < np.minimum(cross_down, futile_at + 1)] = DecisionKind.ACCEPT
    kinds[cross_down < np.minimum(cross_up, futile_at + 1)] = DecisionKind.REJECT_EVIDENCE
    inertia = (futile_at < crossing) & (futile_at != never)
    kinds[inertia] = DecisionKind.REJECT_INERTIA
    n_used = np.where(inertia, futile_at, np.where(crossing != never, crossing, n))
    return PathDecisions(kinds, n_used.astype(np.int64))
