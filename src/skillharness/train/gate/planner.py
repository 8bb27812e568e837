"""Power planning: how big must a class's val pool be for its gate to accept a real improvement?

An effect is the true accuracy gain ``delta = p_plus - p_minus`` at a given discordance rate
``r = p_plus + p_minus`` (the share of draws where exactly one side is right), so
``p_plus = (r + delta) / 2`` and ``p_minus = (r - delta) / 2``. Power is estimated by seeded
simulation of the configured gate with the class's drawable observations as its budget.

The McNemar guard is planned here too (:func:`plan_guard`): its draws per class are sized so
that one class losing ``guard_harm`` accuracy is flagged with probability ``guard_power`` after
Holm over the guarded classes, capped at ``guard_max_draws``; at temperature 0 a class can give
no more draws than it has questions the gate did not draw. That power holds only for a harmed
class whose discordance is at most the one it was sized at (more discordance puts the loss share
nearer 1/2): a sized guard therefore re-sizes each class by its own discordance as it draws, up to
the cap, and :class:`GuardPromise` states the largest discordance the power holds for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillharness.errors import ConfigError
from skillharness.train.config import GateConfig
from skillharness.train.gate.mcnemar import mcnemar_draws, mcnemar_power
from skillharness.train.gate.reachability import Reachability, reachability_for
from skillharness.train.gate.rules import EProcessGate
from skillharness.train.gate.simulate import simulate

__all__ = [
    "ClassPlan",
    "GuardClass",
    "GuardPlan",
    "GuardPromise",
    "effect_rates",
    "estimate_power",
    "guard_draws_per_class",
    "guard_power",
    "guard_promise",
    "guard_reach",
    "plan_classes",
    "plan_guard",
]


def effect_rates(delta: float, discordance: float) -> tuple[float, float]:
    """``(p_plus, p_minus)`` for an accuracy gain ``delta`` at discordance rate ``discordance``."""
    if not 0 < discordance <= 1 or abs(delta) > discordance:
        raise ConfigError(
            f"need 0 < discordance <= 1 and |delta| <= discordance; got delta={delta}, "
            f"discordance={discordance}",
            field="effects/discordance",
        )
    return (discordance + delta) / 2, (discordance - delta) / 2


def estimate_power(
    config: GateConfig, drawable: int, delta: float, discordance: float, *, runs: int = 2000, seed: int = 0
) -> float:
    """Probability that the gate accepts within ``min(n_max, drawable)`` observations."""
    budget = min(config.n_max, drawable)
    if budget < 1:
        return 0.0
    p_plus, p_minus = effect_rates(delta, discordance)
    gate = EProcessGate(config.model_copy(update={"n_max": budget}))
    return simulate(gate, p_plus, p_minus, n=budget, runs=runs, seed=seed).accept_rate


@dataclass(frozen=True)
class ClassPlan:
    """Reachability and power of one class's gate."""

    label: str
    drawable: int
    reach: Reachability
    power: tuple[tuple[float, float], ...]


def plan_classes(
    drawable: Mapping[str, int],
    config: GateConfig,
    *,
    effects: Sequence[float] = (0.05, 0.10, 0.20),
    discordance: float = 0.3,
    runs: int = 2000,
    seed: int = 0,
) -> tuple[ClassPlan, ...]:
    """Plan every class: reachable?, minimum wins, power at each effect size."""
    plans = []
    for label, n in drawable.items():
        reach = reachability_for(config, n)
        power = tuple(
            (
                delta,
                estimate_power(config, n, delta, discordance, runs=runs, seed=seed)
                if reach.reachable
                else 0.0,
            )
            for delta in effects
        )
        plans.append(ClassPlan(label, n, reach, power))
    return tuple(plans)


@dataclass(frozen=True)
class GuardPromise:
    """What the guard promises: a ``harm`` drop is flagged with probability at least ``power`` on
    any class whose discordance (share of paired draws where exactly one side is right) is at most
    ``discordance``. A harmed class with more discordance is flagged less often."""

    harm: float
    power: float
    discordance: float

    def describe(self) -> str:
        return (
            f"a {self.harm:.0%} drop is flagged with P >= {self.power:.2f} on a class whose discordance "
            f"is at most {self.discordance:.2f}"
        )


@dataclass(frozen=True)
class GuardClass:
    """What the guard can see on one class: its draws, and the harms it flags."""

    label: str
    draws: int
    power: float  # probability of flagging the configured guard_harm (a lower bound with clearing)
    detectable: float | None  # smallest harm flagged with guard_power (None: none, up to discordance)
    promise: GuardPromise  # the power it keeps for a harmed class, and up to which discordance


@dataclass(frozen=True)
class GuardPlan:
    """The McNemar guard of a system or tool edit over ``classes`` (sized, capped, per class)."""

    harm: float
    power: float
    discordance: float
    level: float  # the per-class level a lone harmed class must reach under Holm: alpha / m
    per_class: int  # draws asked of each class at the planning discordance
    most: int  # draws a class may take when its own discordance is larger (fixed: per_class)
    sized: int | None  # draws the stated power needs (None: more than guard_max_draws; fixed: None)
    fixed: bool  # guard_draws set explicitly
    clear: float | None  # guard_clear: the chance bound of clearing a harmed class early (None: off)
    classes: tuple[GuardClass, ...]
    promise: GuardPromise  # for a class that can give guard_max_draws (or the fixed size)

    @property
    def total_draws(self) -> int:
        return sum(c.draws for c in self.classes)


