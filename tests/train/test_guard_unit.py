"""The McNemar guard's staged asking, one seam at a time: an injected ``ask`` stands in for the two
arms, so each test runs in milliseconds (the end-to-end guard runs are in test_validate.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any, cast

import pytest

from skillharness.infer import Draw
from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    PairedOutcome,
    guard_draws_per_class,
    guard_power,
    guard_reach,
    mcnemar_harm_p,
)
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.context import TrainContext
from skillharness.train.validate import guard
from skillharness.train.validate.arms import GUARD_DRAW_BASE
from skillharness.train.validate.guard import (
    GUARD_STAGE,
    ClassTally,
    StagedDraws,
    StageRule,
    ask_in_stages,
    class_stop,
    guard_discordance,
    guard_evidence,
    guard_size,
    stage_rule,
)

WIN, LOSS, TIE, INFRA = (
    PairedOutcome(True, False),
    PairedOutcome(False, True),
    PairedOutcome(True, True),
    PairedOutcome(None, True),
)
NO_CLEARING = StageRule(harm=0.2, clear=None, discordance=0.3)


def _planned(sizes: Mapping[str, int]) -> dict[str, list[Draw]]:
    """Draws stand-ins: ``(class, i)``; the guard only slices and counts them."""
    return {t: cast(list[Draw], [(t, i) for i in range(n)]) for t, n in sizes.items()}


class _Asker:
    """An in-process stand-in for both arms: answers each draw with ``answer(class, i)``, logs each
    stage as ``(class, plan index of its first draw, draws)`` and, like ``Arms.outcomes``, checks the
    budget only between chunks of ``chunk`` draws."""

    def __init__(
        self,
        answer: Callable[[str, int], PairedOutcome],
        *,
        events: list[str] | None = None,
        chunk: int | None = None,
        check_stop: Callable[[], None] = lambda: None,
    ) -> None:
        self.answer, self.chunk, self.check_stop = answer, chunk, check_stop
        self.events = [] if events is None else events
        self.stages: list[list[tuple[str, int, int]]] = []
        self.asked = 0

    async def __call__(
        self, stage: Mapping[str, tuple[int, Sequence[Draw]]]
    ) -> dict[str, list[PairedOutcome]]:
        self.events.append("ask")
        total = sum(len(d) for _, d in stage.values())
        if self.chunk is not None:
            for _ in range(self.chunk, total, self.chunk):  # a check between chunks, never before the first
                self.check_stop()
        self.asked += total
        self.stages.append([(t, start, len(d)) for t, (start, d) in stage.items()])
        return {t: [self.answer(t, start + i) for i in range(len(d))] for t, (start, d) in stage.items()}


def _ties(_: str, __: int) -> PairedOutcome:
    return TIE


async def test_a_guard_over_12_classes_at_concurrency_48_stops_within_one_stage_of_the_budget() -> None:
    """A stage of 12 classes x 16 draws is no larger than the rollout's chunk at concurrency 48, so
    the rollout never checks inside it: the guard must check before every stage itself."""
    ctx = SimpleNamespace(
        config=SimpleNamespace(gate=GateConfig()),
        session=SimpleNamespace(agent_config=SimpleNamespace(concurrency=48)),
    )
    chunk = cast(int, TrainContext.stage_draws.fget(cast(TrainContext, ctx)))  # type: ignore[attr-defined]
    assert chunk >= 12 * GUARD_STAGE
    budget = 500
    asker: _Asker

    def check_stop() -> None:
        if asker.asked >= budget:
            raise TrainingStopped("call budget reached", reason="max_calls")

    asker = _Asker(_ties, chunk=chunk, check_stop=check_stop)
    planned = _planned({f"class {k}": 256 for k in range(12)})
    with pytest.raises(TrainingStopped):
        await ask_in_stages(asker, planned, NO_CLEARING, check_stop)
    assert budget <= asker.asked <= budget + 12 * GUARD_STAGE
    assert asker.asked < 12 * 256


async def test_the_budget_is_checked_before_every_stage_and_a_stop_keeps_the_stages_answered() -> None:
    events: list[str] = []
    checks = 0

    def check_stop() -> None:
        nonlocal checks
        events.append("check")
        checks += 1
        if checks == 3:
            raise TrainingStopped("stop file found", reason="stop_file")

    asker = _Asker(_ties, events=events)
    with pytest.raises(TrainingStopped):
        await ask_in_stages(asker, _planned({"A": 64, "B": 64}), NO_CLEARING, check_stop)
    assert events == ["check", "ask", "check", "ask", "check"]
    # The two stages answered before the stop are what the ask wrote: the resume reads them back.
    assert asker.stages == [[("A", 0, 16), ("B", 64, 16)], [("A", 16, 16), ("B", 80, 16)]]


async def test_rows_keep_their_index_in_the_whole_plan_and_stages_take_sixteen_draws_then_the_rest() -> None:
    asker = _Asker(_ties)
    staged = await ask_in_stages(asker, _planned({"A": 40, "B": 16, "C": 0}), NO_CLEARING, lambda: None)
    assert asker.stages == [
        [("A", 0, 16), ("B", 40, 16)],
        [("A", 16, 16)],
        [("A", 32, 8)],
    ]
    assert staged.asked == {"A": 40, "B": 16, "C": 0}
    assert staged.stops == {"A": "all", "B": "all", "C": "all"}
    assert staged.cleared == {}
    assert staged.tallies["A"] == ClassTally(ties=40)


async def test_a_class_its_draws_clear_stops_at_a_stage_end_and_is_asked_no_more() -> None:
    """Ties and wins clear a class of a 20-point drop; a class losing every discordant pair never."""

    def answer(t: str, i: int) -> PairedOutcome:
        if t == "harmless":
            return WIN if i % 4 == 0 else TIE
        return LOSS if i % 3 == 0 else INFRA if i % 3 == 1 else TIE

    rule = StageRule(harm=0.2, clear=0.05, discordance=0.3)
    asker = _Asker(answer)
    staged = await ask_in_stages(asker, _planned({"harmless": 96, "harmed": 96}), rule, lambda: None)
    assert staged.stops == {"harmless": "cleared", "harmed": "all"}
    cleared = staged.cleared["harmless"]
    assert cleared % GUARD_STAGE == 0
    assert 0 < cleared < 96
    assert staged.asked == {"harmless": cleared, "harmed": 96}
    assert all(t == "harmed" for stage in asker.stages[cleared // GUARD_STAGE :] for t, _, _ in stage)
    assert staged.tallies["harmed"] == ClassTally(losses=32, ties=32, infra=32)
    assert staged.infra == 32


async def test_a_sized_class_stops_once_its_draws_reach_its_own_discordance() -> None:
    """Sized at the run's discordance 0.3, a class with more asks on until its draws can see it."""

    def answer(t: str, i: int) -> PairedOutcome:
        discordant = i % 2 == 0 if t == "wide" else i % 4 == 0
        return (WIN if i % 4 < 2 else LOSS) if discordant else TIE

    rule = StageRule(harm=0.2, clear=None, discordance=0.3, reach={32: 0.31, 64: 0.45, 96: 0.55})
    staged = await ask_in_stages(_Asker(answer), _planned({"narrow": 128, "wide": 128}), rule, lambda: None)
    assert staged.stops == {"narrow": "sized", "wide": "sized"}
    assert staged.asked == {"narrow": 32, "wide": 96}


