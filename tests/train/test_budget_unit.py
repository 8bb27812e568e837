"""The run's budget, on a stand-in session: what it counts, over how many invocations, and which
limit stops it (the stop points inside a guard are in test_guard_unit.py)."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from skillharness.train.config import BudgetConfig
from skillharness.train.state import budget
from skillharness.train.state.budget import BUDGET_REASONS, StopGuard, TrainingStopped
from skillharness.train.state.checkpoint import Spent


def _session(**roles: dict[str, float]) -> Any:
    return cast(Any, SimpleNamespace(usage=lambda: roles))


def _guard(
    budget: BudgetConfig, *, before: Spent | None = None, stop_file: Path | None = None, **roles: Any
) -> StopGuard:
    return StopGuard(budget, _session(**roles), stop_file=stop_file, before=before or Spent())


def _reason(guard: StopGuard) -> str | None:
    try:
        guard.check()
    except TrainingStopped as stopped:
        return stopped.context["reason"]
    return None


def test_spent_counts_model_calls_without_cache_hits_plus_what_earlier_invocations_spent() -> None:
    guard = _guard(
        BudgetConfig(),
        before=Spent(calls=100, cost=1.5, wall_s=60.0),
        agent={"calls": 40, "cache_hits": 15, "cost": 0.25},
        evolve={"calls": 3, "cost": 0.5},  # no cache hits recorded: none taken off
        judge={"cache_hits": 0},  # no calls, no cost recorded: nothing added
    )
    spent = guard.spent()
    assert spent.calls == 100 + 25 + 3
    assert spent.cost == pytest.approx(2.25)
    assert 60.0 <= spent.wall_s < 70.0


def test_usage_by_role_is_summed_over_invocations() -> None:
    before = Spent(calls=10, usage={"agent": {"calls": 12.0, "cache_hits": 2.0}, "evolve": {"calls": 1.0}})
    guard = _guard(BudgetConfig(), before=before, agent={"calls": 5.0, "cache_hits": 1.0, "cost": 0.5})
    usage = guard.spent().usage
    assert usage == {
        "agent": {"calls": 17.0, "cache_hits": 3.0, "cost": 0.5},
        "evolve": {"calls": 1.0},
    }
    assert before.usage["agent"] == {"calls": 12.0, "cache_hits": 2.0}  # the earlier total is kept as it was


def test_a_fresh_guard_counts_nothing_and_wall_time_from_its_start() -> None:
    guard = _guard(BudgetConfig())
    spent = guard.spent()
    assert (spent.calls, spent.cost) == (0, 0.0)
    assert 0.0 <= spent.wall_s < 5.0
    assert guard.before == Spent()
    late = StopGuard(BudgetConfig(), _session(), started=time.monotonic() - 30)
    assert 30.0 <= late.spent().wall_s < 40.0


def test_the_call_budget_is_the_runs_across_invocations_and_stops_at_its_limit() -> None:
    budget = BudgetConfig(max_calls=100)
    assert _reason(_guard(budget, before=Spent(calls=94), agent={"calls": 6, "cache_hits": 1})) is None
    assert _reason(_guard(budget, before=Spent(calls=94), agent={"calls": 6})) == "max_calls"
    with pytest.raises(TrainingStopped, match=r"call budget reached \(101 ≥ 100, every invocation"):
        _guard(budget, before=Spent(calls=95), agent={"calls": 6}).check()


def test_the_cost_and_wall_limits_stop_at_their_limit() -> None:
    cost = BudgetConfig(max_cost=2.0)
    assert _reason(_guard(cost, before=Spent(cost=1.0), agent={"cost": 0.99})) is None
    assert _reason(_guard(cost, before=Spent(cost=1.0), agent={"cost": 1.0})) == "max_cost"
    with pytest.raises(TrainingStopped, match=r"cost budget reached \(2\.5000 ≥ 2\.0\)"):
        _guard(cost, before=Spent(cost=2.5)).check()
    wall = BudgetConfig(max_wall_s=100.0)
    assert _reason(_guard(wall, before=Spent(wall_s=90.0))) is None
    assert _reason(_guard(wall, before=Spent(wall_s=100.0))) == "max_wall"
    with pytest.raises(TrainingStopped, match=r"wall-time budget reached \(120 s ≥ 100 s\)"):
        _guard(wall, before=Spent(wall_s=120.0)).check()


def test_no_limit_never_stops_and_a_limit_on_one_measure_ignores_the_others() -> None:
    huge = Spent(calls=10**9, cost=1e9, wall_s=1e9)
    assert _reason(_guard(BudgetConfig(), before=huge)) is None
    assert _reason(_guard(BudgetConfig(max_calls=10), before=Spent(cost=1e9, wall_s=1e9))) is None
    assert _reason(_guard(BudgetConfig(max_cost=1.0), before=Spent(calls=10**9, wall_s=1e9))) is None
    assert _reason(_guard(BudgetConfig(max_wall_s=10.0), before=Spent(calls=10**9, cost=1e9))) is None


def test_the_stop_file_stops_first_and_is_not_the_budget(tmp_path: Path) -> None:
    stop = tmp_path / "STOP"
    guard = _guard(BudgetConfig(max_calls=1), stop_file=stop)
    assert _reason(guard) is None
    stop.touch()
    with pytest.raises(TrainingStopped, match="stop file") as stopped:
        guard.check()
    assert stopped.value.context["reason"] == "stop_file"
    assert not stopped.value.budget
    # With both reached, the stop file is named (checked first).
    assert _reason(_guard(BudgetConfig(max_calls=1), stop_file=stop, before=Spent(calls=5))) == "stop_file"


def test_the_budget_reasons_are_the_three_limits() -> None:
    assert frozenset({"max_calls", "max_cost", "max_wall"}) == BUDGET_REASONS
    for reason in ("max_calls", "max_cost", "max_wall"):
        assert TrainingStopped("x", reason=reason).budget
    assert not TrainingStopped("x", reason="signal").budget
    assert not TrainingStopped("x").budget


def test_limits_are_shown_as_configured() -> None:
    guard = _guard(BudgetConfig(max_calls=8000, max_wall_s=3600.0))
    assert guard.limits() == {"calls": 8000, "cost": None, "wall_s": 3600.0}


def test_the_wall_limit_stops_at_exactly_its_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a frozen clock: 90 s before and 10 s in this invocation reach a 100 s limit."""
    monkeypatch.setattr(budget, "time", SimpleNamespace(monotonic=lambda: 1000.0))
    guard = StopGuard(BudgetConfig(max_wall_s=100.0), _session(), before=Spent(wall_s=90.0), started=990.0)
    assert guard.spent().wall_s == 100.0
    assert _reason(guard) == "max_wall"
    assert (
        _reason(
            StopGuard(BudgetConfig(max_wall_s=100.0), _session(), before=Spent(wall_s=89.5), started=990.0)
        )
        is None
    )