def guard_draws_per_class(
    config: GateConfig, guarded: int, *, discordance: float | None = None
) -> tuple[int, int | None]:
    """``(draws per class, draws the stated power needs)`` for a guard over ``guarded`` classes,
    at ``discordance`` (default: the planning assumption ``guard_discordance``).

    Clearing costs at most ``guard_clear`` of the power, so the size is the exact test's for
    ``guard_power + guard_clear``."""
    if config.guard_draws is not None:
        return config.guard_draws, None
    level = config.mcnemar_alpha / max(guarded, 1)
    sized = mcnemar_draws(
        config.guard_harm,
        config.guard_power + (config.guard_clear or 0.0),
        config.guard_discordance if discordance is None else discordance,
        level,
        limit=config.guard_max_draws,
    )
    return (config.guard_max_draws if sized is None else sized), sized


def guard_power(config: GateConfig, draws: int, discordance: float, level: float) -> float:
    """Chance the guard flags a ``guard_harm`` drop with ``draws`` per class: the exact test's,
    less what clearing may cost (at most ``guard_clear``), so a lower bound when clearing is on."""
    exact = mcnemar_power(draws, config.guard_harm, discordance, level)
    return max(exact - (config.guard_clear or 0.0), 0.0)


def guard_reach(config: GateConfig, draws: int, level: float) -> float | None:
    """The largest discordance (to 0.005) at which ``draws`` give the exact test at ``level``
    ``guard_power + guard_clear`` against a ``guard_harm`` drop; None: not even at the drop itself.

    The power falls as the discordance grows (the loss share nears 1/2), so every discordance up
    to it has that power too."""
    power, harm = config.guard_power + (config.guard_clear or 0.0), config.guard_harm
    if mcnemar_power(draws, harm, harm, level) < power:
        return None
    if mcnemar_power(draws, harm, 1.0, level) >= power:
        return 1.0
    low, high = harm, 1.0  # power(low) reaches it, power(high) does not
    while high - low > 0.005:
        mid = (low + high) / 2
        low, high = (mid, high) if mcnemar_power(draws, harm, mid, level) >= power else (low, mid)
    return low


def guard_promise(config: GateConfig, most: int, discordance: float, level: float) -> GuardPromise:
    """What a guard promises a class that can take ``most`` draws, sized at ``discordance``.

    Sized by power, a class draws until its own discordance is within what its draws can see
    (:func:`guard_reach`), so ``guard_power`` holds up to the discordance ``most`` draws reach. A
    fixed size, or a cap that binds at ``discordance``, keeps only the power there, and that only
    for a class with no more discordance."""
    if config.guard_draws is None:
        reach = guard_reach(config, most, level)
        if reach is not None and reach >= discordance:
            return GuardPromise(config.guard_harm, config.guard_power, reach)
    return GuardPromise(config.guard_harm, guard_power(config, most, discordance, level), discordance)


def _detectable(config: GateConfig, draws: int, level: float) -> float | None:
    """Smallest harm (to 0.005) flagged with probability ``guard_power`` at ``draws``.

    Clearing's bound holds only for drops of at least ``guard_harm``, so with clearing on no
    smaller drop is promised."""
    power, discordance = config.guard_power + (config.guard_clear or 0.0), config.guard_discordance
    if mcnemar_power(draws, discordance, discordance, level) < power:
        return None
    low, high = 0.0, discordance
    while high - low > 0.005:
        mid = (low + high) / 2
        low, high = (low, mid) if mcnemar_power(draws, mid, discordance, level) >= power else (mid, high)
    return high if config.guard_clear is None else max(high, config.guard_harm)


def plan_guard(config: GateConfig, available: Mapping[str, int | None]) -> GuardPlan:
    """The guard over ``available`` (class -> draws it can give, None: unlimited, with replacement)."""
    per_class, sized = guard_draws_per_class(config, len(available))
    level = config.mcnemar_alpha / max(len(available), 1)
    # A sized guard's class may draw up to the cap when its own discordance is larger.
    most = per_class if config.guard_draws is not None else config.guard_max_draws
    rows = []
    for label, limit in available.items():
        n = per_class if limit is None else min(per_class, limit)
        rows.append(
            GuardClass(
                label,
                n,
                guard_power(config, n, config.guard_discordance, level),
                _detectable(config, n, level),
                guard_promise(
                    config, most if limit is None else min(most, limit), config.guard_discordance, level
                ),
            )
        )
    return GuardPlan(
        harm=config.guard_harm,
        power=config.guard_power,
        discordance=config.guard_discordance,
        level=level,
        per_class=per_class,
        most=most,
        sized=sized,
        fixed=config.guard_draws is not None,
        clear=config.guard_clear,
        classes=tuple(rows),
        promise=guard_promise(config, most, config.guard_discordance, level),
    )
