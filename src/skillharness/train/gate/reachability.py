"""Can a gate accept at all? Decided before any evolution cost is spent (audit P0-3).

Every factor of the wealth is at most ``1 + cap`` (a win at the largest bet); ties and losses
never raise it. So after ``n`` observations ``K_n <= (1 + cap)^n`` for any predictable strategy,
and acceptance needs at least ``min_wins = ceil(log(threshold) / log(1 + cap))`` wins, hence at
least that many drawable observations. With ``cap = 1/2`` and ``alpha = 0.05``:
``1.5^7 = 17.1 < 20 <= 25.6 = 1.5^8``, so 8. The built-in strategies start at the cap, so an
unbroken run of ``min_wins`` wins does accept: the bound is attained.

Multiple testing: ``m`` candidates tested on the same val data use the threshold ``m / alpha``
(a union bound over their e-processes); the run's level rule (:mod:`.levels`) gives test ``k``
its level ``alpha_k``, which under ``elond`` also depends on the run's accepts before it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skillharness.errors import ConfigError
from skillharness.train.config import GateConfig
from skillharness.train.gate.levels import gate_alpha

__all__ = [
    "Reachability",
    "ensure_reachable",
    "gate_alpha",
    "last_reachable_gate",
    "min_net_wins",
    "min_wins",
    "reachability",
    "reachability_for",
    "threshold",
]


_EXACT_WINS_LIMIT = 1_000_000
_GATE_SEARCH_LIMIT = 1 << 40  # far past any run: a gate index above it counts as "every gate"


def threshold(alpha: float, n_candidates: int = 1) -> float:
    """E-value threshold ``m / alpha`` for ``m`` candidates tested on the same data."""
    return n_candidates / alpha


def min_wins(threshold_value: float, bet_cap: float) -> int:
    """Fewest wins ``w`` with ``(1 + bet_cap)^w >= threshold_value`` (exact at float boundaries).

    The power is taken factor by factor, as ``np.cumprod`` computes the wealth of an all-wins
    path; ``pow`` can differ from that product in the last bit, and then a gate declared
    reachable with ``w`` wins would not accept after ``w`` wins.
    """
    if threshold_value <= 1.0:
        return 0
    estimate = math.ceil(math.log(threshold_value) / math.log1p(bet_cap))
    if estimate > _EXACT_WINS_LIMIT:
        return estimate  # far beyond any observation budget: the last bit cannot matter
    factor, wealth, wins = 1.0 + bet_cap, 1.0, 0
    while wealth < threshold_value:
        wealth *= factor
        wins += 1
    return wins


def min_net_wins(*, alpha: float, bet_cap: float, n_candidates: int = 1) -> int:
    """Fewest wins (with no losses: net wins) a gate at level ``alpha`` needs; 8 at 0.05 and 1/2.

    It is also the fewest drawable observations with which acceptance is possible at all.
    """
    return min_wins(threshold(alpha, n_candidates), bet_cap)


def _max_wealth(bet_cap: float, drawable: int) -> float:
    try:
        return (1.0 + bet_cap) ** drawable
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class Reachability:
    """Whether a gate with ``drawable`` observations can ever reach its threshold."""

    alpha: float
    threshold: float
    bet_cap: float
    drawable: int
    min_wins: int
    max_wealth: float

    @property
    def reachable(self) -> bool:
        """True when an all-wins run of the drawable observations reaches the threshold."""
        return self.drawable >= self.min_wins


def reachability(alpha: float, bet_cap: float, drawable: int, n_candidates: int = 1) -> Reachability:
    """Pure reachability check for one gate; ``alpha`` is this gate's (possibly spent) level."""
    thr = threshold(alpha, n_candidates)
    return Reachability(
        alpha=alpha,
        threshold=thr,
        bet_cap=bet_cap,
        drawable=drawable,
        min_wins=min_wins(thr, bet_cap),
        max_wealth=_max_wealth(bet_cap, drawable),
    )


def reachability_for(
    config: GateConfig, drawable: int, gate_index: int = 1, *, accepts: int = 0
) -> Reachability:
    """Reachability of test ``gate_index`` of a run under ``config``, with ``accepts`` accepts
    before it (``elond`` only); the budget caps ``drawable``."""
    level = gate_alpha(config.alpha, config.alpha_spending, gate_index, accepts=accepts)
    return reachability(level, config.bet_cap, min(drawable, config.n_max), config.n_candidates)


def ensure_reachable(
    config: GateConfig, drawable: int, *, gate_index: int = 1, accepts: int = 0, label: str = "gate"
) -> Reachability:
    """Refuse, before any cost is spent, a gate that could never accept."""
    result = reachability_for(config, drawable, gate_index, accepts=accepts)
    if not result.reachable:
        raise ConfigError(
            f"{label}: acceptance is unreachable: it needs at least {result.min_wins} wins "
            f"(threshold {result.threshold:g}, bet cap {result.bet_cap:g}) but only {result.drawable} "
            "observations can be drawn; enlarge the val pool or budget, or exclude this class",
            label=label,
            drawable=result.drawable,
            min_wins=result.min_wins,
            threshold=result.threshold,
        )
    return result


def last_reachable_gate(config: GateConfig, drawable: int, *, accepts: int = 0) -> int | None:
    """The last gate index of a run at which ``drawable`` observations can still accept.

    0: not even the first gate can; None: every gate can (no alpha spending, or a budget so large
    that the search limit is passed). With ``accepts`` fixed the level only shrinks with the index,
    so the gates that can accept are exactly ``1 .. last``. Under ``elond`` the answer assumes no
    accept besides ``accepts``: each further accept raises the later levels and moves it later.
    """
    if not reachability_for(config, drawable, 1, accepts=accepts).reachable:
        return 0
    if config.alpha_spending == "none":
        return None
    low, high = 1, 2
    while reachability_for(config, drawable, high, accepts=accepts).reachable:
        if high >= _GATE_SEARCH_LIMIT:
            return None
        low, high = high, high * 2
    while high - low > 1:  # reachable at low, not at high
        mid = (low + high) // 2
        reachable = reachability_for(config, drawable, mid, accepts=accepts).reachable
        low, high = (mid, high) if reachable else (low, mid)
    return low
