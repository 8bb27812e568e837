"""Predictable bet strategies: the bet on observation ``t`` is a function of observations ``< t``.

A strategy is a one-method protocol, ``bets(d) -> lam``. ``d`` is an integer array of shape
``(runs, n)`` holding observations ``d in {-1, 0, +1}``; ``lam`` has the same shape, lies in
``[0, cap]``, and ``lam[:, t]`` may depend on ``d[:, :t]`` only (a property test pins this). Computing
all bets of a sequence at once keeps simulations of thousands of gates vectorized. The harm
process uses the same strategy on ``-d``.

Both strategies start at the cap, so the all-wins path bets the cap throughout and reaches the
bound ``(1 + cap)^n`` that reachability and the futility stop use: reachability is exact for them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from skillharness.errors import ConfigError

__all__ = ["AGrapa", "BetStrategy", "OnlineNewtonStep", "WithoutReplacement", "make_bet_strategy"]

# aGRAPA prior: one pseudo-discordant pair with edge 1/2, so the first bet is min(1/2, cap) = cap.
_PRIOR_WEIGHT = 1.0
_PRIOR_EDGE = 0.5
# ONS step constant 2 / (2 - ln 3) for bets in [-1/2, 1/2] (Cutkosky & Orabona 2018).
_ONS_STEP = 2.0 / (2.0 - math.log(3.0))
_MAX_CAP = 0.5


class BetStrategy(Protocol):
    """Maps each run's observations to the predictable bets placed on them."""

    @property
    def cap(self) -> float:
        """Largest bet."""
        ...

    def bets(self, d: NDArray[np.int8]) -> NDArray[np.float64]:
        """Return ``lam`` with ``lam[:, t]`` in ``[0, cap]`` computed from ``d[:, :t]`` only."""
        ...


def _check_cap(cap: float) -> None:
    # Above 1/2 the ONS step constant is wrong and, past 1, a loss would make wealth negative.
    if not 0.0 < cap <= _MAX_CAP:
        raise ConfigError(f"a bet cap must be in (0, {_MAX_CAP}], got {cap}", field="gate.bet_cap")


def _shift(counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Counts over ``d[:, :t]`` from inclusive cumulative counts over ``d[:, :t+1]``."""
    out = np.zeros_like(counts)
    out[..., 1:] = counts[..., :-1]
    return out


@dataclass(frozen=True)
class AGrapa:
    """Approximate GRAPA: the plug-in growth-optimal (Kelly) bet ``mean(d) / mean(d^2)``.

    For ``d in {-1, 0, +1}`` that ratio is ``(W - L) / (W + L)`` over past wins ``W`` and losses
    ``L``, which is also the exact Kelly bet ``(p+ - p-) / (p+ + p-)`` with plug-in rates. Ties
    cancel, so they change neither wealth nor bets. With a small prior it reads
    ``clip((W - L + 1/2) / (W + L + 1), 0, cap)``.
    """

    cap: float = 0.5

    def __post_init__(self) -> None:
        _check_cap(self.cap)

    def bets(self, d: NDArray[np.int8]) -> NDArray[np.float64]:
        """Return ``clip((W_t - L_t + 1/2) / (W_t + L_t + 1), 0, cap)`` with counts over ``d[:, :t]``."""
        wins = _shift(np.cumsum(d > 0, axis=-1))
        losses = _shift(np.cumsum(d < 0, axis=-1))
        edge = (wins - losses + _PRIOR_EDGE * _PRIOR_WEIGHT) / (wins + losses + _PRIOR_WEIGHT)
        return np.clip(edge, 0.0, self.cap)


@dataclass(frozen=True)
class OnlineNewtonStep:
    """Online Newton step on the log-wealth loss, projected onto ``[0, cap]``.

    ``z_s = d_s / (1 + lam_s d_s)``, ``A_s = 1 + sum_{r<=s} z_r^2``,
    ``lam_{s+1} = clip(lam_s + 2/(2 - ln 3) * z_s / A_s, 0, cap)``, ``lam_1 = cap``.
    Ties give ``z = 0`` and leave the bet unchanged.
    """

    cap: float = 0.5

    def __post_init__(self) -> None:
        _check_cap(self.cap)

    def bets(self, d: NDArray[np.int8]) -> NDArray[np.float64]:
        """Run the ONS recursion along each row; one pass over the columns."""
        lam = np.full(d.shape[:-1], self.cap, dtype=np.float64)
        second_moment = np.ones(d.shape[:-1], dtype=np.float64)
        out = np.empty(d.shape, dtype=np.float64)
        for t in range(d.shape[-1]):
            out[..., t] = lam
            z = d[..., t] / (1.0 + lam * d[..., t])
            second_moment += z * z
            lam = np.clip(lam + _ONS_STEP * z / second_moment, 0.0, self.cap)
        return out


@dataclass(frozen=True)
class WithoutReplacement:
    """Any strategy, made valid for draws without replacement from a finite set (temperature 0).

    Drawn without replacement, the next observation's conditional mean is
    ``(N * mu - S) / (N - t + 1)`` where ``S`` is the sum so far: under the null ``mu <= 0`` it is
    at most 0 whenever ``S >= 0``, but can be positive after a net loss. A bet placed only while
    ``S >= 0`` keeps every factor's conditional mean at most 1, so the wealth stays a
    supermartingale (docs/gate.md, "Validity in both modes"). aGRAPA already bets 0 after a net
    loss, so for it this wrapper changes nothing; ONS does not, and needs it.
    """

    inner: BetStrategy

    @property
    def cap(self) -> float:
        return self.inner.cap

    def bets(self, d: NDArray[np.int8]) -> NDArray[np.float64]:
        d = np.asarray(d)
        past = np.cumsum(d, axis=-1, dtype=np.int64) - d  # sum over d[:, :t]
        return np.where(past >= 0, self.inner.bets(d), 0.0)


def make_bet_strategy(name: str, cap: float) -> BetStrategy:
    """Build the strategy named in ``GateConfig.bet_strategy``."""
    if name == "agrapa":
        return AGrapa(cap)
    if name == "ons":
        return OnlineNewtonStep(cap)
    raise ConfigError(f"unknown bet strategy {name!r}; expected 'agrapa' or 'ons'", field="gate.bet_strategy")
