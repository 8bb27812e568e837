"""The betting e-process on paired outcomes, and what counts as an observation.

``d = correct(candidate) - correct(incumbent)`` on one drawn question. The evidence for
"candidate better" is the wealth ``K_t = prod_{s<=t} (1 + lam_s d_s)``; the mirror process
``prod (1 - mu_s d_s)`` (the same strategy fed ``-d``) is the evidence for harm. With bets in
``[0, cap]`` and ``cap <= 1/2`` every factor is in ``[1 - cap, 1 + cap]``, so wealth stays
positive, and under ``E[d] <= 0`` it is a non-negative supermartingale: by Ville's inequality
``P(sup_t K_t >= 1/alpha) <= alpha``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from skillharness.errors import GateError
from skillharness.train.gate.bets import BetStrategy

__all__ = ["INFRA", "PairedOutcome", "WealthPaths", "split_observations", "to_observation", "wealth_paths"]


class _Infra:
    """Marker for an outcome the infrastructure could not produce (either prediction missing)."""

    def __repr__(self) -> str:
        return "INFRA"


INFRA: Final = _Infra()


@dataclass(frozen=True)
class PairedOutcome:
    """Correctness of candidate and incumbent on the same draw; ``None`` means no prediction."""

    candidate: bool | None
    incumbent: bool | None

    @property
    def d(self) -> int | None:
        """``+1`` win, ``-1`` loss, ``0`` tie, ``None`` when either side is INFRA."""
        if self.candidate is None or self.incumbent is None:
            return None
        return int(self.candidate) - int(self.incumbent)


Outcome = PairedOutcome | int | None | _Infra


def to_observation(outcome: Outcome) -> int | None:
    """Normalize one outcome to ``d in {-1, 0, 1}``, or ``None`` for INFRA (not an observation)."""
    if outcome is None or outcome is INFRA:
        return None
    if isinstance(outcome, PairedOutcome):
        return outcome.d
    # Booleans (Python or numpy) are correctness, not a difference: refused, never read as a win.
    if isinstance(outcome, bool | np.bool_) or outcome not in (-1, 0, 1):
        raise GateError(f"an observation must be -1, 0, +1, None or a PairedOutcome, got {outcome!r}")
    return int(outcome)


def split_observations(outcomes: Iterable[Outcome]) -> tuple[list[int], int]:
    """Return the observations in order and the number of INFRA outcomes skipped."""
    observed: list[int] = []
    infra = 0
    for outcome in outcomes:
        d = to_observation(outcome)
        if d is None:
            infra += 1
        else:
            observed.append(d)
    return observed, infra


@dataclass(frozen=True)
class WealthPaths:
    """Wealth of both processes after each observation (column 0 is the start, 1.0) and the bets."""

    up: NDArray[np.float64]
    down: NDArray[np.float64]
    bets_up: NDArray[np.float64]
    bets_down: NDArray[np.float64]


def wealth_paths(d: NDArray[np.int8], strategy: BetStrategy) -> WealthPaths:
    """Run the evidence process and its harm mirror over ``d`` of shape ``(runs, n)``."""
    d = np.asarray(d, dtype=np.int8)
    bets_up = strategy.bets(d)
    bets_down = strategy.bets(-d)
    start = np.ones((d.shape[0], 1))
    up = np.concatenate([start, np.cumprod(1.0 + bets_up * d, axis=1)], axis=1)
    down = np.concatenate([start, np.cumprod(1.0 - bets_down * d, axis=1)], axis=1)
    return WealthPaths(up, down, bets_up, bets_down)
