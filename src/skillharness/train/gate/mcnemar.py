"""McNemar harm guard: one exact test at the end of a gate, on classes the edit touches but does not target.

Only discordant pairs carry information. Under "the candidate is not worse on this class",
a discordant pair is a loss with probability at most 1/2, so the one-sided p-value for harm is
``P(Binomial(wins + losses, 1/2) >= losses)``. It is a fixed-sample test: run it once per gate,
never on growing data (repeated looks would inflate its error). Several classes are combined
with Holm's step-down procedure, which bounds the chance of any false harm flag by the level.

Power (:func:`mcnemar_power`): a harm ``h`` at discordance ``r`` means ``p_minus = (r + h) / 2``
(candidate wrong, incumbent right) and ``p_plus = (r - h) / 2``. Of ``n`` paired draws,
``D ~ Binomial(n, r)`` are discordant and, given ``D``, the losses are
``Binomial(D, p_minus / r)``; the power is exact, summed over ``D``. One harmed class among
``m`` guarded ones is flagged by Holm when its p-value is at most ``alpha / m`` (it then ranks
first), so the guard is sized at that level: a lower bound on its power.

Clearing (:func:`harm_cleared`): sampling a class stops early when its draws make the planned
harm implausible, whatever the class's discordance. A harm ``h`` is a mean paired difference
``d`` (+1 a win, -1 a loss, 0 a tie) of at most ``-h``, at any discordance, so the wealth
``prod(1 + lam (d + h))`` of a fixed bet ``lam`` in ``[0, 1 / (1 - h))`` is a nonnegative
supermartingale under every such harm; by Ville's inequality a harmed class is ever cleared (the
wealth reaching ``1 / bound``), however often it is looked at, with probability at most ``bound``.
The discordance only picks the bet (the Kelly bet against "no change" there): a wrong one clears
harmless classes more slowly, never a harmed one more often. (A ratio of loss shares among the
discordant pairs, the earlier rule, assumes the discordance: a harmed class whose discordance is
larger than the planned one has a loss share nearer 1/2, and at 0.6 against a planned 0.3 was
cleared 53 % of the time.) A cleared class enters Holm with p-value 1: Holm is monotone, so
clearing never adds a harm flag, and the level is unchanged. The power drops by at most
``bound``, which the guard's size adds back (:func:`skillharness.train.gate.guard_draws_per_class`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from skillharness.errors import GateError

__all__ = [
    "McNemarResult",
    "clearing_bet",
    "harm_cleared",
    "mcnemar_draws",
    "mcnemar_guard",
    "mcnemar_harm_p",
    "mcnemar_power",
]


def mcnemar_harm_p(wins: int, losses: int) -> float:
    """Exact one-sided p-value that the candidate is worse, from discordant counts."""
    from scipy.stats import binom  # deferred: scipy.stats is most of a command's start-up

    if wins < 0 or losses < 0:
        raise GateError(f"counts must be non-negative, got wins={wins}, losses={losses}")
    discordant = wins + losses
    if discordant == 0:
        return 1.0
    return float(binom.sf(losses - 1, discordant, 0.5))


def clearing_bet(harm: float, discordance: float) -> float:
    """The clearing bet: about the Kelly bet on ``d + harm`` when the edit changes nothing at
    ``discordance`` (its mean over its second moment); below ``1 / (1 + harm)``, so a loss never
    takes more than that share of the wealth."""
    return harm / (max(discordance, harm) + harm * harm)


def harm_cleared(wins: int, losses: int, ties: int, *, harm: float, discordance: float, bound: float) -> bool:
    """Whether ``(wins, losses, ties)`` clear a class of a ``harm`` drop at any discordance: the
    wealth of :func:`clearing_bet` (picked for ``discordance``) against that drop has reached
    ``1 / bound`` (see the module docstring)."""
    if wins < 0 or losses < 0 or ties < 0:
        raise GateError(f"counts must be non-negative, got wins={wins}, losses={losses}, ties={ties}")
    if not 0 < discordance <= 1 or not 0 < harm < 1 or not 0 < bound < 1:
        raise GateError(
            f"need 0 < discordance <= 1, 0 < harm < 1 and 0 < bound < 1; got harm={harm}, "
            f"discordance={discordance}, bound={bound}"
        )
    bet = clearing_bet(harm, discordance)
    log_wealth = (
        wins * math.log1p(bet * (1 + harm))
        + losses * math.log1p(-bet * (1 - harm))
        + ties * math.log1p(bet * harm)
    )
    return log_wealth >= -math.log(bound)


@dataclass(frozen=True)
class McNemarResult:
    """The guard's verdict for one class."""

    label: str
    wins: int
    losses: int
    p_value: float
    harmed: bool


