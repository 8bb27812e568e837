"""``gate plan``'s printed parts: the plan table, the run's levels, the few-questions warning, the guard."""

from __future__ import annotations

from rich.console import Console

from skillharness.commands.fit_table import Col, FitTable
from skillharness.train import ClassPlan, GuardPlan, gate_alpha, min_net_wins, run_guarantee
from skillharness.train.config import GateConfig

__all__ = ["plan_table", "print_guard", "print_levels", "warn_few"]


def print_levels(console: Console, config: GateConfig) -> None:
    """The run's guarantee, and under a level rule the level and wins of a few later tests."""
    console.print(f"run-level guarantee (alpha_spending={config.alpha_spending}): {run_guarantee(config)}")
    if config.alpha_spending == "none":
        return
    levels = []
    for k in (1, 10, 100):
        level = gate_alpha(config.alpha, config.alpha_spending, k)
        wins = min_net_wins(alpha=level, bet_cap=config.bet_cap, n_candidates=config.n_candidates)
        levels.append(f"test {k}: {level:.3g} ({wins} wins)")
    if config.alpha_spending != "elond":
        console.print(f"levels: {'; '.join(levels)}")
        return
    console.print(
        f"levels with no accept before the test: {'; '.join(levels)}; j accepts before a test "
        "multiply its level by j + 1, and no test gets more than test 1 (a class out of reach there "
        "stays out of reach)"
    )


def warn_few(console: Console, distinct: dict[str, int], min_distinct: int) -> None:
    few = [f"{label} ({n})" for label, n in distinct.items() if n < min_distinct]
    if few:
        console.print(
            f"[yellow]warning[/yellow]: fewer than {min_distinct} distinct val questions (!): "
            f"{', '.join(few)}. These classes are micro: training leaves them out unless "
            "train.task_types names them, since their accepts would be claims about very few questions "
            "that only the holdout can check."
        )


def print_guard(console: Console, guard: GuardPlan) -> None:
    """What the McNemar guard of a system or tool edit can and cannot see, and what it costs."""
    harm, power = f"{guard.harm:.0%}", f"{guard.power:g}"
    table = FitTable(
        f"McNemar guard after an accepted system or tool edit: {len(guard.classes)} classes, "
        f"Holm (a lone harmed class must reach p <= {guard.level:.2g})",
        [
            Col("class", "left", wrap=True),
            Col("guard draws"),
            Col(f"P(flag a {harm} drop)"),
            Col(f"drop flagged at P >= {power}"),
        ],
    )
    for c in guard.classes:
        seen = "none" if c.detectable is None else f"{c.detectable:.0%}"
        table.add_row(
            c.label, str(c.draws), f"{c.power:.2f}", seen if c.power >= guard.power else f"[red]{seen}[/red]"
        )
    table.print(console)
    if guard.fixed:
        size = f"fixed at {guard.per_class} draws per class (train.gate.guard_draws)"
    elif guard.sized is None:
        size = (
            f"capped at guard_max_draws={guard.per_class} per class: a {harm} drop needs more draws "
            f"for power {power}"
        )
    else:
        size = f"{guard.per_class} draws per class: a {harm} drop is flagged with P >= {power}"
    more = "" if guard.fixed else f" (a class whose own discordance is larger draws more, up to {guard.most})"
    console.print(
        f"guard: {size}, at discordance {guard.discordance:g}; cost: up to {guard.total_draws} paired draws "
        f"per accepted system or tool edit at that discordance{more} (fresh candidate samples; incumbent "
        "samples from the cache when present)."
    )
    console.print(
        f"power: {guard.promise.describe()} and {guard.most} draws to give; a harmed class's discordance "
        "may well be larger than the planning one (the drop itself adds to it), and beyond that bound it "
        "is flagged less often."
    )
    if guard.clear is not None:
        console.print(
            f"clearing (train.gate.guard_clear={guard.clear:g}): a class stops drawing once its draws "
            f"make a {harm} drop implausible, so a harmless edit usually costs well under that; a class "
            f"with that drop is cleared with P <= {guard.clear:g}, already taken off the power above."
        )
    blind = [f"{c.label} ({c.power:.2f})" for c in guard.classes if c.power < guard.power]
    if blind:
        console.print(
            f"[yellow]the guard cannot see[/yellow] a {harm} drop with P >= {power} on: {', '.join(blind)}."
        )
    console.print(
        "It never sees: a drop smaller than the last column (none: no drop up to the discordance); "
        "a skill edit's effect on other classes (a skill edit changes only its own class, which its "
        "gate tests); at temperature 0, the questions the gate drew (the guard takes only the "
        "others, so it may get fewer draws than shown)."
    )


def plan_table(
    title: str,
    plans: tuple[ClassPlan, ...],
    distinct: dict[str, int],
    deltas: tuple[float, ...],
    min_distinct: int,
) -> FitTable:
    """One row per class: distinct questions (flagged when few), budget, reachability, power."""
    columns = [Col("class", "left", wrap=True)]
    columns += [Col(column) for column in ("distinct", "obs", "reachable", "min wins")]
    columns += [Col(f"P(acc) Δ={delta:g}") for delta in deltas]
    table = FitTable(title, columns)
    for p in plans:
        verdict = "yes" if p.reach.reachable else "[red]NO[/red]"
        table.add_row(
            p.label,
            str(distinct[p.label]) + (" [yellow]![/yellow]" if distinct[p.label] < min_distinct else ""),
            str(p.reach.drawable),
            verdict,
            str(p.reach.min_wins),
            *(f"{pw:.2f}" for _, pw in p.power),
        )
    return table
