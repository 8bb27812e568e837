"""Power-aware gates: how many observations a test is given, and when its futility is clear.

Both rules change only *when a test gives up*, never when it accepts, so neither touches the
false-accept bound: rejecting is always allowed (docs/gate.md, "Open candidates").

**Sizing.** A betting e-process at effect ``delta`` and discordance ``r`` grows its log-wealth by
about the Kelly rate ``g ≈ delta² / (2 r)`` per observation, so it crosses ``log(threshold)``
after about ``2 log(threshold) r / delta²`` observations on average (the figure of ``gate plan``).
The plug-in bet pays a learning cost on top, so at that size the gate accepts only about 40 % of
the effects it was sized for; twice that size gives about 75 % (measured with
:func:`~skillharness.train.gate.planner.estimate_power`: 0.38 at 300 and 0.73 at 600 observations
for ``delta = 0.1``, ``r = 0.5``, ``alpha = 0.05``). :func:`sized_draws` therefore returns twice it.

**Plausible futility.** The ladder's own futility stop is sure (every future win at the cap) and
fires only near the budget. :func:`plausibly_futile` stops a test whose *plausible* best cannot
reach the threshold: the effect ``z`` standard errors above its estimate, earning its Kelly
growth on every observation left, still ends below the threshold.
"""

from __future__ import annotations

import math

__all__ = [
    "DISCORDANCE_PRIOR",
    "MIN_FUTILITY_N",
    "coupled_discordance",
    "independent_discordance",
    "kelly_growth",
    "measured_discordance",
    "plausibly_futile",
    "sized_draws",
]

# A prior of 0.5 discordance (independent draws at accuracies 0.3–0.7 disagree about half the
# time), worth this many observations, until the run has measured its own.
DISCORDANCE_PRIOR = (0.5, 32)
_SIZE_FACTOR = 2.0
# Below this many observations (the default first stage) the plausible effect is not judged.
# Judging from the first stage on stops useless tests early, which also keeps them from
# spending their level (a stopped test cannot falsely accept); waiting for 16 or 32 observations
# kept busy targets from being evolved and lowered the closure in the SimLab smoke runs.
MIN_FUTILITY_N = 8


def measured_discordance(discordant: int, observed: int) -> float:
    """The share of paired draws where exactly one side was right, shrunk toward the prior."""
    prior, weight = DISCORDANCE_PRIOR
    return (discordant + prior * weight) / (observed + weight)


def sized_draws(threshold: float, discordance: float, min_effect: float) -> int:
    """Observations that give a test about 3/4 power at ``min_effect`` (see the module doc)."""
    r = max(discordance, min_effect)
    return math.ceil(_SIZE_FACTOR * 2.0 * math.log(threshold) * r / (min_effect * min_effect))


def coupled_discordance(discordance: float, coupling: float, effect: float = 0.0) -> float:
    """The discordance of the same pairs when both arms of a draw share one request seed.

    With independent draws two arms at accuracies ``p1``, ``p2`` differ on ``p1 (1 - p2) + p2 (1 - p1)``
    of the draws (``discordance``); a shared seed couples a share ``coupling`` of the draws, and a
    coupled draw differs only when the uniform falls between ``p1`` and ``p2``: ``|p1 - p2|``, at least
    the effect. So the coupled discordance is ``coupling |effect| + (1 - coupling) discordance``
    (docs/simulator.md, "Seed coupling").
    """
    return coupling * abs(effect) + (1.0 - coupling) * discordance


def independent_discordance(coupled: float, coupling: float, effect: float = 0.0) -> float:
    """The inverse of :func:`coupled_discordance`: the discordance without a shared seed."""
    if coupling >= 1.0:
        return coupled
    return min(1.0, max(coupled, (coupled - coupling * abs(effect)) / (1.0 - coupling)))


def kelly_growth(delta: float, discordance: float) -> float:
    """Expected log-wealth growth per observation of the best constant bet at effect ``delta``."""
    r = max(discordance, 1e-12)
    delta = min(delta, r)
    if delta <= 0:
        return 0.0
    lam = delta / r
    p_plus, p_minus = (r + delta) / 2, (r - delta) / 2
    loss = p_minus * math.log1p(-lam) if lam < 1 else (0.0 if p_minus == 0 else -math.inf)
    return p_plus * math.log1p(lam) + loss


def plausibly_futile(
    *, wins: int, losses: int, n: int, wealth: float, budget: int, threshold: float, z: float
) -> bool:
    """True when even an effect ``z`` standard errors above the estimate cannot reach ``threshold``
    in the ``budget - n`` observations left (at its Kelly growth, which no bet strategy beats)."""
    if wealth <= 0:
        return True
    if n < MIN_FUTILITY_N:
        return False
    left = budget - n
    r = (wins + losses) / n
    mean = (wins - losses) / n
    se = math.sqrt(max(r - mean * mean, 1e-12) / n)
    plausible = mean + z * se
    best_r = max(r, abs(plausible))
    reachable = math.log(wealth) + left * kelly_growth(plausible, best_r)
    return reachable < math.log(threshold)
