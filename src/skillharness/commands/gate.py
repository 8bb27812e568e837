"""``skillharness gate plan`` and ``gate simulate``: size val pools before paying for training."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from skillharness.commands.fit_table import Col, FitTable
from skillharness.commands.gate_coupling import independent_from_run, print_coupling, run_discordance
from skillharness.commands.gate_inputs import (
    GATE_FLAGS,
    check_size,
    floats,
    gate_config,
    parse_units,
    read_manifest_val_counts,
)
from skillharness.commands.gate_tables import plan_table, print_guard, print_levels, warn_few
from skillharness.errors import ConfigError
from skillharness.sim import SimConfig
from skillharness.train import (
    ClassPlan,
    EProcessGate,
    FixedNStandardError,
    GateRule,
    GuardPlan,
    StrictlyBetterMinibatch,
    gate_alpha,
    gate_budget,
    plan_classes,
    plan_guard,
    simulate,
)
from skillharness.train.config import GateConfig

gate_app = typer.Typer(help="Plan a gate (is acceptance reachable, with what power?) or simulate one.")

_GATE = GateConfig()  # every default below is train.gate's, so the commands cannot drift from it
# Without --coupling: the simulator's assumed seed coupling, named as such wherever it is used.
_SIM_COUPLING = SimConfig().world.seed_coupling
_ALPHA = typer.Option(_GATE.alpha, "--alpha", help="Type-I error of one gate.")
_BET_CAP = typer.Option(_GATE.bet_cap, "--bet-cap", help="Largest bet, in (0, 1/2].")
_STRATEGY = typer.Option(_GATE.bet_strategy, "--strategy", help="Bet strategy: agrapa or ons.")
_SEED = typer.Option(0, "--seed", min=0, help="Seed of the simulations.")
_MANIFEST = typer.Option(None, "--manifest", help="Read val questions per class from a split_manifest.json.")


_UNITS = typer.Option("", "--units", help='Val units per class, e.g. "Object Reasoning=30,OCR Problems=6".')
_PER_UNIT = typer.Option(1, "--questions-per-unit", min=1, help="Observations one --units unit gives.")
_BUDGET = typer.Option(_GATE.n_max, "--budget", help="Largest number of observations per gate (n_max).")
_EFFECTS = typer.Option("0.05,0.1,0.2", "--effects", help="True accuracy gains to estimate power at.")
_DISCORDANCE = typer.Option(
    _GATE.guard_discordance,
    "--discordance",
    help="Share of draws where exactly one side is right, with independent arms.",
)
_COUPLING = typer.Option(
    None,
    "--coupling",
    min=0.0,
    max=1.0,
    help="Share of draws a per_draw seed couples on your server (rho). Default: the simulator's "
    f"assumption, world.seed_coupling = {_SIM_COUPLING:g}, fit to one llama.cpp measurement.",
)
_FROM_RUN = typer.Option(
    None, "--from-run", help="Measure the discordance from this training run's paired gate draws."
)
_STORE = typer.Option(None, "--store", help="Store URL of --from-run (default: the config's).")
_CONFIG = typer.Option(None, "--config", help="Experiment YAML (its store.url).")
_GUARD_HARM = typer.Option(
    _GATE.guard_harm, "--guard-harm", help="Drop on one class the McNemar guard is sized to detect."
)
_GUARD_POWER = typer.Option(
    _GATE.guard_power, "--guard-power", help="Probability with which the guard must flag it."
)
_GUARD_MAX_DRAWS = typer.Option(
    _GATE.guard_max_draws, "--guard-max-draws", help="Most guard draws per class (its cost bound)."
)
_GUARD_CLEAR = typer.Option(
    _GATE.guard_clear or 0.0,
    "--guard-clear",
    min=0.0,
    max=0.99,
    help="Chance bound of clearing a class with the drop early (0: every class takes all its draws).",
)
_GUARD_DRAWS = typer.Option(
    None, "--guard-draws", help="Fix the guard's draws per class instead of sizing them (0: no guard)."
)
_MCNEMAR_ALPHA = typer.Option(
    _GATE.mcnemar_alpha, "--mcnemar-alpha", help="Level of the guard (Holm over the guarded classes)."
)
_RUNS = typer.Option(2000, "--runs", min=100, help="Simulated gates per power estimate.")
_TEMPERATURE = typer.Option(
    0.0,
    "--temperature",
    min=0.0,
    help="The agent's sampling temperature: 0 draws each val question at most once per gate "
    "(budget = distinct questions); above 0 draws fresh samples with replacement (budget = --budget).",
)
_ALPHA_SPENDING = typer.Option(
    _GATE.alpha_spending,
    "--alpha-spending",
    help="The run's level rule (train.gate.alpha_spending): none, basel, geometric or elond. "
    "The table is at the run's first test.",
)
_MIN_DISTINCT = typer.Option(
    _GATE.min_distinct,
    "--min-distinct",
    min=1,
    help="Mark classes with fewer distinct val questions (micro: left out of training).",
)


@gate_app.command("plan")
def plan(
    units: str = _UNITS,
    manifest: Path | None = _MANIFEST,
    questions_per_unit: int = _PER_UNIT,
    alpha: float = _ALPHA,
    alpha_spending: str = _ALPHA_SPENDING,
    bet_cap: float = _BET_CAP,
    budget: int = _BUDGET,
    strategy: str = _STRATEGY,
    effects: str = _EFFECTS,
    discordance: float = _DISCORDANCE,
    coupling: float | None = _COUPLING,
    from_run: str | None = _FROM_RUN,
    store: str | None = _STORE,
    config_file: str | None = _CONFIG,
    guard_harm: float = _GUARD_HARM,
    guard_power: float = _GUARD_POWER,
    guard_max_draws: int = _GUARD_MAX_DRAWS,
    guard_clear: float = _GUARD_CLEAR,
    guard_draws: int | None = _GUARD_DRAWS,
    mcnemar_alpha: float = _MCNEMAR_ALPHA,
    runs: int = _RUNS,
    seed: int = _SEED,
    temperature: float = _TEMPERATURE,
    min_distinct: int = _MIN_DISTINCT,
) -> None:
    """Per class: can the gate accept at all, how many wins it needs, and its power."""
    distinct = _val_counts(units, manifest, questions_per_unit)
    console = Console()
    rho = _SIM_COUPLING if coupling is None else coupling
    if from_run is not None:
        discordance = _discordance_of_run(console, from_run, store, config_file, rho, coupling is None)
    drawable = _drawable(distinct, temperature, budget, runs)
    config = gate_config(
        alpha=alpha,
        alpha_spending=alpha_spending,
        bet_cap=bet_cap,
        n_max=budget,
        bet_strategy=strategy,
        mcnemar_alpha=mcnemar_alpha,
        guard_draws=guard_draws,
        guard_harm=guard_harm,
        guard_power=guard_power,
        guard_discordance=discordance,
        guard_max_draws=guard_max_draws,
        guard_clear=guard_clear or None,
    )
    deltas = _effects(effects, discordance, measured=from_run is not None)
    plans = plan_classes(drawable, config, effects=deltas, discordance=discordance, runs=runs, seed=seed)
    _print_plan(console, config, plans, distinct, deltas, temperature, runs, min_distinct)
    print_levels(console, config)
    if temperature > 0:
        first, assumed = gate_alpha(config.alpha, config.alpha_spending, 1), coupling is None
        print_coupling(
            console, discordance=discordance, coupling=rho, effects=deltas, alpha=first, assumed=assumed
        )
    else:
        console.print("temperature 0: greedy answers ignore the seed, so one seed per draw couples nothing.")
    if config.guard_draws != 0:
        print_guard(console, _plan_guard(config, distinct, temperature))


def _drawable(distinct: dict[str, int], temperature: float, budget: int, runs: int) -> dict[str, int]:
    """The observations each class's gate can draw, refused when simulating them would take too long."""
    drawable = {k: gate_budget(n, temperature=temperature, n_max=budget) for k, n in distinct.items()}
    check_size(runs, max(drawable.values()), "--budget")
    return drawable


