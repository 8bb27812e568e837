"""Statistical behaviour over thousands of seeded simulated gates (vectorized, a few seconds)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skillharness.train.config import GateConfig
from skillharness.train.gate import EProcessGate, simulate

RUNS = 6000
ALPHA = 0.05


@pytest.mark.parametrize("strategy", ["agrapa", "ons"])
@pytest.mark.parametrize("n_max", [64, 512])
@pytest.mark.parametrize("rate", [0.0, 0.05, 0.15, 0.5])
def test_false_accept_rate_under_the_null_is_at_most_alpha(
    strategy: str, n_max: int, rate: float, margin: Callable[[float, int], float]
) -> None:
    # rate 0.0 is the all-ties case: wealth never moves, the gate can only stall.
    gate = EProcessGate(GateConfig(alpha=ALPHA, n_max=n_max, bet_strategy=strategy))
    summary = simulate(gate, rate, rate, n=n_max, runs=RUNS, seed=1000 + n_max + int(rate * 100))
    assert summary.accept_rate <= ALPHA + margin(ALPHA, RUNS)
    assert summary.harm_reject_rate <= ALPHA + margin(ALPHA, RUNS)
    if rate == 0.0:
        assert summary.accept_rate == 0.0
        assert summary.inertia_rate == 1.0


def test_fully_sequential_ladder_stays_valid(margin: Callable[[float, int], float]) -> None:
    # Stage size 1: the gate looks after every observation; Ville's inequality still holds.
    gate = EProcessGate(GateConfig(n_max=256, first_stage=1, stage_growth=1.0))
    summary = simulate(gate, 0.3, 0.3, n=256, runs=RUNS, seed=5)
    assert summary.accept_rate <= ALPHA + margin(ALPHA, RUNS)


def test_multiple_candidates_threshold_lowers_false_accepts(margin: Callable[[float, int], float]) -> None:
    single = simulate(EProcessGate(GateConfig(n_max=256)), 0.3, 0.3, n=256, runs=RUNS, seed=6)
    five = simulate(EProcessGate(GateConfig(n_max=256, n_candidates=5)), 0.3, 0.3, n=256, runs=RUNS, seed=6)
    assert five.accept_rate <= ALPHA / 5 + margin(ALPHA / 5, RUNS)
    assert five.accept_rate <= single.accept_rate


def test_harmful_candidate_is_rejected_on_evidence_and_never_accepted() -> None:
    # Measured: harm-reject 0.92, accept 0.0004 (seed 3, 5000 gates, budget 512).
    gate = EProcessGate(GateConfig(n_max=512))
    summary = simulate(gate, 0.1, 0.2, n=512, runs=5000, seed=3)
    assert summary.accept_rate <= 0.005
    assert summary.harm_reject_rate >= 0.88


def test_power_at_p_plus_02_p_minus_01() -> None:
    # A 10-point gain at 30% discordance needs a few hundred observations at alpha = 0.05.
    # Measured accept rates over seeds 11-13: 0.907-0.919 (mean observations about 225);
    # the documented lower bound is 0.88 with a budget of 512.
    gate = EProcessGate(GateConfig(n_max=512))
    summary = simulate(gate, 0.2, 0.1, n=512, runs=5000, seed=11)
    assert summary.accept_rate >= 0.88
    assert summary.mean_observations < 260
    assert summary.harm_reject_rate <= 0.005