def test_class_stop_takes_all_draws_first_then_the_size_then_clearing() -> None:
    clearing = StageRule(harm=0.2, clear=0.05, discordance=0.3, reach={32: 0.3})
    clear_counts = ClassTally(wins=6, ties=26)
    assert class_stop(clear_counts, 32, 32, clearing) == "all"
    assert class_stop(clear_counts, 32, 64, clearing) == "sized"
    assert class_stop(clear_counts, 48, 64, clearing) == "cleared"
    assert class_stop(clear_counts, 48, 64, NO_CLEARING) is None
    # The size never goes below the run's discordance, however few draws the class saw discordant.
    assert class_stop(ClassTally(ties=32), 32, 64, StageRule(0.2, None, 0.35, {32: 0.3})) is None
    assert (
        class_stop(ClassTally(wins=5, losses=5, ties=22), 32, 64, StageRule(0.2, None, 0.3, {32: 0.3}))
        is None
    )
    assert (
        class_stop(ClassTally(wins=5, losses=4, ties=23), 32, 64, StageRule(0.2, None, 0.3, {32: 0.3}))
        == "sized"
    )
    assert class_stop(ClassTally(losses=10, ties=22), 32, 64, clearing) is None


def test_a_tally_counts_each_outcome_and_measures_discordance_on_answered_draws() -> None:
    tally = ClassTally().plus([WIN, WIN, LOSS, TIE, INFRA, INFRA])
    assert tally == ClassTally(wins=2, losses=1, ties=1, infra=2)
    assert tally.discordance == 0.75
    assert ClassTally(infra=3).discordance == 0.0