def _effects(text: str, discordance: float, *, measured: bool) -> tuple[float, ...]:
    """``--effects``: an effect is a difference of two rates at most ``discordance`` apart."""
    deltas = floats(text, "--effects")
    source = "measured by --from-run" if measured else "--discordance"
    for delta in deltas:
        if abs(delta) > discordance:
            raise ConfigError(
                f"--effects {delta:g}: no effect is larger in size than the share of draws whose arms "
                f"differ, {discordance:g} ({source})",
                field="--effects",
            )
    return deltas


def _val_counts(units: str, manifest: Path | None, questions_per_unit: int) -> dict[str, int]:
    """Distinct val questions per class, from exactly one of ``--units`` and ``--manifest``."""
    if bool(units) == (manifest is not None):
        raise ConfigError("give exactly one of --units or --manifest", field="--units/--manifest")
    return read_manifest_val_counts(manifest) if manifest else parse_units(units, questions_per_unit)


def _print_plan(
    console: Console,
    config: GateConfig,
    plans: tuple[ClassPlan, ...],
    distinct: dict[str, int],
    deltas: tuple[float, ...],
    temperature: float,
    runs: int,
    min_distinct: int,
) -> None:
    """The plan's table, what its columns mean, and the classes with few distinct questions."""
    mode = "with replacement" if temperature > 0 else "each question once"
    title = (
        f"gate plan: alpha={config.alpha:g}, bet cap={config.bet_cap:g}, budget={config.n_max}, "
        f"strategy={config.bet_strategy}, temperature={temperature:g} ({mode})"
    )
    if config.alpha_spending != "none":
        title += f", alpha_spending={config.alpha_spending} (the run's first test)"
    plan_table(title, plans, distinct, deltas, min_distinct).print(console)
    console.print(
        "distinct = val questions the claim rests on; obs = the gate's budget "
        f"({'--budget' if temperature > 0 else 'min(distinct, --budget)'}); P(acc) = power at discordance "
        f"{config.guard_discordance:g} (p+ = (r+Δ)/2, p- = (r-Δ)/2), {runs} seeded simulated gates each."
    )
    warn_few(console, distinct, min_distinct)


