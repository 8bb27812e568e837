"""Benchmark: false-accept rate and power of our gate against two baseline acceptance rules.

Run: ``.venv/bin/python benchmarks/gate.py`` (a few seconds on one core). With ``--in-loop``, the
false-accept figure inside the loop instead, against the simulator (see ``gate_in_loop.py``).
Every rule sees the same seeded draws. Effects are accuracy gains ``delta = p_plus - p_minus`` at
a discordance of 0.3 (``p_plus + p_minus``); ``delta = 0`` is the null, where any accept is a false
accept. A second table runs the e-process on null worlds of coupled draws (one request seed for
both arms, ``agent.sampling.seed: per_draw``): heterogeneous questions whose effects cancel on
average, each pair coupled with probability rho as in the simulator (docs/simulator.md, "Seed
coupling"). The tables go to ``docs/benchmarks.md`` under ``## gate``.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from skillharness.sim.config import WorldConfig
from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    EProcessGate,
    FixedNStandardError,
    GateRule,
    StrictlyBetterMinibatch,
    effect_rates,
    simulate,
    stage_ends,
)
from skillharness.train.gate.ladder import DecisionKind, PathDecisions
from skillharness.util.atomic import atomic_write_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
EFFECTS = (0.0, 0.05, 0.10, 0.15, 0.20, 0.30)
DISCORDANCE = 0.3
BUDGETS = (64, 256)
RUNS = 20000
SEED = 20260716
# Null worlds of coupled draws: rho = 0, the simulator's calibrated default, and a strong coupling.
COUPLINGS = (0.0, WorldConfig().seed_coupling, 0.9)
NULL_QUESTIONS = 200
NULL_SHIFT = 0.15  # half the questions gain this much accuracy, half lose it: mean effect 0


@dataclass(frozen=True)
class PeekingStandardError:
    """The fixed-n SE rule looked at after every ladder stage, as it is often used (not valid)."""

    budget: int
    z: float = 2.0
    name: str = "mean > 2 SE, checked at each stage"

    def run(self, d: NDArray[np.int8]) -> PathDecisions:
        kinds = np.full(d.shape[0], DecisionKind.REJECT_INERTIA, dtype=np.int8)
        n_used = np.full(d.shape[0], self.budget, dtype=np.int64)
        open_ = np.ones(d.shape[0], dtype=bool)
        for end in stage_ends(8, 2.0, self.budget):
            sample = d[:, :end].astype(np.float64)
            mean = sample.mean(axis=1)
            se = sample.std(axis=1, ddof=1) / np.sqrt(end)
            for hit, kind in (
                (mean > self.z * se, DecisionKind.ACCEPT),
                (mean < -self.z * se, DecisionKind.REJECT_EVIDENCE),
            ):
                now = open_ & hit
                kinds[now], n_used[now] = kind, end
                open_ &= ~now
        return PathDecisions(kinds, n_used)


def rules_for(budget: int) -> list[GateRule]:
    return [
        EProcessGate(GateConfig(n_max=budget), name="e-process ladder (aGRAPA)"),
        EProcessGate(GateConfig(n_max=budget, bet_strategy="ons"), name="e-process ladder (ONS)"),
        StrictlyBetterMinibatch(),
        FixedNStandardError(n=budget),
        PeekingStandardError(budget),
    ]


def table(budget: int) -> list[str]:
    header = "| rule | " + " | ".join(f"Δ={e:g}" for e in EFFECTS) + " |"
    lines = [header, "|---" * (len(EFFECTS) + 1) + "|"]
    for rule in rules_for(budget):
        cells = []
        for effect in EFFECTS:
            p_plus, p_minus = effect_rates(effect, DISCORDANCE)
            s = simulate(rule, p_plus, p_minus, n=budget, runs=RUNS, seed=SEED + int(effect * 1000))
            cells.append(f"{s.accept_rate:.3f} ({s.mean_observations:.0f})")
        lines.append(f"| {rule.name} | " + " | ".join(cells) + " |")
    return lines


def coupled_null_draws(rho: float, budget: int, rng: np.random.Generator) -> NDArray[np.int8]:
    """Paired outcomes ``d = candidate - incumbent`` of ``RUNS`` gates in a null world of coupled draws.

    Each question has its own incumbent accuracy (0.2 to 0.75) and a candidate accuracy
    ``NULL_SHIFT`` above or below it, half each, so a draw's expected ``d`` is 0 while single
    questions differ. A draw picks a question uniformly (with replacement, as at temperature > 0);
    with probability ``rho`` both arms read one uniform (one seed), otherwise each its own.
    """
    base = rng.uniform(0.2, 0.75, NULL_QUESTIONS)
    shift = np.where(np.arange(NULL_QUESTIONS) % 2 == 0, NULL_SHIFT, -NULL_SHIFT)
    p_inc, p_cand = base, base + shift
    pick = rng.integers(0, NULL_QUESTIONS, size=(RUNS, budget))
    u_inc = rng.random((RUNS, budget))
    u_own = rng.random((RUNS, budget))
    u_cand = np.where(rng.random((RUNS, budget)) < rho, u_inc, u_own)
    return ((u_cand < p_cand[pick]).astype(np.int8) - (u_inc < p_inc[pick]).astype(np.int8)).astype(np.int8)


def coupled_null_table() -> list[str]:
    lines = ["| rho | discordance | " + " | ".join(f"n_max={b}" for b in BUDGETS) + " |"]
    lines.append("|---" * (len(BUDGETS) + 2) + "|")
    for rho in COUPLINGS:
        cells, discordance = [], 0.0
        for budget in BUDGETS:
            d = coupled_null_draws(rho, budget, np.random.default_rng(SEED + budget + int(rho * 100)))
            discordance = float(np.mean(d != 0))
            kinds = EProcessGate(GateConfig(n_max=budget)).run(d).kinds
            cells.append(f"{np.mean(kinds == DecisionKind.ACCEPT):.4f}")
        lines.append(f"| {rho:g} | {discordance:.3f} | " + " | ".join(cells) + " |")
    return lines


def section(elapsed_s: float, body: list[str]) -> str:
    return "\n".join(
        [
            "## gate",
            "",
            "Accept rate (mean observations used) over "
            f"{RUNS} seeded simulated gates per cell; α = 0.05, bet cap 1/2, ladder stages 8, 16, 32, ...",
            f"Effect Δ = p+ − p− at discordance p+ + p− = {DISCORDANCE}; the Δ=0 column is the",
            "false-accept rate (it must be ≤ 0.05). Reproduce with `.venv/bin/python benchmarks/gate.py` "
            f"({elapsed_s:.0f} s on one core).",
            "",
            *body,
            "",
            "False accepts of the e-process ladder (aGRAPA) on null worlds of coupled draws, "
            f"{RUNS} gates per cell:",
            f"{NULL_QUESTIONS} questions with incumbent accuracy 0.2 to 0.75, the candidate "
            f"{NULL_SHIFT:g} better on half of them",
            "and as much worse on the other half (mean effect 0); both arms of a draw share their uniform",
            "with probability rho (one seed per draw), as in the simulator. Coupling changes each pair's",
            "distribution, not the independence between pairs, so the rate stays ≤ α = 0.05 at every rho:",
            "",
            *coupled_null_table(),
            "",
        ]
    )


def write_section(text: str) -> None:
    old = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    pattern = re.compile(r"^## gate\n.*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    atomic_write_text(DOC, new)


def main() -> None:
    if "--in-loop" in sys.argv[1:]:  # the in-loop figure: validate() against the simulator
        from gate_in_loop import main as in_loop

        in_loop(sys.argv[1:])
        return
    start = time.perf_counter()
    body: list[str] = []
    for budget in BUDGETS:
        body += [f"Budget n_max = {budget} (the fixed-n rule uses all {budget}):", "", *table(budget), ""]
    text = section(time.perf_counter() - start, body[:-1])
    write_section(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
