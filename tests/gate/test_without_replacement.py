"""Betting on draws without replacement (temperature 0): the wrapper and the gate's level."""

from __future__ import annotations

import numpy as np
import pytest

from skillharness.train.config import GateConfig
from skillharness.train.gate import AGrapa, OnlineNewtonStep, WithoutReplacement, wealth_paths
from skillharness.train.gate.ladder import DecisionKind, decide_paths, stage_ends


def _random_d(runs: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).choice(np.array([-1, 0, 1], dtype=np.int8), size=(runs, n))


def test_agrapa_needs_no_change_and_ons_is_stopped_after_a_net_loss() -> None:
    d = _random_d(500, 40, seed=1)
    agrapa = AGrapa(0.5)
    assert np.array_equal(WithoutReplacement(agrapa).bets(d), agrapa.bets(d))
    ons = OnlineNewtonStep(0.5)
    wrapped = WithoutReplacement(ons).bets(d)
    past = np.cumsum(d, axis=1) - d
    assert np.all(wrapped[past < 0] == 0.0)
    assert np.array_equal(wrapped[past >= 0], ons.bets(d)[past >= 0])
    assert np.any(ons.bets(d)[past < 0] > 0)  # without the wrapper ONS would bet there
    assert WithoutReplacement(ons).cap == 0.5


@pytest.mark.parametrize("strategy", [AGrapa(0.5), OnlineNewtonStep(0.5)])
def test_a_no_better_edit_on_a_finite_val_set_is_accepted_at_most_alpha(strategy: object) -> None:
    # 40 questions, mean d exactly 0 (12 wins, 12 losses, 16 ties), drawn in a random order.
    population = np.array([1] * 12 + [-1] * 12 + [0] * 16, dtype=np.int8)
    rng = np.random.default_rng(7)
    runs = 4000
    d = np.stack([rng.permutation(population) for _ in range(runs)])
    config = GateConfig(alpha=0.05, n_max=40)
    paths = wealth_paths(d, WithoutReplacement(strategy))  # type: ignore[arg-type]
    ends = stage_ends(config.first_stage, config.stage_growth, 40)
    decided = decide_paths(paths, ends, 1 / config.alpha, config.bet_cap, 40)
    accept = float(np.mean(decided.kinds == DecisionKind.ACCEPT))
    # alpha plus three binomial standard errors of the estimate
    assert accept <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs)
