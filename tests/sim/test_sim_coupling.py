"""Seed coupling (issue 29): two instruction texts asked with one request seed share their draw."""

from __future__ import annotations

import math

from sim_support import first_messages, make_questions, tools

from skillharness.data import Question
from skillharness.sim import SimConfig
from skillharness.sim.agent_role import AgentRole
from skillharness.sim.config import WorldConfig
from skillharness.sim.prompt import instruction_text
from skillharness.sim.world import World

SYSTEM = "You answer questions about videos."
SEEDS = range(60)


def _body(question: Question, system: str, seed: int | None, temperature: float = 0.8) -> dict[str, object]:
    body: dict[str, object] = {
        "model": "sim-vl",
        "messages": first_messages(question, system),
        "tools": tools(),
        "temperature": temperature,
    }
    return body if seed is None else {**body, "seed": seed}


def _role(rho: float) -> tuple[AgentRole, list[Question]]:
    questions = make_questions(10)
    return AgentRole(World(SimConfig(seed=3, world=WorldConfig(seed_coupling=rho)), questions)), questions


def _helpful(role: AgentRole, question: Question) -> str:
    insights = role.world.insights_for(question.task_type)
    return SYSTEM + "\n- " + "\n- ".join(r.canonical for r in insights)


def _discordance(
    role: AgentRole, questions: list[Question], edit, shared: bool
) -> tuple[float, float, float]:
    """(observed discordance, independent d0, coupled-at-rho=1 |p1 - p2|), averaged over the draws."""
    differ, d0, gap, n = 0, 0.0, 0.0, 0
    for q in questions:
        a, b = SYSTEM, edit(role, q)
        p1 = role.world.p_intended(q, instruction_text(_body(q, a, 0)))
        p2 = role.world.p_intended(q, instruction_text(_body(q, b, 0)))
        for seed in SEEDS:
            # Independent: each arm its own seed (the draw of another sample); shared: one seed.
            seed_b = seed if shared else 10_000 + seed
            differ += role.decide(_body(q, a, seed))[1].correct != role.decide(_body(q, b, seed_b))[1].correct
            d0 += p1 * (1 - p2) + p2 * (1 - p1)
            gap += abs(p1 - p2)
            n += 1
    return differ / n, d0 / n, gap / n


def _tolerance(share: float, n: int) -> float:
    return 4 * math.sqrt(share * (1 - share) / n) + 1 / n


def _neutral(_: AgentRole, __: Question) -> str:
    return SYSTEM + " Be careful."  # no insight, no harmful rule: the same p, another text


def test_issue_29_full_coupling_with_equal_accuracy_makes_the_arms_agree() -> None:
    role, questions = _role(1.0)
    neutral = _neutral
    shared, d0, gap = _discordance(role, questions, neutral, shared=True)
    assert gap == 0
    assert d0 > 0.3
    assert shared == 0.0  # one seed, one uniform, one p: the same correctness on every draw
    independent, _, _ = _discordance(role, questions, neutral, shared=False)
    assert abs(independent - d0) <= _tolerance(d0, len(questions) * len(SEEDS))


def test_issue_29_no_coupling_gives_the_independent_discordance_even_with_one_seed() -> None:
    role, questions = _role(0.0)
    shared, d0, gap = _discordance(role, questions, _helpful, shared=True)
    assert gap > 0.05  # the edit changes accuracy
    assert abs(shared - d0) <= _tolerance(d0, len(questions) * len(SEEDS)), (shared, d0)


def test_issue_29_coupling_rho_mixes_the_two_discordances_and_keeps_accuracy() -> None:
    rho = 0.6
    role, questions = _role(rho)
    shared, d0, gap = _discordance(role, questions, _helpful, shared=True)
    expected = rho * gap + (1 - rho) * d0
    assert abs(shared - expected) <= _tolerance(expected, len(questions) * len(SEEDS)), (shared, expected)
    assert expected < d0 - 0.1  # the coupling is visible, well outside the tolerance
    # Both arms take the shared uniform together: at equal accuracy they differ only off it.
    same_p, d0_same, _ = _discordance(role, questions, _neutral, shared=True)
    n = len(questions) * len(SEEDS)
    assert abs(same_p - (1 - rho) * d0_same) <= _tolerance((1 - rho) * d0_same, n), (same_p, d0_same)
    # Each arm's accuracy stays p: the shared uniform is a uniform too.
    hits, ps = 0, []
    for q in questions:
        text = _helpful(role, q)
        p = role.world.p_intended(q, instruction_text(_body(q, text, 0)))
        hits += sum(role.decide(_body(q, text, seed))[1].correct for seed in SEEDS)
        ps += [p] * len(SEEDS)
    assert abs(hits - sum(ps)) <= 4 * math.sqrt(sum(p * (1 - p) for p in ps)) + 1


def test_issue_29_temperature_zero_ignores_the_seed_and_stays_deterministic() -> None:
    role, questions = _role(1.0)
    for q in questions[:10]:
        for system in (SYSTEM, _helpful(role, q)):
            replies = {role.respond(_body(q, system, seed, temperature=0.0)) for seed in (None, 1, 2, 3)}
            assert len(replies) == 1
