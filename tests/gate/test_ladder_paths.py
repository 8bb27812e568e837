"""The ladder path by path: verdicts at a futile stage end, scalar/vector agreement on fine stages,
the evidence a decision records, and the published bet values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    INFRA,
    AGrapa,
    DecisionKind,
    EProcessGate,
    Ladder,
    OnlineNewtonStep,
    stage_ends,
    wealth_paths,
)
from skillharness.train.gate.ladder import decide_paths

STRATEGIES = ["agrapa", "ons"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_eight_straight_losses_in_one_final_stage_are_harm(strategy: str) -> None:
    config = GateConfig(n_max=8, first_stage=8, bet_strategy=strategy)
    decision = Ladder(config, drawable=8).feed([-1] * 8)
    assert decision.kind is DecisionKind.REJECT_EVIDENCE
    assert (decision.n, decision.losses, decision.next_request) == (8, 8, 0)
    assert decision.harm_wealth == pytest.approx(1.5**8)
    assert decision.wealth == pytest.approx(0.5)  # after the first loss the evidence bets nothing


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_eight_straight_wins_in_one_final_stage_accept(strategy: str) -> None:
    config = GateConfig(n_max=8, first_stage=8, bet_strategy=strategy)
    decision = Ladder(config, drawable=8).feed([1] * 8)
    assert decision.kind is DecisionKind.ACCEPT
    assert (decision.n, decision.wins) == (8, 8)
    assert decision.wealth == pytest.approx(1.5**8)


def test_harm_found_before_the_stage_end_is_reported_where_it_crossed() -> None:
    # Eight losses cross the harm threshold at the eighth observation, inside a 12-long stage.
    config = GateConfig(n_max=12, first_stage=12)
    decision = Ladder(config, drawable=12).feed([-1] * 8 + [1] * 4)
    assert decision.kind is DecisionKind.REJECT_EVIDENCE
    assert (decision.n, decision.wins, decision.losses) == (8, 0, 8)


def _ladder_verdict(config: GateConfig, budget: int, row: list[int]) -> tuple[DecisionKind, int]:
    gate, used = Ladder(config, drawable=budget), 0
    while True:
        request = gate.next_request
        decision = gate.feed(row[used : used + request])
        used += request
        if decision.terminal:
            return decision.kind, decision.n


def _paths(budget: int) -> list[list[int]]:
    rng = np.random.default_rng(12)
    fixed = [
        [-1] + [0] * (budget - 1),
        [1] + [0] * (budget - 1),
        [0] * budget,
        [1, -1] * (budget // 2),
        [1] * 3 + [0] * (budget - 3),
    ]
    drawn = rng.choice([-1, 0, 1], size=(40, budget), p=[0.25, 0.4, 0.35]).tolist()
    return [row[:budget] for row in fixed] + drawn


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(("budget", "first_stage", "growth"), [(20, 2, 1.5), (8, 8, 2.0), (12, 1, 1.0)])
def test_ladder_and_vectorized_decisions_agree_on_every_path(
    strategy: str, budget: int, first_stage: int, growth: float
) -> None:
    config = GateConfig(n_max=budget, first_stage=first_stage, stage_growth=growth, bet_strategy=strategy)
    paths = _paths(budget)
    vector = EProcessGate(config).run(np.asarray(paths, dtype=np.int8))
    for row, kind, n_used in zip(paths, vector.kinds, vector.n_used, strict=True):
        assert _ladder_verdict(config, budget, row) == (DecisionKind(int(kind)), int(n_used)), row


def test_one_loss_then_ties_stops_for_inertia_at_the_first_futile_stage_end() -> None:
    # Stage ends 2, 3, 5, 8, 12, 18, 20. Wealth 0.5 after the loss: 0.5 * 1.5^12 = 64.9 >= 20 at
    # n = 8, but 0.5 * 1.5^8 = 12.8 < 20 at n = 12, the first futile stage end.
    config = GateConfig(n_max=20, first_stage=2, stage_growth=1.5)
    assert stage_ends(2, 1.5, 20) == (2, 3, 5, 8, 12, 18, 20)
    path = [-1] + [0] * 19
    assert _ladder_verdict(config, 20, path) == (DecisionKind.REJECT_INERTIA, 12)
    vector = EProcessGate(config).run(np.asarray([path], dtype=np.int8))
    assert (int(vector.kinds[0]), int(vector.n_used[0])) == (DecisionKind.REJECT_INERTIA, 12)


def test_a_decision_records_wins_losses_and_ties_apart() -> None:
    gate = Ladder(GateConfig(n_max=20, first_stage=5), drawable=20)
    decision = gate.feed([1, 0, -1, 0, 0])
    assert decision.kind is DecisionKind.CONTINUE
    assert (decision.n, decision.wins, decision.losses, decision.ties, decision.infra) == (5, 1, 1, 3, 0)
    # aGRAPA: bets 1/2 on the win, then (1 + 1/2) / 2 capped at 1/2 on the loss: 1.5 * 0.5.
    assert decision.wealth == pytest.approx(0.75)
    # The harm process bets 1/2 on the first observation (a loss for it), then 0.
    assert decision.harm_wealth == pytest.approx(0.5)
    assert (decision.stage, decision.next_request, decision.threshold) == (1, 5, pytest.approx(20.0))


def test_the_record_of_a_decision_holds_every_field() -> None:
    decision = Ladder(GateConfig(n_max=8, first_stage=8), drawable=8).feed([1, 0, 0, 0, 0, 0, 0, 0])
    record = decision.to_record()
    assert record == {
        "kind": "reject_inertia",
        "wealth": pytest.approx(1.5),
        "harm_wealth": pytest.approx(0.5),
        "threshold": pytest.approx(20.0),
        "n": 8,
        "wins": 1,
        "losses": 0,
        "ties": 7,
        "infra": 0,
        "stage": 1,
        "next_request": 0,
    }


D = np.asarray([[1, -1, 0, 1, 1, -1]], dtype=np.int8)


def test_ons_bets_on_a_fixed_sequence() -> None:
    # lam_1 = 1/2; z = d / (1 + lam d); A = 1 + sum z^2; lam <- clip(lam + c z / A, 0, 1/2).
    c = 2.0 / (2.0 - math.log(3.0))
    a4 = 1 + (2 / 3) ** 2 + 4 + 1
    lam5 = c / a4
    z5 = 1 / (1 + lam5)
    lam6 = lam5 + c * z5 / (a4 + z5**2)
    assert lam5 == pytest.approx(0.344297, abs=1e-6)
    assert lam6 == pytest.approx(0.580161, abs=1e-6)  # above the cap: clipped
    expected = [0.5, 0.5, 0.0, 0.0, lam5, 0.5]
    assert OnlineNewtonStep(0.5).bets(D)[0] == pytest.approx(expected)
    assert OnlineNewtonStep(0.3).bets(D)[0] == pytest.approx([0.3, 0.3, 0.0, 0.0, 0.3, 0.3])


def test_ons_harm_bets_on_the_mirrored_sequence() -> None:
    c = 2.0 / (2.0 - math.log(3.0))
    # -d = [-1, 1, 0, -1, -1, 1]: the loss at the first step drives the bet to 0 at once.
    lam2 = max(0.0, 0.5 + c * (-2.0) / (1 + 4))
    z2 = 1 / (1 + lam2)
    lam3 = min(0.5, lam2 + c * z2 / (5 + z2**2))
    bets = OnlineNewtonStep(0.5).bets(-D)[0]
    assert bets[:4] == pytest.approx([0.5, lam2, lam3, lam3])
    assert lam2 == 0.0
    assert lam3 == pytest.approx(c / 6)


def test_agrapa_bets_on_a_fixed_sequence() -> None:
    # clip((W - L + 1/2) / (W + L + 1), 0, cap) over the past; the tie changes nothing.
    expected = [0.5, 0.5, 1 / 6, 1 / 6, 1.5 / 4, 2.5 / 5]
    assert AGrapa(0.5).bets(D)[0] == pytest.approx(expected)
    capped = [0.3, 0.3, 1 / 6, 1 / 6, 0.3, 0.3]
    assert AGrapa(0.3).bets(D)[0] == pytest.approx(capped)
    assert AGrapa(0.5).bets(-D)[0] == pytest.approx([0.5, 0.0, 1 / 6, 1 / 6, 0.0, 0.0])


def test_a_ladder_is_the_first_gate_of_its_run_unless_told() -> None:
    config = GateConfig(alpha_spending="geometric")
    assert Ladder(config, drawable=64).threshold == pytest.approx(40.0)
    assert Ladder(config, drawable=64, gate_index=2).threshold == pytest.approx(80.0)


def test_a_decided_gate_requests_nothing_more() -> None:
    gate = Ladder(GateConfig(n_max=16, first_stage=8), drawable=16)
    assert gate.next_request == 8
    assert gate.feed([1] * 4).next_request == 4  # the first stage is not complete yet
    assert gate.next_request == 4
    decision = gate.feed([1] * 4)
    assert decision.kind is DecisionKind.ACCEPT
    assert gate.next_request == 0


def test_infra_reads_as_infra_in_logs() -> None:
    assert repr(INFRA) == "INFRA"
    assert str([INFRA, 1]) == "[INFRA, 1]"


def test_paths_that_end_before_any_verdict_continue_with_what_they_used() -> None:
    paths = wealth_paths(np.zeros((2, 4), dtype=np.int8), AGrapa())
    result = decide_paths(paths, (8,), 20.0, 0.5, 8)
    assert result.kinds.tolist() == [DecisionKind.CONTINUE] * 2
    assert result.n_used.tolist() == [4, 4]


def test_checkpoints_past_the_data_are_skipped_and_earlier_ones_still_count() -> None:
    # Four ties; stage ends at 2 and 8 of a budget of 8: at 2, 1.5^6 = 11.4 < 20 is futile.
    paths = wealth_paths(np.zeros((1, 4), dtype=np.int8), AGrapa())
    result = decide_paths(paths, (2, 8), 20.0, 0.5, 8)
    assert (int(result.kinds[0]), int(result.n_used[0])) == (DecisionKind.REJECT_INERTIA, 2)
