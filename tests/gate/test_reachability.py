"""Reachability and multiple testing (audit P0-3: an unreachable gate is refused up front)."""

from __future__ import annotations

import math

import pytest

from skillharness.errors import ConfigError
from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    DecisionKind,
    Ladder,
    ensure_reachable,
    gate_alpha,
    last_reachable_gate,
    min_net_wins,
    min_wins,
    reachability,
    reachability_for,
)


def test_p0_3_unreachable_gate_is_reported_before_spending() -> None:
    config = GateConfig(alpha=0.05, bet_cap=0.5, n_max=64)
    # Case 1: n_plan = 1 (one drawable observation) can never reach 1/alpha.
    assert not reachability(0.05, 0.5, 1).reachable
    with pytest.raises(ConfigError, match="unreachable") as info:
        Ladder(config, drawable=1, label="Spatial Reasoning")
    assert info.value.context["min_wins"] == 8
    assert "Spatial Reasoning" in str(info.value)
    # A budget of one observation is the same trap, whatever the pool size.
    with pytest.raises(ConfigError):
        Ladder(GateConfig(n_max=1), drawable=500)
    # Case 2: fewer drawable observations than the minimum number of wins.
    assert not reachability(0.05, 0.5, 7).reachable
    with pytest.raises(ConfigError, match="needs at least 8 wins"):
        ensure_reachable(config, drawable=7)
    # Exactly the minimum is reachable, and eight straight wins do accept.
    gate = Ladder(config, drawable=8)
    decision = gate.feed([1] * 8)
    assert decision.kind is DecisionKind.ACCEPT
    assert decision.n == 8


def test_min_wins_is_eight_at_alpha_005_and_half_cap() -> None:
    assert 1.5**7 < 20 <= 1.5**8
    assert min_wins(20.0, 0.5) == 8
    assert min_net_wins(alpha=0.05, bet_cap=0.5) == 8


@pytest.mark.parametrize(
    ("threshold", "cap"), [(20.0, 0.5), (1.5**8, 0.5), (100.0, 0.25), (2.0, 0.5), (40.0, 0.1)]
)
def test_min_wins_is_the_exact_smallest_power(threshold: float, cap: float) -> None:
    w = min_wins(threshold, cap)
    assert (1 + cap) ** w >= threshold
    assert w == 0 or (1 + cap) ** (w - 1) < threshold


def test_multiple_candidates_raise_the_threshold() -> None:
    one = reachability(0.05, 0.5, 64)
    five = reachability(0.05, 0.5, 64, n_candidates=5)
    assert five.threshold == pytest.approx(100.0)
    assert five.min_wins == 12  # 1.5^11 = 86.5 < 100 <= 129.7 = 1.5^12
    assert one.min_wins < five.min_wins
    assert not reachability(0.05, 0.5, 11, n_candidates=5).reachable


@pytest.mark.parametrize("spending", ["basel", "geometric"])
def test_alpha_spending_sums_to_at_most_alpha(spending: str) -> None:
    levels = [gate_alpha(0.05, spending, k) for k in range(1, 5000)]
    assert sum(levels) <= 0.05
    assert levels == sorted(levels, reverse=True)
    assert gate_alpha(0.05, "none", 7) == 0.05


def test_alpha_spending_makes_later_gates_need_more_wins() -> None:
    config = GateConfig(alpha_spending="basel")
    first = ensure_reachable(config, 64, gate_index=1)
    tenth = ensure_reachable(config, 64, gate_index=10)
    assert first.min_wins == math.ceil(math.log(math.pi**2 / 6 / 0.05) / math.log(1.5))
    assert tenth.min_wins > first.min_wins
    with pytest.raises(ConfigError):
        gate_alpha(0.05, "basel", 0)


@pytest.mark.parametrize("spending", ["basel", "geometric"])
@pytest.mark.parametrize("drawable", [8, 10, 16, 22, 64])
def test_p0_3_last_reachable_gate_is_exact_under_alpha_spending(spending: str, drawable: int) -> None:
    config = GateConfig(alpha_spending=spending)
    last = last_reachable_gate(config, drawable)
    assert last is not None
    assert all(reachability_for(config, drawable, k).reachable for k in range(1, last + 1))
    assert not reachability_for(config, drawable, last + 1).reachable


def test_p0_3_without_spending_every_gate_is_as_reachable_as_the_first() -> None:
    assert last_reachable_gate(GateConfig(), 8) is None
    assert last_reachable_gate(GateConfig(), 7) == 0
    assert last_reachable_gate(GateConfig(alpha_spending="geometric"), 8) == 0  # gate 1 gets 0.025
