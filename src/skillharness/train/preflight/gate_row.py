"""Preflight's gate row, in words: the draw mode, alpha spending's last gates, the McNemar guard's
size and cost, and why a trained class cannot reach its gate."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from skillharness.data import FrozenPools, Pool, Question
from skillharness.train.config import GateConfig
from skillharness.train.gate import guard_draws_per_class, guard_promise
from skillharness.train.state.reserve import reserved_ids
from skillharness.train.validate.coverage import ClassCoverage, TrainedClasses

__all__ = ["draw_mode", "guard_summary", "reserve_summary", "spending_summary", "unreachable_message"]


def spending_summary(classes: TrainedClasses, gate: GateConfig) -> str:
    """Under alpha spending, the gate index after which each trained class can no longer accept."""
    if gate.alpha_spending == "none":
        return ""
    limits = [f"{c.task_type} (gate {c.last_gate})" for c in classes.trained if c.last_gate]
    if not limits:
        return ""
    if gate.alpha_spending == "elond":  # the levels depend on the accepts: last_gate assumes none
        return (
            "; alpha_spending=elond: a test's level is alpha * gamma_k * (accepts before it + 1), so "
            "with no accept these classes can accept only up to the run's gate shown; each accept "
            "moves it later, and a class is retired only when no later gate could accept it: "
            f"{', '.join(limits)}"
        )
    return (
        f"; alpha_spending={gate.alpha_spending}: later gates need more wins, so these classes can "
        f"accept only up to the run's gate shown and are then no longer evolved (reported once): "
        f"{', '.join(limits)}"
    )


def guard_summary(
    questions: Sequence[Question], pools: FrozenPools, gate: GateConfig, temperature: float
) -> str:
    """The McNemar guard's size and cost: every class with val questions is guarded."""
    if gate.guard_draws == 0:
        return "; McNemar guard off (train.gate.guard_draws = 0)"
    val = set(pools.questions.get(Pool.VAL, ()))
    val -= reserved_ids((q for q in questions if q.question_id in val), gate.reserve)
    guarded = len({q.task_type for q in questions if q.question_id in val})
    # At temperature 0 a class gives each val question once, and none the gate itself drew.
    fewest = min(Counter(q.task_type for q in questions if q.question_id in val).values(), default=0)
    per_class, sized = guard_draws_per_class(gate, guarded)
    # A sized guard's class draws up to the cap when its own discordance is larger.
    most = per_class if gate.guard_draws is not None else gate.guard_max_draws
    promise = guard_promise(
        gate, most, max(gate.guard_discordance, gate.guard_harm), gate.mcnemar_alpha / max(guarded, 1)
    )
    if gate.guard_draws is not None:
        how = "fixed by train.gate.guard_draws"
    elif sized is None:
        how = (
            f"capped by guard_max_draws: a {gate.guard_harm:.0%} drop needs more for power "
            f"{gate.guard_power:g}"
        )
    else:
        how = (
            f"sized to flag a {gate.guard_harm:.0%} drop with probability >= {gate.guard_power:g} at "
            f"discordance {gate.guard_discordance:g}, re-sized at run time from the discordance measured "
            f"and, per class, from its own, up to {most} draws"
        )
    cap = (
        f"; at temperature 0 a class gives at most its val questions the gate did not draw "
        f"(as few as {fewest})"
        if temperature <= 0 and fewest < per_class
        else ""
    )
    return (
        f"; McNemar guard after an accepted system or tool edit: {per_class} draws on each of the "
        f"{guarded} classes with val questions ({how}; up to {per_class * guarded} draws at that "
        f"discordance, {most * guarded} at most{cap}; power: {promise.describe()}; "
        "`skillharness gate plan` shows what it can see per class)"
    )


def reserve_summary(questions: Sequence[Question], pools: FrozenPools, gate: GateConfig) -> str:
    """The val reserve, when there is one: what it holds out of every gate, and why."""
    if gate.reserve <= 0:
        return ""
    val = set(pools.questions.get(Pool.VAL, ()))
    held = reserved_ids((q for q in questions if q.question_id in val), gate.reserve)
    videos = len({q.video_id for q in questions if q.question_id in held})
    return (
        f"; val reserve (train.gate.reserve={gate.reserve:g}): {videos} video(s), {len(held)} question(s) "
        "no gate or guard draws, left out of the counts above; the end of training compares the bundles "
        "on them too, for the val gain's optimism"
    )


def draw_mode(temperature: float, gate: GateConfig) -> str:
    """How the gate draws at this temperature (docs/gate.md, "Validity in both modes")."""
    if temperature > 0:
        return (
            f"temperature {temperature:g}: fresh samples with replacement, budget n_max={gate.n_max} per gate"
        )
    return (
        "temperature 0 (or a fixed sampling seed): each val question at most once per gate, "
        "budget = distinct val questions"
    )


def unreachable_message(c: ClassCoverage, gate: GateConfig) -> str:
    """Why class ``c``'s gate can never accept, and what to change."""
    if gate.n_max < c.min_val:
        cause = f"train.gate.n_max={gate.n_max} is below the {c.min_val} observations acceptance needs"
        fix = f"raise train.gate.n_max to at least {c.min_val}"
    else:
        cause = f"it has {c.val} val question(s), its gate needs at least {c.min_val} to be able to accept"
        fix = f"exclude it (set train.task_types) or re-split with --min-val-per-class {c.min_val}"
    return (
        f"trained class {c.task_type!r}: acceptance is unreachable: {cause} "
        f"(alpha {gate.alpha:g}, bet cap {gate.bet_cap:g}); {fix}"
    )
