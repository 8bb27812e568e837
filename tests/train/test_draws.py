"""Draw plans: deterministic from (seed, gate index), fresh sample indices, and the temperature-0 cap."""

from __future__ import annotations

from collections import Counter

import pytest

from skillharness.data import Question
from skillharness.errors import ConfigError
from skillharness.llm import PER_DRAW, SamplingParams
from skillharness.train.state.caller import distinct_samples
from skillharness.train.state.draws import draw_temperature, gate_budget, plan_draws, plan_guard_draws


def _questions(n: int, task_type: str = "OCR Problems") -> list[Question]:
    return [
        Question(
            video_id=f"{i:03d}",
            duration="short",
            videoID=f"v{i:03d}",
            question_id=f"{i:03d}-1",
            task_type=task_type,
            question=f"Question {i}?",
            options=("A. yes", "B. no"),
            answer="A",
        )
        for i in range(n)
    ]


def test_a_plan_is_a_function_of_seed_gate_and_pool_only() -> None:
    pool = _questions(12)
    plan = plan_draws(pool, seed=4, gate_index=7, temperature=0.7, n_max=32)
    again = plan_draws(list(reversed(pool)), seed=4, gate_index=7, temperature=0.7, n_max=32)
    assert plan == again
    assert plan != plan_draws(pool, seed=4, gate_index=8, temperature=0.7, n_max=32)
    assert plan != plan_draws(pool, seed=5, gate_index=7, temperature=0.7, n_max=32)


def test_with_replacement_every_draw_is_a_fresh_sample() -> None:
    plan = plan_draws(_questions(5), seed=0, gate_index=1, temperature=0.7, n_max=40)
    assert plan.with_replacement
    assert (plan.budget, plan.distinct, len(plan.draws)) == (40, 5, 80)  # n_max and as many spares
    keys = [(q.question_id, s) for q, s in plan.draws]
    assert len(set(keys)) == len(keys)
    seen: Counter[str] = Counter()
    for q, s in plan.draws:  # each question's sample indices count up from 0 in draw order
        assert s == seen[q.question_id]
        seen[q.question_id] += 1


def test_at_temperature_zero_each_question_once_and_the_budget_is_capped() -> None:
    pool = _questions(10)
    plan = plan_draws(pool, seed=0, gate_index=1, temperature=0.0, n_max=64)
    assert not plan.with_replacement
    assert plan.budget == 10
    assert sorted(q.question_id for q, _ in plan.draws) == sorted(q.question_id for q in pool)
    assert {s for _, s in plan.draws} == {0}
    assert gate_budget(10, temperature=0.0, n_max=8) == 8
    assert gate_budget(10, temperature=0.5, n_max=64) == 64
    assert gate_budget(0, temperature=0.5, n_max=64) == 0
    assert plan_draws([], seed=0, gate_index=1, temperature=0.5, n_max=8).draws == ()


def test_guard_draws_never_reuse_the_gate_samples() -> None:
    pool = _questions(6)
    plan = plan_draws(pool, seed=1, gate_index=2, temperature=0.7, n_max=16)
    guard = plan_guard_draws(
        pool, seed=1, gate_index=2, temperature=0.7, n=12, used=plan.draws, label="OCR Problems"
    )
    assert len(guard) == 12
    used = {(q.question_id, s) for q, s in plan.draws}
    assert not used & {(q.question_id, s) for q, s in guard}
    greedy = plan_draws(pool[:4], seed=1, gate_index=2, temperature=0.0, n_max=16)
    fresh = plan_guard_draws(
        pool, seed=1, gate_index=2, temperature=0.0, n=12, used=greedy.draws, label="OCR Problems"
    )
    assert sorted(q.question_id for q, _ in fresh) == sorted(q.question_id for q in pool[4:])


def test_a_gate_draws_from_its_first_sample_and_says_where_the_next_starts() -> None:
    pool = _questions(6)
    plan = plan_draws(pool, seed=1, gate_index=2, temperature=0.7, n_max=16, first_sample=40)
    shifted = plan_draws(pool, seed=1, gate_index=2, temperature=0.7, n_max=16)
    # The same questions in the same order, every index moved by the gate's first sample.
    assert [(q.question_id, s + 40) for q, s in shifted.draws] == [(q.question_id, s) for q, s in plan.draws]
    assert min(s for _, s in plan.draws) == 40
    # A guard over a wider class: a question the plan never drew starts at the first sample too.
    wider = [*pool, *_questions(9)[6:]]
    guard = plan_guard_draws(
        wider,
        seed=1,
        gate_index=2,
        temperature=0.7,
        n=12,
        used=plan.draws,
        label="OCR Problems",
        first_sample=40,
    )
    end = plan.samples_end(guard_draws=12)
    every = [s for _, s in (*plan.draws, *guard)]
    assert min(every) == 40
    assert max(every) < end
    assert not {(q.question_id, s) for q, s in plan.draws} & {(q.question_id, s) for q, s in guard}
    # Without replacement every index is 0: a gate uses nothing up.
    greedy = plan_draws(pool, seed=1, gate_index=2, temperature=0.0, n_max=16, first_sample=40)
    assert {s for _, s in greedy.draws} == {0}
    assert greedy.samples_end(guard_draws=12) == 40


def test_issue_29_a_per_draw_seed_samples_while_a_fixed_seed_replays() -> None:
    per_draw = SamplingParams(temperature=0.8, seed=PER_DRAW)
    assert draw_temperature(per_draw) == 0.8  # each sample index has its own seed: fresh draws
    assert draw_temperature(SamplingParams(temperature=0.8, seed=3)) == 0.0  # one seed: replays
    assert draw_temperature(SamplingParams(temperature=0.0, seed=PER_DRAW)) == 0.0  # greedy ignores it
    assert distinct_samples(5, per_draw) == 5
    plan = plan_draws(_questions(4), seed=0, gate_index=1, temperature=draw_temperature(per_draw), n_max=16)
    assert plan.with_replacement
    assert plan.budget == 16


def test_an_unset_temperature_is_refused_naming_the_key() -> None:
    """Unset, the gate would take it as 0 and the cache as sampling: training refuses to guess."""
    with pytest.raises(ConfigError, match=r"agent\.sampling\.temperature is not set") as caught:
        draw_temperature(SamplingParams(temperature=None))
    assert caught.value.context["key"] == "agent.sampling.temperature"
    with pytest.raises(ConfigError, match=r"agent\.sampling\.temperature"):
        draw_temperature(SamplingParams(temperature=None, seed=PER_DRAW))


def test_at_temperature_0_a_guard_skips_only_the_questions_its_gate_drew() -> None:
    """The caller passes the draws the gate consumed: the rest of its permutation is still fresh."""
    pool = _questions(20)
    plan = plan_draws(pool, seed=3, gate_index=4, temperature=0.0, n_max=20)
    drawn = plan.draws[:6]
    guard = plan_guard_draws(pool, seed=3, gate_index=4, temperature=0.0, n=20, used=drawn, label="x")
    assert len(guard) == 14
    assert {q.question_id for q, _ in guard} == {q.question_id for q, _ in plan.draws[6:]}
