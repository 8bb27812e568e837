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

Clearing (:func:`harm_cleared`): sampling a class stops early when its discordant pairs make the
planned harm implausible: the likelihood ratio of "a loss share of 1/2" against "the loss share the
planned harm implies" reaches ``1 / bound``. Under that harm the inverse ratio is a nonnegative
martingale, so by Ville's inequality a harmed class is ever cleared, however often it is looked
at, with probability at most ``bound`` (less for a larger harm). A cleared class enters Holm with
p-value 1: Holm is monotone, so clearing never adds a harm flag, and the level is unchanged. The
power drops by at most ``bound``, which the guard's size adds back
(:func:`skillharness.train.gate.guard_draws_per_class`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from skillharness.errors import GateError

__all__ = [
    "McNemarResult",
    "harm_cleared",
    "mcnemar_draws",
    "mcnemar_guard",
    "mcnemar_harm_p",
    "mcnemar_power",
]

# The loss share a clearing rule tests against is kept below 1: at 1 a single win would clear.
_MAX_LOSS_SHARE = 0.95


def mcnemar_harm_p(wins: int, losses: int) -> float:
    """Exact one-sided p-value that the candidate is worse, from discordant counts."""
    from scipy.stats import binom  # deferred: scipy.stats is most of a command's start-up

    if wins < 0 or losses < 0:
        raise GateError(f"counts must be non-negative, got wins={wins}, losses={losses}")
    discordant = wins + losses
    if discordant == 0:
        return 1.0
    return float(binom.sf(losses - 1, discordant, 0.5))


def harm_cleared(wins: int, losses: int, *, harm: float, discordance: float, bound: float) -> bool:
    """Whether ``(wins, losses)`` clear a class of a ``harm`` drop at ``discordance``: the
    likelihood ratio of harm against none is at most ``bound`` (see the module docstring)."""
    if wins < 0 or losses < 0:
        raise GateError(f"counts must be non-negative, got wins={wins}, losses={losses}")
    if not 0 < discordance <= 1 or not harm > 0 or not 0 < bound < 1:
        raise GateError(
            f"need 0 < discordance <= 1, harm > 0 and 0 < bound < 1; got harm={harm}, "
            f"discordance={discordance}, bound={bound}"
        )
    # A share below the planned one keeps the bound at the planned harm: the ratio grows with losses.
    loss_share = min((discordance + harm) / (2 * discordance), _MAX_LOSS_SHARE)
    log_ratio = losses * np.log(2 * loss_share) + wins * np.log(2 * (1 - loss_share))
    return bool(log_ratio <= np.log(bound))


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
