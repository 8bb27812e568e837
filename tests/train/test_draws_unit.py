"""The draw plan's exact arithmetic: which draws, at which sample indices, and where the next gate
starts. Pure functions; the behaviour over a whole run is in test_draws.py and test_validate.py."""

from __future__ import annotations

from collections import Counter

import pytest
from unit_support import questions

from skillharness.errors import ConfigError
from skillharness.llm import PER_DRAW, SamplingParams
from skillharness.train.state.draws import (
    DrawPlan,
    draw_temperature,
    gate_budget,
    plan_draws,
    plan_guard_draws,
)

POOL = questions("OCR Problems", 10)


def _ids(draws: object) -> list[tuple[str, int]]:
    return [(q.question_id, s) for q, s in draws]  # type: ignore[attr-defined]


# --- the plan is pinned: a replay must draw exactly what the first attempt drew -----------------


def test_a_plan_is_pinned_to_its_seed_gate_and_salt() -> None:
    """Literal values: a change of the hash that seeds the plan would silently change every replay."""
    greedy = plan_draws(POOL, seed=7, gate_index=3, temperature=0.0, n_max=4)
    assert [q.question_id for q, _ in greedy.draws] == [
        "ocr001-1", "ocr004-1", "ocr000-1", "ocr005-1", "ocr006-1",
        "ocr009-1", "ocr007-1", "ocr002-1", "ocr008-1", "ocr003-1",
    ]  # fmt: skip
    sampled = plan_draws(POOL, seed=7, gate_index=3, temperature=0.7, n_max=4, spare=2)
    assert _ids(sampled.draws) == [
        ("ocr009-1", 0), ("ocr007-1", 0), ("ocr001-1", 0), ("ocr004-1", 0), ("ocr000-1", 0), ("ocr009-1", 1),
    ]  # fmt: skip
    other_salt = plan_draws(POOL, seed=7, gate_index=3, temperature=0.7, n_max=4, spare=2, salt="guard")
    assert other_salt.draws != sampled.draws


def test_the_pool_is_read_by_question_id_whatever_its_order_and_duplicates() -> None:
    plan = plan_draws(POOL, seed=1, gate_index=2, temperature=0.7, n_max=12)
    assert plan_draws([*reversed(POOL), POOL[3]], seed=1, gate_index=2, temperature=0.7, n_max=12) == plan
    assert plan.distinct == 10


# --- temperature 0: each question once, a prefix consumed --------------------------------------


def test_at_temperature_0_the_plan_is_every_question_once_whatever_the_size() -> None:
    small = plan_draws(POOL, seed=5, gate_index=1, temperature=0.0, n_max=3, first_sample=9)
    large = plan_draws(POOL, seed=5, gate_index=1, temperature=0.0, n_max=64, first_sample=9)
    assert small.draws == large.draws  # one permutation: the ladder consumes a prefix of it
    assert sorted(q.question_id for q, _ in small.draws) == [q.question_id for q in POOL]
    assert {s for _, s in small.draws} == {0}  # a second sample would replay the first
    assert (small.budget, large.budget, small.distinct, small.with_replacement) == (3, 10, 10, False)
    assert small.first_sample == 9
    assert small.samples_end(guard_draws=50) == 9  # nothing used up


def test_at_temperature_0_a_guard_draws_from_what_the_consumed_prefix_left() -> None:
    plan = plan_draws(POOL, seed=5, gate_index=1, temperature=0.0, n_max=10)
    consumed = plan.draws[:4]
    guard = plan_guard_draws(POOL, seed=5, gate_index=1, temperature=0.0, n=3, used=consumed, label="x")
    assert len(guard) == 3
    assert {s for _, s in guard} == {0}
    left = {q.question_id for q, _ in plan.draws[4:]}
    assert {q.question_id for q, _ in guard} <= left
    every = plan_guard_draws(POOL, seed=5, gate_index=1, temperature=0.0, n=99, used=consumed, label="x")
    assert sorted(q.question_id for q, _ in every) == sorted(left)  # fewer than n: all that is left
    none_left = plan_guard_draws(POOL, seed=5, gate_index=1, temperature=0.0, n=5, used=plan.draws, label="x")
    assert none_left == ()


# --- with replacement: fresh sample indices ----------------------------------------------------


def test_with_replacement_each_question_counts_its_samples_from_the_first() -> None:
    plan = plan_draws(POOL[:3], seed=2, gate_index=4, temperature=0.7, n_max=8, first_sample=5)
    assert (len(plan.draws), plan.budget, plan.distinct, plan.with_replacement) == (16, 8, 3, True)
    seen: Counter[str] = Counter()
    for q, s in plan.draws:
        assert s == 5 + seen[q.question_id]
        seen[q.question_id] += 1
    assert plan.samples_end(guard_draws=0) == max(s for _, s in plan.draws) + 1
    assert plan.samples_end(guard_draws=7) == max(s for _, s in plan.draws) + 8


