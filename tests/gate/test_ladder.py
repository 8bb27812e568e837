"""The ladder's decisions: futility at the exact boundary, INFRA, ties, and scalar/vector agreement."""

from __future__ import annotations

import numpy as np
import pytest

from skillharness.errors import ConfigError, GateError
from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    INFRA,
    AGrapa,
    DecisionKind,
    EProcessGate,
    Ladder,
    OnlineNewtonStep,
    PairedOutcome,
    stage_ends,
)


def test_futility_stop_exactly_at_the_boundary() -> None:
    config = GateConfig(alpha=0.05, bet_cap=0.5, n_max=10, first_stage=2, stage_growth=5.0)
    # After 2 ties, 8 remain: 1.5^8 = 25.6 >= 20, so the gate must go on...
    gate = Ladder(config, drawable=10)
    first = gate.feed([0, 0])
    assert first.kind is DecisionKind.CONTINUE
    assert first.next_request == 8
    # ...and the bound is attained: eight wins accept at the very last observation.
    last = gate.feed([1] * 8)
    assert last.kind is DecisionKind.ACCEPT
    assert (last.n, last.wins, last.ties) == (10, 8, 2)
    assert last.wealth == pytest.approx(1.5**8)
    # After 3 ties only 7 remain: 1.5^7 = 17.1 < 20, so stop now.
    stalled = Ladder(config.model_copy(update={"first_stage": 3}), drawable=10).feed([0, 0, 0])
    assert stalled.kind is DecisionKind.REJECT_INERTIA
    assert stalled.n == 3


def test_futility_counts_the_wealth_already_lost() -> None:
    config = GateConfig(n_max=10, first_stage=2)
    # A win then a loss: 1.5 * 0.5 = 0.75, and 0.75 * 1.5^8 = 19.2 < 20 although 8 remain.
    decision = Ladder(config, drawable=10).feed([1, -1])
    assert decision.kind is DecisionKind.REJECT_INERTIA
    assert decision.wealth == pytest.approx(0.75)
    assert (decision.wins, decision.losses) == (1, 1)


def test_p1_4_infra_is_neither_a_win_nor_a_loss() -> None:
    gate = Ladder(GateConfig(n_max=20, first_stage=4), drawable=20)
    stage = [PairedOutcome(True, None), INFRA, None, PairedOutcome(None, False), PairedOutcome(True, True), 0]
    decision = gate.feed(stage)
    assert decision.kind is DecisionKind.CONTINUE
    assert (decision.n, decision.ties, decision.infra) == (2, 2, 4)
    assert decision.wealth == 1.0
    assert decision.next_request == 2  # the first stage still needs two observations


def test_a_stage_of_only_infra_leaves_the_gate_undecided_and_asks_it_again() -> None:
    gate = Ladder(GateConfig(n_max=20, first_stage=4), drawable=20)
    # An outage as the very first stage used to raise numpy's "argmax of an empty sequence".
    outage = gate.feed([INFRA, None, PairedOutcome(None, True), PairedOutcome(False, None)])
    assert outage.kind is DecisionKind.CONTINUE
    assert (outage.n, outage.infra, outage.stage, outage.wealth) == (0, 4, 0, 1.0)
    assert outage.next_request == gate.next_request == 4  # the same stage, asked again
    first = gate.feed([1, 1, 0, 1])
    assert (first.kind, first.n, first.infra, first.stage) == (DecisionKind.CONTINUE, 4, 4, 1)
    # An outage after some evidence keeps that evidence and the stage still owed.
    again = gate.feed([INFRA] * 3)
    assert again.kind is DecisionKind.CONTINUE
    assert (again.n, again.wins, again.infra, again.next_request) == (4, 3, 7, first.next_request)
    assert again.wealth == first.wealth
    assert gate.wealth_path()[0][-1] == pytest.approx(first.wealth)


def test_paired_outcomes_map_to_wins_losses_and_ties() -> None:
    assert PairedOutcome(True, False).d == 1
    assert PairedOutcome(False, True).d == -1
    assert PairedOutcome(False, False).d == 0
    assert PairedOutcome(None, True).d is None
    with pytest.raises(GateError, match="observation must be"):
        Ladder(GateConfig(), drawable=64).feed([2])


def test_harmful_run_ends_in_reject_evidence() -> None:
    decision = Ladder(GateConfig(), drawable=64).feed([-1] * 8)
    assert decision.kind is DecisionKind.REJECT_EVIDENCE
    assert decision.harm_wealth >= 20
    assert decision.losses == 8


def test_a_decided_gate_refuses_more_data_and_budget_is_enforced() -> None:
    gate = Ladder(GateConfig(n_max=16), drawable=16)
    with pytest.raises(GateError, match="budget"):
        gate.feed([0] * 17)
    gate.feed([1] * 8)
    assert gate.next_request == 0
    with pytest.raises(GateError, match="already decided"):
        gate.feed([1])


