"""The simulator's call-span counters: first start, last finish, and calls in flight over time."""

from __future__ import annotations

import pytest

from skillharness.sim import stats as stats_module
from skillharness.sim.stats import SimStats


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_span_and_in_flight_integral(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(stats_module.time, "time", clock)
    stats = SimStats()
    assert stats.snapshot()["first_start_epoch_s"] is None
    stats.start()  # t = 1000: one call
    clock.now = 1001.0
    stats.start()  # t = 1001: two calls
    clock.now = 1003.0
    stats.finish()  # t = 1003: one call left
    clock.now = 1004.0
    stats.finish()
    snap = stats.snapshot()
    assert snap["first_start_epoch_s"] == 1000.0
    assert snap["last_finish_epoch_s"] == 1004.0
    assert snap["call_seconds_in_flight"] == pytest.approx(1 * 1 + 2 * 2 + 1 * 1)  # 6 call-seconds


def test_reset_starts_a_new_span(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(stats_module.time, "time", clock)
    stats = SimStats()
    stats.start()
    clock.now = 1010.0
    stats.finish()
    stats.reset()
    snap = stats.snapshot()
    assert (snap["first_start_epoch_s"], snap["last_finish_epoch_s"], snap["call_seconds_in_flight"]) == (
        None,
        None,
        0.0,
    )