def test_the_stage_rule_lists_what_each_stage_end_can_see_when_the_guard_is_sized() -> None:
    gate = GateConfig()
    rule = stage_rule(gate, 12, 0.3, 256)
    assert (rule.harm, rule.clear, rule.discordance) == (0.2, 0.05, 0.3)
    assert set(rule.reach) == set(range(64, 257, GUARD_STAGE))  # 48 draws see no 20-point drop
    reach = [rule.reach[n] for n in sorted(rule.reach)]
    assert reach == sorted(reach)
    assert 0.2 <= reach[0] < 0.3 < 0.7 < reach[-1] <= 1.0
    assert rule.reach[96] == guard_reach(gate, 96, 0.05 / 12)
    one = stage_rule(gate, 1, 0.3, 64).reach  # one class: at alpha itself, and stage ends up to the most only
    assert one[64] == guard_reach(gate, 64, 0.05)
    assert max(stage_rule(gate, 1, 0.3, 63).reach) == 48
    assert stage_rule(gate, 12, 0.3, 40).reach == {}
    fixed = stage_rule(GateConfig(guard_draws=256, guard_clear=None), 12, 0.3, 256)
    assert (fixed.reach, fixed.clear) == ({}, None)


def test_the_guard_room_and_discordance() -> None:
    gate = GateConfig(guard_harm=0.15)
    scope = cast(Any, SimpleNamespace(guard_classes=("A", "B")))
    assert guard_size(gate, scope) == gate.guard_max_draws
    assert guard_size(GateConfig(guard_draws=40), scope) == 40
    assert guard_size(gate, cast(Any, SimpleNamespace(guard_classes=()))) == 0
    # Pooled over the guarded classes only, shrunk toward the prior, never below the drop.
    assert guard_discordance(
        gate, {"A": [40, 100], "B": [20, 100], "C": [0, 1000]}, ["A", "B"]
    ) == pytest.approx((60 + 0.5 * 32) / (200 + 32))
    assert guard_discordance(gate, {"C": [500, 1000]}, ["A"]) == 0.3
    assert guard_discordance(GateConfig(guard_harm=0.4), {"A": [10, 400]}, ["A"]) == 0.4


def test_the_guards_record_states_its_power_with_the_discordance_it_holds_for() -> None:
    gate = GateConfig()
    staged = StagedDraws(
        tallies={"A": ClassTally(wins=1, losses=12, ties=3), "B": ClassTally(wins=8, ties=8, infra=2)},
        asked={"A": 16, "B": 18},
        stops={"A": "all", "B": "cleared"},
    )
    record = guard_evidence(gate, staged, 2, 0.3, _planned({"A": 256, "B": 256}))
    assert record["harmed"] == ["A"]
    assert record["classes"]["A"] == {"wins": 1, "losses": 12, "p": mcnemar_harm_p(1, 12), "harmed": True}
    assert record["classes"]["B"] == {"wins": 8, "losses": 0, "p": 1.0, "harmed": False}
    assert (record["draws"], record["infra"], record["cleared"]) == (34, 2, {"B": 18})
    assert (record["alpha"], record["clear"]) == (0.05, 0.05)
    assert record["draws_per_class"] == guard_draws_per_class(gate, 2, discordance=0.3)[0] == 68
    assert record["draws_max"] == 256
    assert record["sized_for"] == {"harm": 0.2, "power": 0.8, "discordance": 0.3}
    # Sized by power, each class up to 256 draws: 0.8 for any harmed class up to that discordance.
    assert record["power"] == 0.8
    assert record["power_discordance"] == guard_reach(gate, 256, 0.025)
    assert record["power_discordance"] > 0.9
    # At temperature 0 a class with 40 fresh draws cannot keep 0.8 at 0.3: the power there is stated.
    few = guard_evidence(gate, staged, 2, 0.3, _planned({"A": 256, "B": 40}))
    assert few["power"] == pytest.approx(guard_power(gate, 40, 0.3, 0.025))
    assert few["power"] < 0.8
    assert few["power_discordance"] == 0.3
    fixed = guard_evidence(GateConfig(guard_draws=40), staged, 2, 0.4, _planned({"A": 40, "B": 40}))
    assert (fixed["sized_for"], fixed["draws_per_class"], fixed["draws_max"]) == (None, 40, 40)
    assert fixed["power"] == pytest.approx(guard_power(GateConfig(guard_draws=40), 40, 0.4, 0.025))
    assert fixed["power_discordance"] == 0.4
    # One guarded class: the level is alpha itself.
    lone = guard_evidence(gate, staged, 1, 0.3, _planned({"A": 64}))
    assert lone["power_discordance"] == guard_reach(gate, 64, 0.05)
    capped = guard_evidence(GateConfig(guard_max_draws=50), staged, 2, 0.3, _planned({"A": 50, "B": 50}))
    assert (capped["sized_for"], capped["draws_per_class"], capped["draws_max"]) == (None, 50, 50)