def test_stage_ends_grow_and_stop_at_the_budget() -> None:
    assert stage_ends(8, 2.0, 64) == (8, 16, 32, 64)
    assert stage_ends(8, 2.0, 50) == (8, 16, 32, 50)
    assert stage_ends(8, 1.0, 11) == (8, 9, 10, 11)
    assert stage_ends(20, 2.0, 10) == (10,)


@pytest.mark.parametrize("strategy", ["agrapa", "ons"])
def test_scalar_ladder_agrees_with_vectorized_gate(strategy: str) -> None:
    config = GateConfig(n_max=48, first_stage=6, stage_growth=1.5, bet_strategy=strategy)
    rng = np.random.default_rng(7)
    d = rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=(150, 48), p=[0.2, 0.45, 0.35])
    vector = EProcessGate(config).run(d)
    for row, kind, n_used in zip(d, vector.kinds, vector.n_used, strict=True):
        gate, used = Ladder(config, drawable=48), 0
        while True:
            request = gate.next_request
            decision = gate.feed(row[used : used + request].tolist())
            used += request
            if decision.terminal:
                break
        assert (decision.kind, decision.n) == (DecisionKind(int(kind)), int(n_used))


def test_alpha_spending_raises_the_threshold_of_later_gates() -> None:
    config = GateConfig(alpha_spending="geometric", n_max=64)
    first = Ladder(config, drawable=64, gate_index=1)
    third = Ladder(config, drawable=64, gate_index=3)
    assert first.threshold == pytest.approx(40.0)
    assert third.threshold == pytest.approx(160.0)
    # 1.5^9 = 38.4 < 40 <= 57.7 = 1.5^10: ten straight wins are needed at the first gate, not eight.
    assert first.reach.min_wins == 10
    assert first.feed([1] * 9).kind is DecisionKind.CONTINUE
    decision = first.feed([1])
    assert decision.kind is DecisionKind.ACCEPT
    assert decision.to_record()["kind"] == "accept"
    assert decision.to_record()["n"] == 10


def test_long_budgets_do_not_overflow() -> None:
    config = GateConfig(n_max=5000, first_stage=4)
    gate = Ladder(config, drawable=5000)
    assert gate.reach.max_wealth == float("inf")
    assert gate.feed([0, 0, -1, -1]).kind is DecisionKind.CONTINUE


def test_futility_stop_is_sound_at_a_float_boundary() -> None:
    # 1/alpha = 1.3^2: two wins reach the threshold exactly, so a rounding error in the log bound
    # must not stop the gate after the first win.
    gate = Ladder(GateConfig(alpha=1 / 1.3**2, bet_cap=0.3, n_max=2, first_stage=1), drawable=2)
    assert gate.feed([1]).kind is DecisionKind.CONTINUE
    assert gate.feed([1]).kind is DecisionKind.ACCEPT


@pytest.mark.parametrize("cap", [0.5, 0.4, 0.3, 0.25, 0.1])
def test_min_wins_straight_wins_accept_and_the_budget_always_decides(cap: float) -> None:
    # At 1/alpha = (1 + cap)^k, pow and the running product of the wealth can differ in the last
    # bit: reachability must count wins as the wealth does, and a gate at its budget must end.
    for k in range(1, 40):
        config = GateConfig(alpha=1 / (1 + cap) ** k, bet_cap=cap, n_max=64, first_stage=64)
        wins = Ladder(config, drawable=64).reach.min_wins
        exact = GateConfig(alpha=config.alpha, bet_cap=cap, n_max=wins, first_stage=wins)
        assert Ladder(exact, drawable=wins).feed([1] * wins).kind is DecisionKind.ACCEPT, (cap, k)
        assert Ladder(exact, drawable=wins).feed([0] * wins).kind is DecisionKind.REJECT_INERTIA, (cap, k)


@pytest.mark.parametrize("flag", [True, np.True_, np.False_])
def test_a_correctness_flag_is_not_mistaken_for_an_observation(flag: object) -> None:
    # A caller passing one side's correctness instead of d must be told, not counted as a win or tie.
    with pytest.raises(GateError, match="observation must be"):
        Ladder(GateConfig(), drawable=64).feed([flag])
    assert Ladder(GateConfig(), drawable=64).feed([np.int8(1), np.int64(-1)]).n == 2


@pytest.mark.parametrize("cap", [0.0, -0.1, 0.75, 1.5])
def test_bet_strategies_refuse_caps_outside_zero_to_half(cap: float) -> None:
    # Past 1 a loss would make wealth negative; past 1/2 the ONS step constant no longer holds.
    for kind in (AGrapa, OnlineNewtonStep):
        with pytest.raises(ConfigError, match="bet cap"):
            kind(cap)


def test_a_strategy_betting_above_the_configured_cap_is_refused() -> None:
    # Reachability and the futility stop bound every factor by 1 + gate.bet_cap.
    with pytest.raises(ConfigError, match=r"exceeds gate\.bet_cap"):
        Ladder(GateConfig(bet_cap=0.25), drawable=64, strategy=AGrapa(0.5))
    assert Ladder(GateConfig(bet_cap=0.5), drawable=64, strategy=OnlineNewtonStep(0.25)).strategy.cap == 0.25
