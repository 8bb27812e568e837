"""``gate plan``'s discordance: measured from a training run's paired draws, and what a shared
seed per draw (``agent.sampling.seed: per_draw``) saves on the draws a gate needs."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console

from skillharness.commands.fit_table import Col, FitTable
from skillharness.config import load_config
from skillharness.errors import ConfigError
from skillharness.store import GateObservationRow, RunReader
from skillharness.train import coupled_discordance, independent_discordance, sized_draws, threshold

__all__ = ["RunDiscordance", "coupling_table", "independent_from_run", "print_coupling", "run_discordance"]


@dataclass(frozen=True)
class RunDiscordance:
    """What a training run's gates observed: paired draws, those whose arms differed, their net wins."""

    run_id: str
    observed: int  # paired draws with both arms answered (INFRA left out)
    discordant: int  # draws where exactly one arm was right
    net_wins: int  # candidate-only right minus incumbent-only right
    per_draw: bool  # whether the run sent both arms of a draw one seed

    @property
    def discordance(self) -> float:
        return self.discordant / self.observed

    @property
    def effect(self) -> float:
        return self.net_wins / self.observed


def run_discordance(run_id: str, *, store: str | None, config: str | None) -> RunDiscordance:
    """The share of ``run_id``'s paired gate draws (target and guard) whose arms differ in correctness."""
    settings = load_config(config, {"store.url": store})
    with RunReader(settings.store) as reader:
        per_draw = reader.run(run_id).provenance.sampling.per_draw
        rows = reader.ledger(GateObservationRow, train_run_id=run_id)
    pairs = [(r.candidate, r.incumbent) for r in rows if r.candidate is not None and r.incumbent is not None]
    if not pairs:
        raise ConfigError(
            f"run {run_id!r} has no paired gate draws with both arms answered: nothing to measure",
            field="--from-run",
        )
    return RunDiscordance(
        run_id=run_id,
        observed=len(pairs),
        discordant=sum(c != i for c, i in pairs),
        net_wins=sum(c - i for c, i in pairs),
        per_draw=per_draw,
    )


def independent_from_run(measured: RunDiscordance, coupling: float) -> float:
    """The run's discordance without a shared seed (its own when it had none; else undone by ``coupling``)."""
    if not measured.per_draw:
        return measured.discordance
    return independent_discordance(measured.discordance, coupling, measured.effect)


def coupling_table(
    *, discordance: float, coupling: float, effects: tuple[float, ...], alpha: float, n_candidates: int = 1
) -> FitTable:
    """Per effect: the draws a gate needs (about 3/4 power) with independent and with coupled arms."""
    table = FitTable(
        f"draws a gate needs for about 3/4 power (alpha={alpha:g}): independent arms vs one seed per draw "
        f"(coupling rho={coupling:g})",
        [
            Col("effect Δ"),
            Col("discordance"),
            Col("draws"),
            Col("coupled disc."),
            Col("coupled draws"),
            Col("saved"),
        ],
    )
    thr = threshold(alpha, n_candidates)
    for effect in (e for e in effects if e > 0):  # no effect: no size makes a gate accept
        coupled = coupled_discordance(discordance, coupling, effect)
        alone, paired = sized_draws(thr, discordance, effect), sized_draws(thr, coupled, effect)
        table.add_row(
            f"{effect:g}",
            f"{discordance:.2f}",
            str(alone),
            f"{coupled:.2f}",
            str(paired),
            f"{1 - paired / alone:.0%}",
        )
    return table


def print_coupling(
    console: Console,
    *,
    discordance: float,
    coupling: float,
    effects: tuple[float, ...],
    alpha: float,
    assumed: bool = False,
) -> None:
    """The table and how to read it; ``assumed``: ``coupling`` is the simulator's, not the user's."""
    coupling_table(discordance=discordance, coupling=coupling, effects=effects, alpha=alpha).print(console)
    console.print(
        "draws ~ 4 log(1/alpha) r / Δ² (power.sized_draws); coupled r = rho Δ + (1 - rho) r: with "
        "agent.sampling.seed per_draw both arms of a draw share a seed, and a share rho of the draws "
        "then differs only where the arms' accuracies differ (docs/gate.md, 'Coupled draws')."
    )
    if assumed:
        console.print(
            f"rho={coupling:g} is the simulator's assumption (world.seed_coupling), fit to one llama.cpp "
            "measurement of a 135M model (95 % interval about 0 to 0.57), not a property of your server: "
            "measure yours (benchmarks/coupling.py) and pass --coupling."
        )
    else:
        console.print(f"rho={coupling:g} as given by --coupling.")