async def test_run_guard_asks_both_arms_in_stages_and_writes_each_stages_rows_at_their_plan_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The guard end to end on stand-ins for the pools, the arms and the store: fixed at 32 draws
    per class, every draw a tie (no class clears before its size)."""
    planned_n: list[int] = []

    def plan_draws(pool: tuple[str, ...], **kw: Any) -> list[Any]:
        planned_n.append(kw["n"])
        return [(SimpleNamespace(question_id=f"{pool[0]}{i}", task_type=pool[0]), i) for i in range(kw["n"])]

    monkeypatch.setattr(guard, "scope_pool", lambda _ctx, classes, _ids: classes)
    monkeypatch.setattr(guard, "plan_guard_draws", plan_draws)
    monkeypatch.setattr(guard, "draw_temperature", lambda _sampling: 0.7)
    written: list[Any] = []
    checks: list[str] = []

    async def aupsert(rows: list[Any]) -> None:
        written.append(rows)

    async def outcomes(draws: Sequence[Draw], check_stop: Callable[[], None]) -> list[PairedOutcome]:
        check_stop()  # the budget is handed on to the arms, for a stage larger than a rollout chunk
        return [TIE] * len(draws)

    ctx = SimpleNamespace(
        config=SimpleNamespace(gate=GateConfig(guard_draws=32), seed=0),
        session=SimpleNamespace(agent_config=SimpleNamespace(sampling=None)),
        run_id="run",
        store=SimpleNamespace(aupsert=aupsert),
    )
    record = await guard.run_guard(
        cast(Any, ctx),
        cast(Any, SimpleNamespace(outcomes=outcomes)),
        cast(Any, SimpleNamespace(guard_classes=("A", "B"))),
        cast(Any, SimpleNamespace(evidence_ids=())),
        cast(Any, SimpleNamespace(draws=(), first_sample=1)),
        3,
        cast(Any, SimpleNamespace(wealth=2.0, harm_wealth=0.5)),
        drawn=0,
        counts={},
        check_stop=lambda: checks.append("check"),
    )
    assert planned_n == [32, 32]
    assert checks == ["check"] * 4  # before each of the 2 stages, and in each stage's arms
    assert (record["draws"], record["harmed"], record["cleared"]) == (64, [], {})
    assert record["classes"]["A"] == {"wins": 0, "losses": 0, "p": 1.0, "harmed": False}
    assert [len(rows) for rows in written] == [32, 32]
    rows = [r for stage in written for r in stage]
    assert sorted(r.draw_index for r in rows) == list(range(GUARD_DRAW_BASE, GUARD_DRAW_BASE + 64))
    first = next(r for r in rows if r.draw_index == GUARD_DRAW_BASE + 32)
    assert (first.question_id, first.task_type, first.sample_idx) == ("B0", "B", 0)
    assert {(r.gate_index, r.arm, r.wealth, r.harm_wealth, r.train_run_id) for r in rows} == {
        (3, "guard", 2.0, 0.5, "run")
    }