def test_the_spare_draws_replace_infra_and_default_to_n_max() -> None:
    assert len(plan_draws(POOL, seed=0, gate_index=0, temperature=0.5, n_max=6, spare=0).draws) == 6
    assert len(plan_draws(POOL, seed=0, gate_index=0, temperature=0.5, n_max=6, spare=3).draws) == 9
    longer = plan_draws(POOL, seed=0, gate_index=0, temperature=0.5, n_max=6)
    assert len(longer.draws) == 12
    assert longer.draws[:6] == plan_draws(POOL, seed=0, gate_index=0, temperature=0.5, n_max=6, spare=0).draws


def test_an_empty_pool_plans_nothing_in_either_mode() -> None:
    assert plan_draws([], seed=0, gate_index=1, temperature=0.7, n_max=8, first_sample=3) == DrawPlan(
        (), 0, 0, True, 3
    )
    assert plan_draws([], seed=0, gate_index=1, temperature=0.0, n_max=8) == DrawPlan((), 0, 0, False, 0)
    assert DrawPlan((), 0, 0, True).first_sample == 0
    assert DrawPlan((), 0, 0, True, 4).samples_end(guard_draws=9) == 4


def test_a_guard_continues_each_questions_indices_after_the_gates() -> None:
    q0, q1, q2 = POOL[:3]
    used = [(q0, 6), (q0, 4), (q1, 5)]  # the highest index counts, whatever the order
    guard = plan_guard_draws(
        [q0, q1, q2], seed=3, gate_index=2, temperature=0.7, n=12, used=used, label="A", first_sample=4
    )
    assert len(guard) == 12
    after = {q0.question_id: 7, q1.question_id: 6, q2.question_id: 4}
    for q, s in guard:
        assert s == after[q.question_id]
        after[q.question_id] += 1
    assert guard != plan_guard_draws(
        [q0, q1, q2], seed=3, gate_index=2, temperature=0.7, n=12, used=used, label="B", first_sample=4
    )


def test_a_guard_of_no_draws_or_no_questions_is_empty() -> None:
    for temperature in (0.0, 0.7):
        assert (
            plan_guard_draws(POOL, seed=1, gate_index=1, temperature=temperature, n=0, used=(), label="x")
            == ()
        )
        assert (
            plan_guard_draws(POOL, seed=1, gate_index=1, temperature=temperature, n=-1, used=(), label="x")
            == ()
        )
        assert (
            plan_guard_draws([], seed=1, gate_index=1, temperature=temperature, n=4, used=(), label="x") == ()
        )
    one = plan_guard_draws(POOL, seed=1, gate_index=1, temperature=0.7, n=1, used=(), label="x")
    assert len(one) == 1
    assert one[0][1] == 0
    # Every question of the class can be drawn, the first one too.
    alone = plan_guard_draws(POOL[:1], seed=1, gate_index=1, temperature=0.7, n=3, used=(), label="x")
    assert _ids(alone) == [("ocr000-1", 0), ("ocr000-1", 1), ("ocr000-1", 2)]


# --- the draw temperature and the budget -------------------------------------------------------


def test_per_draw_seeds_make_every_sample_fresh_and_a_fixed_seed_replays() -> None:
    assert draw_temperature(SamplingParams(temperature=0.6)) == 0.6  # no seed: sampling
    assert draw_temperature(SamplingParams(temperature=0.6, seed=PER_DRAW)) == 0.6
    assert draw_temperature(SamplingParams(temperature=0.6, seed=11)) == 0.0
    assert draw_temperature(SamplingParams(temperature=0.0, seed=11)) == 0.0
    with pytest.raises(ConfigError) as caught:
        draw_temperature(SamplingParams(temperature=None, seed=11))
    assert caught.value.context == {"key": "agent.sampling.temperature"}


def test_the_budget_is_n_max_when_sampling_and_the_distinct_questions_when_not() -> None:
    assert gate_budget(0, temperature=0.7, n_max=64) == 0
    assert gate_budget(0, temperature=0.0, n_max=64) == 0
    assert gate_budget(1, temperature=0.7, n_max=64) == 64
    assert gate_budget(1, temperature=0.0, n_max=64) == 1
    assert gate_budget(100, temperature=0.0, n_max=64) == 64
    assert gate_budget(30, temperature=1e-9, n_max=64) == 64
