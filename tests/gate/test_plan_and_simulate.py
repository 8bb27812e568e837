"""Power planning, simulation and the comparison rules on paths whose verdict is certain, and the
boundaries of Holm's procedure and of reachability."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skillharness.errors import ConfigError, GateError
from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    AGrapa,
    DecisionKind,
    EProcessGate,
    FixedNStandardError,
    OnlineNewtonStep,
    StrictlyBetterMinibatch,
    effect_rates,
    ensure_reachable,
    estimate_power,
    gate_alpha,
    make_bet_strategy,
    mcnemar_guard,
    mcnemar_harm_p,
    min_net_wins,
    min_wins,
    plan_classes,
    reachability,
    reachability_for,
    simulate,
)
from skillharness.train.gate.reachability import threshold
from skillharness.train.gate.simulate import draw_observations


def test_effect_rates_split_the_discordance() -> None:
    assert effect_rates(0.1, 0.3) == pytest.approx((0.2, 0.1))
    assert effect_rates(-0.1, 0.3) == pytest.approx((0.1, 0.2))
    assert effect_rates(1.0, 1.0) == (1.0, 0.0)  # both bounds are inclusive
    assert effect_rates(-0.3, 0.3) == pytest.approx((0.0, 0.3))


@pytest.mark.parametrize(
    ("delta", "discordance"), [(0.0, 0.0), (0.1, -0.2), (0.0, 1.01), (0.31, 0.3), (-0.4, 0.3)]
)
def test_effect_rates_refuse_impossible_effects(delta: float, discordance: float) -> None:
    with pytest.raises(ConfigError, match="discordance"):
        effect_rates(delta, discordance)


def test_power_is_certain_for_certain_paths_and_uses_the_smaller_budget() -> None:
    config = GateConfig(n_max=64)
    assert estimate_power(config, 8, 1.0, 1.0, runs=20) == 1.0  # eight straight wins accept
    assert estimate_power(config, 7, 1.0, 1.0, runs=20) == 0.0  # seven cannot: 1.5^7 < 20
    assert estimate_power(config, 0, 1.0, 1.0, runs=20) == 0.0
    assert estimate_power(config, 64, -1.0, 1.0, runs=20) == 0.0
    assert estimate_power(GateConfig(n_max=7), 100, 1.0, 1.0, runs=20) == 0.0


def test_plan_classes_reports_reachability_and_power_per_effect() -> None:
    plans = plan_classes(
        {"OCR": 8, "Counting": 7}, GateConfig(), effects=(1.0, -1.0), discordance=1.0, runs=20
    )
    ocr, counting = plans
    assert (ocr.label, ocr.drawable, ocr.reach.reachable, ocr.reach.min_wins) == ("OCR", 8, True, 8)
    assert ocr.power == ((1.0, 1.0), (-1.0, 0.0))
    assert (counting.label, counting.reach.reachable) == ("Counting", False)
    assert counting.power == ((1.0, 0.0), (-1.0, 0.0))


@pytest.mark.parametrize(
    ("p_plus", "p_minus", "value"), [(1.0, 0.0, 1), (0.0, 1.0, -1), (0.0, 0.0, 0), (0.5, 0.5, None)]
)
def test_draws_follow_the_rates(p_plus: float, p_minus: float, value: int | None) -> None:
    d = draw_observations(p_plus, p_minus, 50, 40, np.random.default_rng(0))
    assert d.shape == (50, 40)
    assert d.dtype == np.int8
    if value is not None:
        assert (d == value).all()
    else:
        assert set(np.unique(d).tolist()) == {-1, 1}


def test_draw_frequencies_match_the_rates() -> None:
    d = draw_observations(0.3, 0.2, 200, 100, np.random.default_rng(1))
    assert np.mean(d == 1) == pytest.approx(0.3, abs=0.02)
    assert np.mean(d == -1) == pytest.approx(0.2, abs=0.02)
    assert np.mean(d == 0) == pytest.approx(0.5, abs=0.02)


@pytest.mark.parametrize(("p_plus", "p_minus"), [(-0.1, 0.5), (0.5, -0.1), (0.6, 0.5)])
def test_impossible_rates_are_refused(p_plus: float, p_minus: float) -> None:
    with pytest.raises(ConfigError, match="p_plus"):
        draw_observations(p_plus, p_minus, 1, 1, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("p_plus", "p_minus", "rates", "mean_n"),
    [
        (1.0, 0.0, (1.0, 0.0, 0.0), 8.0),
        (0.0, 1.0, (0.0, 1.0, 0.0), 8.0),
        (0.0, 0.0, (0.0, 0.0, 1.0), 8.0),
    ],
)
def test_simulation_summary_of_certain_paths(
    p_plus: float, p_minus: float, rates: tuple[float, float, float], mean_n: float
) -> None:
    gate = EProcessGate(GateConfig(n_max=8, first_stage=8))
    summary = simulate(gate, p_plus, p_minus, n=8, runs=30, seed=4)
    assert (summary.accept_rate, summary.harm_reject_rate, summary.inertia_rate) == rates
    assert summary.mean_observations == mean_n
    assert (summary.rule, summary.p_plus, summary.p_minus, summary.runs) == (gate.name, p_plus, p_minus, 30)


def test_a_simulation_needs_at_least_one_run_and_one_observation() -> None:
    gate = EProcessGate(GateConfig(n_max=8))
    assert simulate(gate, 1.0, 0.0, n=1, runs=1).inertia_rate == 1.0
    for runs, n in ((0, 8), (8, 0)):
        with pytest.raises(ConfigError, match="runs and n"):
            simulate(gate, 0.5, 0.1, n=n, runs=runs)


def test_accept_margin_is_z_binomial_standard_errors() -> None:
    summary = simulate(StrictlyBetterMinibatch(), 0.5, 0.0, n=3, runs=400, seed=2)
    p = summary.accept_rate
    assert 0 < p < 1
    assert summary.accept_margin() == pytest.approx(3 * math.sqrt(p * (1 - p) / 400))
    assert summary.accept_margin(2.0) == pytest.approx(2 * math.sqrt(p * (1 - p) / 400))
    certain = simulate(StrictlyBetterMinibatch(), 1.0, 0.0, n=3, runs=100)
    assert certain.accept_margin() == pytest.approx(3 * math.sqrt(1e-12 / 100))


def test_the_e_process_gate_uses_at_most_n_max_columns() -> None:
    d = np.asarray([[0] * 7 + [1] * 20], dtype=np.int8)
    result = EProcessGate(GateConfig(n_max=7, first_stage=7)).run(d)
    assert (int(result.kinds[0]), int(result.n_used[0])) == (DecisionKind.REJECT_INERTIA, 7)
    assert EProcessGate(GateConfig(alpha_spending="geometric"), gate_index=2).threshold == pytest.approx(80.0)
    assert EProcessGate(GateConfig(n_candidates=3)).threshold == pytest.approx(60.0)


def test_strictly_better_minibatch_judges_the_sign_of_its_sum() -> None:
    d = np.asarray([[1, 0, 0, -1], [1, -1, 0, 1], [-1, 0, 0, 1], [1, 1, -1, -1]], dtype=np.int8)
    result = StrictlyBetterMinibatch(size=3).run(d)
    assert result.kinds.tolist() == [
        DecisionKind.ACCEPT,
        DecisionKind.REJECT_INERTIA,
        DecisionKind.REJECT_EVIDENCE,
        1,
    ]
    assert result.n_used.tolist() == [3, 3, 3, 3]
    assert StrictlyBetterMinibatch(size=3).run(d[:, :2]).n_used.tolist() == [2, 2, 2, 2]


def test_fixed_n_standard_error_rule() -> None:
    strong = [1] * 15 + [0]
    harmful = [-1] * 15 + [0]
    noisy = [1, -1] * 8
    d = np.asarray([strong, harmful, noisy], dtype=np.int8)
    result = FixedNStandardError(n=16, z=2.0).run(d)
    assert result.kinds.tolist() == [
        DecisionKind.ACCEPT,
        DecisionKind.REJECT_EVIDENCE,
        DecisionKind.REJECT_INERTIA,
    ]
    assert result.n_used.tolist() == [16, 16, 16]
    # mean 0.5 with 8 of 16 wins: se = sqrt(0.2667 / 16) = 0.129; 0.5 > 2 se but not > 4 se.
    half = np.asarray([[1] * 8 + [0] * 8], dtype=np.int8)
    assert FixedNStandardError(n=16, z=2.0).run(half).kinds.tolist() == [DecisionKind.ACCEPT]
    assert FixedNStandardError(n=16, z=4.0).run(half).kinds.tolist() == [DecisionKind.REJECT_INERTIA]
    one = FixedNStandardError(n=1).run(np.asarray([[1], [-1], [0]], dtype=np.int8))
    assert one.kinds.tolist() == [
        DecisionKind.ACCEPT,
        DecisionKind.REJECT_EVIDENCE,
        DecisionKind.REJECT_INERTIA,
    ]


def test_mcnemar_edge_counts() -> None:
    assert mcnemar_harm_p(0, 0) == 1.0
    assert mcnemar_harm_p(5, 0) == 1.0  # no loss at all: no evidence of harm
    assert mcnemar_harm_p(0, 1) == pytest.approx(0.5)
    assert mcnemar_harm_p(0, 3) == pytest.approx(0.125)
    with pytest.raises(GateError, match="non-negative"):
        mcnemar_harm_p(2, -1)


def test_holm_steps_down_through_the_family() -> None:
    # p = 1/4096 (12 of 12), 1/64 (6 of 6) and 1/8 (3 of 3); Holm compares them with 0.05/3,
    # 0.05/2 and 0.05/1: the first two are flagged, the third is not.
    results = mcnemar_guard({"a": (0, 12), "b": (0, 6), "c": (0, 3)}, alpha=0.05)
    assert [(r.label, r.harmed) for r in results] == [("a", True), ("b", True), ("c", False)]
    # A p-value exactly at its Holm level is flagged: 1/8 at alpha 1/8 alone.
    (exact,) = mcnemar_guard({"x": (0, 3)}, alpha=0.125)
    assert exact.harmed
    assert (exact.wins, exact.losses, exact.p_value) == (0, 3, pytest.approx(0.125))
    # Once one class is not flagged, no later (larger) p-value is.
    results = mcnemar_guard({"a": (0, 12), "b": (3, 3), "c": (0, 6)}, alpha=0.05)
    assert [r.harmed for r in results] == [True, False, True]
    assert mcnemar_guard({}) == ()


def test_reachability_boundaries() -> None:
    assert min_wins(1.0, 0.5) == 0
    assert min_wins(1.5, 0.5) == 1
    assert min_wins(1.51, 0.5) == 2
    assert min_net_wins(alpha=0.05, bet_cap=0.5) == 8
    assert min_net_wins(alpha=0.05, bet_cap=0.5, n_candidates=2) == 10  # 1.5^9 = 38.4 < 40
    reach = reachability(0.05, 0.5, 8)
    assert (reach.threshold, reach.min_wins, reach.reachable) == (20.0, 8, True)
    assert reach.max_wealth == pytest.approx(1.5**8)
    assert not reachability(0.05, 0.5, 7).reachable
    assert reachability_for(GateConfig(n_max=7), 100).drawable == 7
    assert reachability_for(GateConfig(n_max=64), 9).drawable == 9
    assert min_wins(1e300, 0.5) == 1704  # 1.5^1703 < 1e300 <= 1.5^1704
    # Millions of wins: beyond any budget, the estimate is returned without the exact product.
    assert min_wins(100.0, 1e-6) == math.ceil(math.log(100.0) / math.log1p(1e-6))


def test_alpha_spending_levels() -> None:
    assert gate_alpha(0.05) == 0.05
    assert gate_alpha(0.05, "basel", 1) == pytest.approx(0.05 * 6 / math.pi**2)
    assert gate_alpha(0.05, "basel", 2) == pytest.approx(0.05 * 6 / (4 * math.pi**2))
    assert gate_alpha(0.05, "geometric", 3) == pytest.approx(0.05 / 8)
    with pytest.raises(ConfigError, match="gate_index"):
        gate_alpha(0.05, "none", 0)
    with pytest.raises(ConfigError, match="unknown alpha spending"):
        gate_alpha(0.05, "linear", 1)


def test_defaults_are_the_documented_ones() -> None:
    # Power figures, plans and simulations are reproducible: their defaults are part of the method.
    config = GateConfig(n_max=16, first_stage=4)
    assert estimate_power(config, 16, 0.2, 0.3) == estimate_power(config, 16, 0.2, 0.3, runs=2000, seed=0)
    (plan,) = plan_classes({"OCR": 16}, config)
    assert [delta for delta, _ in plan.power] == [0.05, 0.10, 0.20]
    assert plan.power[2][1] == estimate_power(config, 16, 0.2, 0.3, runs=2000, seed=0)
    gate = EProcessGate(config)
    summary = simulate(gate, 0.3, 0.1, n=16)
    assert summary == simulate(gate, 0.3, 0.1, n=16, runs=5000, seed=0)
    assert summary.runs == 5000
    assert AGrapa().cap == 0.5
    assert OnlineNewtonStep().cap == 0.5
    assert StrictlyBetterMinibatch().size == 3
    assert (FixedNStandardError().n, FixedNStandardError().z) == (64, 2.0)


def test_a_one_observation_budget_can_still_accept_at_a_loose_level() -> None:
    config = GateConfig(alpha=0.9, n_max=8, first_stage=1)
    assert estimate_power(config, 1, 1.0, 1.0, runs=10) == 1.0


def test_the_first_gate_of_a_run_is_the_default_everywhere() -> None:
    spent = GateConfig(alpha_spending="geometric")
    assert gate_alpha(0.05, "geometric") == pytest.approx(0.025)
    assert reachability_for(spent, 64).threshold == pytest.approx(40.0)
    assert ensure_reachable(spent, 64).threshold == pytest.approx(40.0)
    assert EProcessGate(spent).threshold == pytest.approx(40.0)
    assert threshold(0.05) == pytest.approx(20.0)


def test_an_unknown_bet_strategy_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown bet strategy 'kelly'"):
        make_bet_strategy("kelly", 0.5)
    assert isinstance(make_bet_strategy("agrapa", 0.3), AGrapa)
    assert isinstance(make_bet_strategy("ons", 0.3), OnlineNewtonStep)


def test_holm_stops_at_the_first_class_it_does_not_flag() -> None:
    # p = 1/4096, 1/32, 1/32: the second misses 0.05/2, so the third (which alone would pass
    # 0.05/1) is not flagged either.
    results = mcnemar_guard({"a": (0, 12), "b": (0, 5), "c": (0, 5)}, alpha=0.05)
    assert [r.harmed for r in results] == [True, False, False]


def test_fixed_n_rule_at_its_defaults_and_boundaries() -> None:
    # 7 wins in the first 64 (then losses it must not read): mean/se = 2.78, between 2 and 3.
    d = np.asarray([[1] * 7 + [0] * 57 + [-1] * 36], dtype=np.int8)
    result = FixedNStandardError().run(d)
    assert (result.kinds.tolist(), result.n_used.tolist()) == ([DecisionKind.ACCEPT], [64])
    assert FixedNStandardError(z=3.0).run(d).kinds.tolist() == [DecisionKind.REJECT_INERTIA]
    # Sample standard deviation (ddof = 1): 4 wins of 16 give mean/se = 2.236, just above 2.2.
    four = np.asarray([[1] * 4 + [0] * 12], dtype=np.int8)
    assert FixedNStandardError(n=16, z=2.2).run(four).kinds.tolist() == [DecisionKind.ACCEPT]
    assert FixedNStandardError(n=16, z=2.3).run(four).kinds.tolist() == [DecisionKind.REJECT_INERTIA]
    # Two observations already have a standard error; all ties are neither better nor worse.
    two = FixedNStandardError(n=2).run(np.asarray([[1, 0], [0, 0]], dtype=np.int8))
    assert two.kinds.tolist() == [DecisionKind.REJECT_INERTIA, DecisionKind.REJECT_INERTIA]
    ties = FixedNStandardError(n=16).run(np.zeros((1, 16), dtype=np.int8))
    assert ties.kinds.tolist() == [DecisionKind.REJECT_INERTIA]


def test_a_vanishing_bet_cap_needs_an_astronomical_count_returned_at_once() -> None:
    # 1 + 1e-300 is 1.0 in floats: counting factor by factor would never end.
    assert min_wins(100.0, 1e-300) == math.ceil(math.log(100.0) / math.log1p(1e-300))
