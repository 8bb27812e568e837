"""Seeded Monte Carlo of whole gates: how often a rule accepts, harm-rejects or stalls."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from skillharness.errors import ConfigError
from skillharness.train.gate.ladder import DecisionKind
from skillharness.train.gate.rules import GateRule

__all__ = ["MAX_OBSERVATIONS", "SimulationSummary", "draw_observations", "simulate"]

# Observations one simulation draws, over all its gates: about a minute of work. Beyond it a
# mistyped budget (10^6) would run for hours instead of being refused.
MAX_OBSERVATIONS = 1 << 28
_CHUNK = 1 << 22  # observations drawn and decided at once (about 230 MB)


def draw_observations(
    p_plus: float, p_minus: float, runs: int, n: int, rng: np.random.Generator
) -> NDArray[np.int8]:
    """I.i.d. paired observations: ``+1`` w.p. ``p_plus``, ``-1`` w.p. ``p_minus``, else a tie."""
    if p_plus < 0 or p_minus < 0 or p_plus + p_minus > 1:
        raise ConfigError(
            f"need p_plus, p_minus >= 0 and p_plus + p_minus <= 1, got {p_plus}, {p_minus}",
            field="p_plus/p_minus",
        )
    u = rng.random((runs, n))
    d = np.zeros((runs, n), dtype=np.int8)
    d[u < p_plus] = 1
    d[(u >= p_plus) & (u < p_plus + p_minus)] = -1
    return d


@dataclass(frozen=True)
class SimulationSummary:
    """Outcome rates over ``runs`` simulated gates."""

    rule: str
    p_plus: float
    p_minus: float
    runs: int
    accept_rate: float
    harm_reject_rate: float
    inertia_rate: float
    mean_observations: float

    def accept_margin(self, z: float = 3.0) -> float:
        """``z`` binomial standard errors of the accept rate at ``p = accept_rate`` (Monte Carlo noise)."""
        p = self.accept_rate
        return z * float(np.sqrt(max(p * (1 - p), 1e-12) / self.runs))


def simulate(
    rule: GateRule, p_plus: float, p_minus: float, *, n: int, runs: int = 5000, seed: int = 0
) -> SimulationSummary:
    """Run ``runs`` gates of ``rule`` on ``n`` drawn observations each (seeded, vectorized)."""
    if runs < 1 or n < 1:
        raise ConfigError(f"runs and n must be >= 1, got runs={runs}, n={n}", field="runs/n")
    if runs * n > MAX_OBSERVATIONS:
        raise ConfigError(
            f"{runs} simulated gates of {n} observations each ({runs * n:,}) are more than the "
            f"{MAX_OBSERVATIONS:,} one simulation draws; fewer gates or a smaller budget",
            field="runs/n",
        )
    rng = np.random.default_rng(seed)
    # A chunk of gates at a time bounds the memory (about 55 bytes an observation, all at once 37 GiB
    # at n = 10^6); the generator draws the same numbers in order however the rows are chunked.
    rows = max(1, _CHUNK // n)
    kinds, used = [], []
    for start in range(0, runs, rows):
        result = rule.run(draw_observations(p_plus, p_minus, min(rows, runs - start), n, rng))
        kinds.append(result.kinds)
        used.append(result.n_used)
    all_kinds = np.concatenate(kinds)
    return SimulationSummary(
        rule=rule.name,
        p_plus=p_plus,
        p_minus=p_minus,
        runs=runs,
        accept_rate=float(np.mean(all_kinds == DecisionKind.ACCEPT)),
        harm_reject_rate=float(np.mean(all_kinds == DecisionKind.REJECT_EVIDENCE)),
        inertia_rate=float(np.mean(all_kinds == DecisionKind.REJECT_INERTIA)),
        mean_observations=float(np.mean(np.concatenate(used))),
    )