def mcnemar_guard(
    counts: Mapping[str, tuple[int, int]], alpha: float = 0.05, *, cleared: Collection[str] = ()
) -> tuple[McNemarResult, ...]:
    """Test each class's ``(wins, losses)`` for harm; Holm-adjusted at level ``alpha``.

    A ``cleared`` class stopped early (:func:`harm_cleared`): its counts end at a data-chosen
    time, so they give no exact p-value, and it enters Holm with p-value 1."""
    p_values = {
        label: 1.0 if label in cleared else mcnemar_harm_p(w, lo) for label, (w, lo) in counts.items()
    }
    harmed: set[str] = set()
    for rank, label in enumerate(sorted(p_values, key=p_values.__getitem__)):
        if p_values[label] > alpha / (len(p_values) - rank):
            break
        harmed.add(label)
    return tuple(
        McNemarResult(label, w, lo, p_values[label], label in harmed) for label, (w, lo) in counts.items()
    )


def _critical_losses(discordant: np.ndarray, alpha: float) -> np.ndarray:
    """Fewest losses among ``discordant`` pairs with a harm p-value <= ``alpha`` (> D: never)."""
    from scipy.stats import binom  # deferred: scipy.stats is most of a command's start-up

    # ppf is a float search: step the estimate down while the count below it still qualifies.
    crit = binom.ppf(1.0 - alpha, discordant, 0.5).astype(np.int64) + 1
    for _ in range(2):
        lower = np.maximum(crit - 1, 1)
        crit = np.where(binom.sf(lower - 1, discordant, 0.5) <= alpha, lower, crit)
    return crit


def mcnemar_power(n: int, harm: float, discordance: float, alpha: float) -> float:
    """Probability that the one-sided exact McNemar test at ``alpha`` flags ``harm`` with ``n`` draws."""
    from scipy.stats import binom  # deferred: scipy.stats is most of a command's start-up

    if not 0 < discordance <= 1 or not 0 <= harm <= discordance:
        raise GateError(
            f"need 0 < discordance <= 1 and 0 <= harm <= discordance; got harm={harm}, "
            f"discordance={discordance}"
        )
    if n < 1:
        return 0.0
    discordant = np.arange(n + 1)
    crit = _critical_losses(discordant, alpha)
    loss_share = (discordance + harm) / (2 * discordance)
    flagged = binom.sf(crit - 1, discordant, loss_share)
    return float(np.sum(binom.pmf(discordant, n, discordance) * flagged))


def mcnemar_draws(harm: float, power: float, discordance: float, alpha: float, *, limit: int) -> int | None:
    """Fewest draws (at most ``limit``) at which :func:`mcnemar_power` reaches ``power``; None: more.

    Discreteness makes the power saw-toothed in ``n``: the search returns a count that reaches
    ``power``, found by bisection over the rising trend.
    """
    if mcnemar_power(limit, harm, discordance, alpha) < power:
        return None
    low, high = 0, limit  # power(low) < power <= power(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if mcnemar_power(mid, harm, discordance, alpha) >= power else (mid, high)
    return high
