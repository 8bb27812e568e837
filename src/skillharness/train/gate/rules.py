"""Acceptance rules behind one protocol, so the benchmark compares them on the same draws.

A rule sees a matrix of pre-drawn observations ``d`` of shape ``(runs, n)``, uses a prefix of each
row, and returns a decision per run. Our e-process ladder is one rule; two baselines from the
field sit next to it: "strictly better on a minibatch of 3" (GEPA-style) and "mean difference
above 2 standard errors at a fixed n" (cap-evolve-style).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from skillharness.train.config import GateConfig
from skillharness.train.gate.bets import BetStrategy, make_bet_strategy
from skillharness.train.gate.eprocess import wealth_paths
from skillharness.train.gate.ladder import DecisionKind, PathDecisions, decide_paths, stage_ends
from skillharness.train.gate.levels import gate_alpha
from skillharness.train.gate.reachability import threshold

__all__ = ["EProcessGate", "FixedNStandardError", "GateRule", "StrictlyBetterMinibatch"]


class GateRule(Protocol):
    """A gate decision rule over pre-drawn paired observations."""

    @property
    def name(self) -> str:
        """Label used in reports."""
        ...

    def run(self, d: NDArray[np.int8]) -> PathDecisions:
        """Decide each row of ``d`` (shape ``(runs, n)``), using as few columns as the rule needs."""
        ...


@dataclass(frozen=True)
class EProcessGate:
    """Our gate: the betting e-process on a ladder, with harm mirror and futility stop."""

    config: GateConfig = field(default_factory=GateConfig)
    gate_index: int = 1
    name: str = "e-process ladder"
    accepts: int = 0  # the run's accepts before this test (the ``elond`` level rule only)

    @property
    def strategy(self) -> BetStrategy:
        """The configured bet strategy."""
        return make_bet_strategy(self.config.bet_strategy, self.config.bet_cap)

    @property
    def threshold(self) -> float:
        """Accept threshold ``m / alpha_k``."""
        gate = self.config
        level = gate_alpha(gate.alpha, gate.alpha_spending, self.gate_index, accepts=self.accepts)
        return threshold(level, self.config.n_candidates)

    def run(self, d: NDArray[np.int8]) -> PathDecisions:
        """Decide on the first ``min(n_max, columns)`` observations of each row."""
        budget = min(self.config.n_max, d.shape[1])
        paths = wealth_paths(d[:, :budget], self.strategy)
        ends = stage_ends(self.config.first_stage, self.config.stage_growth, budget)
        return decide_paths(paths, ends, self.threshold, self.config.bet_cap, budget)


@dataclass(frozen=True)
class StrictlyBetterMinibatch:
    """GEPA-style: accept when the candidate scores strictly more on a minibatch of ``size``."""

    size: int = 3
    name: str = "strictly better on 3"

    def run(self, d: NDArray[np.int8]) -> PathDecisions:
        """Accept if the minibatch sum is positive, harm-reject if negative, else inertia."""
        total = d[:, : self.size].sum(axis=1, dtype=np.int64)
        return _from_signs(total, min(self.size, d.shape[1]))


@dataclass(frozen=True)
class FixedNStandardError:
    """cap-evolve-style: accept when the mean difference exceeds ``z`` standard errors at fixed n."""

    n: int = 64
    z: float = 2.0
    name: str = "mean > 2 SE at fixed n"

    def run(self, d: NDArray[np.int8]) -> PathDecisions:
        """Compare ``mean(d)`` with ``z * sd(d) / sqrt(n)`` on the first ``n`` observations."""
        sample = d[:, : self.n].astype(np.float64)
        n = sample.shape[1]
        mean = sample.mean(axis=1)
        se = sample.std(axis=1, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(mean)
        score = np.where(mean > self.z * se, 1, np.where(mean < -self.z * se, -1, 0))
        return _from_signs(score, n)


def _from_signs(score: NDArray[np.int64], n_used: int) -> PathDecisions:
    kinds = np.full(score.shape, DecisionKind.REJECT_INERTIA, dtype=np.int8)
    kinds[score > 0] = DecisionKind.ACCEPT
    kinds[score < 0] = DecisionKind.REJECT_EVIDENCE
    return PathDecisions(kinds, np.full(score.shape, n_used, dtype=np.int64))