def _plan_guard(config: GateConfig, distinct: dict[str, int], temperature: float) -> GuardPlan:
    """The guard after a system or tool edit, over every class with val questions."""
    # At temperature 0 a class gives at most its distinct questions (fewer: the guard skips those
    # the gate drew); above 0 it draws fresh samples without that bound.
    available = {k: (None if temperature > 0 else n) for k, n in distinct.items() if n > 0}
    return plan_guard(config, available)


def _discordance_of_run(
    console: Console, run_id: str, store: str | None, config_file: str | None, coupling: float, assumed: bool
) -> float:
    """The independent-arm discordance measured on ``run_id``'s paired gate draws (and say so).

    A per_draw run's coupled discordance is undone with ``coupling``; ``assumed`` says that is the
    simulator's assumption rather than a value the user gave for their server."""
    measured = run_discordance(run_id, store=store, config=config_file)
    discordance = independent_from_run(measured, coupling)
    how = "one seed per draw" if measured.per_draw else "independent arms"
    undone = ""
    if measured.per_draw:
        source = "the simulator's assumed" if assumed else "--coupling"
        undone = f" (coupling undone with {source} rho={coupling:g})"
    console.print(
        f"run {run_id}: {measured.discordant} of {measured.observed} paired draws differ in "
        f"correctness ({measured.discordance:.1%}, {how}); independent discordance {discordance:.3f}{undone}"
    )
    return discordance


@gate_app.command("simulate")
def simulate_cmd(
    # A range refuses NaN too (a NaN rate would simulate gates that never end).
    p_plus: float = typer.Option(
        ..., "--p-plus", min=0.0, max=1.0, help="P(candidate right, incumbent wrong)."
    ),
    p_minus: float = typer.Option(
        ..., "--p-minus", min=0.0, max=1.0, help="P(candidate wrong, incumbent right)."
    ),
    alpha: float = _ALPHA,
    n_max: int = typer.Option(_GATE.n_max, "--n-max", help="Observation budget per gate."),
    runs: int = typer.Option(5000, "--runs", min=1, help="Simulated gates."),
    seed: int = _SEED,
    bet_cap: float = _BET_CAP,
    strategy: str = _STRATEGY,
    first_stage: int = typer.Option(
        _GATE.first_stage, "--first-stage", help="Observations in the first ladder stage."
    ),
    growth: float = typer.Option(_GATE.stage_growth, "--growth", help="Ladder stage growth factor."),
    baselines: bool = typer.Option(
        False, "--baselines", help="Also run the two baseline rules on the same draws."
    ),
) -> None:
    """Run many seeded gates at true rates p+ / p- and print how they end."""
    if p_plus + p_minus > 1:
        raise ConfigError(
            f"--p-plus {p_plus:g} + --p-minus {p_minus:g} is above 1: they are the shares of draws "
            "the candidate wins and loses, so they sum to at most 1",
            field="--p-plus/--p-minus",
        )
    config = gate_config(
        {**GATE_FLAGS, "n_max": "--n-max"},
        alpha=alpha,
        bet_cap=bet_cap,
        n_max=n_max,
        bet_strategy=strategy,
        first_stage=first_stage,
        stage_growth=growth,
    )
    check_size(runs, n_max, "--n-max")
    rules: list[GateRule] = [EProcessGate(config)]
    if baselines:
        rules += [StrictlyBetterMinibatch(), FixedNStandardError(n=n_max)]
    table = FitTable(
        f"gate simulate: p+={p_plus:g}, p-={p_minus:g}, alpha={alpha:g}, n_max={n_max}, runs={runs}",
        [Col("rule", "left", wrap=True)]
        + [Col(column) for column in ("accept", "harm reject", "inertia", "mean observations")],
    )
    for rule in rules:
        s = simulate(rule, p_plus, p_minus, n=n_max, runs=runs, seed=seed)
        table.add_row(
            s.rule,
            f"{s.accept_rate:.4f}",
            f"{s.harm_reject_rate:.4f}",
            f"{s.inertia_rate:.4f}",
            f"{s.mean_observations:.1f}",
        )
    table.print(Console())


def register(app: typer.Typer) -> None:
    """Add the ``gate`` command group to the root app."""
    app.add_typer(gate_app, name="gate")
