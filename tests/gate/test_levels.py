"""The run's level rule: e-LOND's levels, the LOND sequence, the stated guarantee, and a seeded
simulation of whole runs in which the realized false discovery proportion stays below alpha."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray

from skillharness.errors import ConfigError
from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    DecisionKind,
    EProcessGate,
    Ladder,
    best_gate_alpha,
    gate_alpha,
    last_reachable_gate,
    lond_gamma,
    reachability_for,
    run_guarantee,
)
from skillharness.train.gate.simulate import draw_observations


def test_the_lond_sequence_sums_to_at_most_one() -> None:
    # The terms up to N exactly, and the rest bounded by the integral from N (the terms fall
    # from j = 2 on): with u = sqrt(log x), gamma(x) dx = 2 c u^3 e^-u du, whose integral from
    # a = sqrt(log N) is 2 c e^-a (a^3 + 3a^2 + 6a + 6).
    n = 1_000_000
    j = np.arange(3, n + 1, dtype=np.float64)
    head = (
        lond_gamma(1)
        + lond_gamma(2)
        + float(np.sum(0.07720838 * np.log(j) / (j * np.exp(np.sqrt(np.log(j))))))
    )
    a = math.sqrt(math.log(n))
    tail = 2 * 0.07720838 * math.exp(-a) * (a**3 + 3 * a**2 + 6 * a + 6)
    assert head + tail <= 1.0
    assert head > 0.5  # the bound is not vacuous: most of the mass is in the head
    terms = [lond_gamma(k) for k in range(1, 2000)]
    assert all(t > 0 for t in terms)
    assert terms == sorted(terms, reverse=True)


def test_elond_levels_grow_with_the_accepts_before_the_test() -> None:
    levels = [gate_alpha(0.05, "elond", 10, accepts=k) for k in range(10)]
    assert levels == pytest.approx([0.05 * lond_gamma(10) * (k + 1) for k in range(10)])
    assert all(a < b for a, b in itertools.pairwise(levels))
    assert gate_alpha(0.05, "elond", 1) == pytest.approx(0.05 * 0.07720838 * math.log(2))
    # The other rules ignore the accepts.
    for spending in ("none", "basel", "geometric"):
        assert gate_alpha(0.05, spending, 3, accepts=2) == gate_alpha(0.05, spending, 3)
    with pytest.raises(ConfigError):
        gate_alpha(0.05, "elond", 3, accepts=-1)
    with pytest.raises(ConfigError):
        gate_alpha(0.05, "elond", 0)


@given(t=st.integers(1, 5000), later=st.integers(0, 5000), share=st.floats(0, 1))
def test_no_later_test_gets_more_than_the_best_level(t: int, later: int, share: float) -> None:
    # A test numbered j has at most j - 1 accepts before it.
    j = t + later
    accepts = int(share * (j - 1))
    level = gate_alpha(0.05, "elond", j, accepts=accepts)
    assert level <= best_gate_alpha(0.05, "elond", t) * (1 + 1e-12)
    # Test 1 holds the highest level of all: a class out of reach there is out of reach for good.
    assert best_gate_alpha(0.05, "elond", 1) == gate_alpha(0.05, "elond", 1)
    assert level <= gate_alpha(0.05, "elond", 1) * (1 + 1e-12)


def test_best_level_without_elond_is_the_tests_own() -> None:
    for spending in ("none", "basel", "geometric"):
        assert best_gate_alpha(0.05, spending, 7) == gate_alpha(0.05, spending, 7)


def test_elond_thresholds_and_reachability_follow_the_accepts() -> None:
    config = GateConfig(alpha_spending="elond", n_max=64)
    none = EProcessGate(config, gate_index=20)
    three = EProcessGate(config, gate_index=20, accepts=3)
    assert three.threshold == pytest.approx(none.threshold / 4)
    assert Ladder(config, 64, gate_index=20, accepts=3).threshold == pytest.approx(three.threshold)
    # Gate 1 needs 15 straight wins at alpha 0.05 and bet cap 1/2 (1/(0.05 gamma_1) = 373.7).
    assert reachability_for(config, 64).min_wins == 15
    assert not reachability_for(config, 14).reachable
    # Fixed accepts: the last reachable gate, exact; more accepts move it later.
    last = last_reachable_gate(config, 20)
    assert last is not None
    assert last > 1
    assert reachability_for(config, 20, last).reachable
    assert not reachability_for(config, 20, last + 1).reachable
    later = last_reachable_gate(config, 20, accepts=3)
    assert later is not None
    assert later > last


def test_the_guarantee_in_words() -> None:
    assert (
        run_guarantee(GateConfig())
        == "per test: expected false accepts <= sum of alpha over the opened tests"
    )
    for spending in ("basel", "geometric"):
        assert run_guarantee(GateConfig(alpha_spending=spending)) == "run-wide: P(any false accept) <= alpha"
    assert run_guarantee(GateConfig(alpha_spending="elond")) == (
        "run-wide: at most 5% of accepts are false, in expectation (e-LOND)"
    )
    assert "at most 2.5% of accepts" in run_guarantee(GateConfig(alpha=0.025, alpha_spending="elond"))
    assert run_guarantee(GateConfig(rule="minibatch", alpha_spending="elond")).startswith("none:")


def _simulated_runs(
    spending: str, *, alpha: float, runs: int, tests: int, n: int, null_share: float, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """Whole runs of ``tests`` tests one after another: each is a no-better edit (ties half the
    time, wins and losses alike) with probability ``null_share``, else a strong one (+0.4). Each
    test's level is fixed by the run's accepts so far. Returns each run's false discovery
    proportion, its accepts and its alternatives."""
    rng = np.random.default_rng(seed)
    config = GateConfig(alpha=alpha, alpha_spending=spending, n_max=n)
    accepts = np.zeros(runs, dtype=np.int64)
    false = np.zeros(runs, dtype=np.int64)
    real = np.zeros(runs, dtype=np.int64)
    for t in range(1, tests + 1):
        null = rng.random(runs) < null_share
        d = np.where(
            null[:, None],
            draw_observations(0.3, 0.3, runs, n, rng),
            draw_observations(0.45, 0.05, runs, n, rng),
        )
        accepted = np.zeros(runs, dtype=bool)
        for k in np.unique(accepts):  # one threshold per count of accepts so far
            rows = accepts == k
            gate = EProcessGate(config, gate_index=t, accepts=int(k))
            accepted[rows] = gate.run(d[rows]).kinds == DecisionKind.ACCEPT
        accepts += accepted
        false += accepted & null
        real += ~null
    return false / np.maximum(accepts, 1), accepts, real


def test_elond_keeps_the_false_discovery_rate_below_alpha_where_per_test_levels_do_not() -> None:
    alpha = 0.25
    fdp, accepts, real = _simulated_runs(
        "elond", alpha=alpha, runs=1000, tests=30, n=128, null_share=0.8, seed=11
    )
    assert fdp.mean() <= alpha
    assert accepts.mean() >= 0.8 * real.mean()  # and it still accepts most strong edits
    # The simulation can see a violation: per-test levels make a third or more of the accepts false.
    per_test, _, _ = _simulated_runs("none", alpha=alpha, runs=1000, tests=30, n=128, null_share=0.8, seed=11)
    assert per_test.mean() > alpha
