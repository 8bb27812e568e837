"""Side effects, decoys, a rank role that reads only text, and alike samples (the simulator's half of
"claims that survive the test pool and a real ranker")."""

from __future__ import annotations

import json
import random
from itertools import combinations

import pytest
from sim_support import make_questions

from skillharness.data.questions import Question
from skillharness.llm.roles import (
    DOCUMENT_CLOSE,
    DOCUMENT_OPEN,
    RANK_CANDIDATE_HEADING,
    RANK_DECLINE_OFFER,
    RANK_NONE,
    Role,
    response_format,
)
from skillharness.sim import Oracle, SimConfig
from skillharness.sim.config import EvolveConfig, WorldConfig
from skillharness.sim.insights import (
    DECOY_BANK,
    HARMFUL_RULES,
    INSIGHT_BANK,
    USELESS_RULES,
    normalize_text,
)
from skillharness.sim.model import SimModel
from skillharness.sim.roles import RoleBehaviours, rank_choice
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER

TASK = "Counting Problem"
QUESTIONS = make_questions(per_task=24)
NO_SIDE = WorldConfig(side_effect_share=0.0)


def _class(model: SimModel) -> list[Question]:
    return [q for q in model.world.questions.values() if q.task_type == TASK]


def _effect(oracle: Oracle, line: str, pool: list[Question]) -> float:
    """The intended-accuracy effect on ``pool`` of adding ``line`` to an empty skill of TASK."""
    return oracle.intended_accuracy({"skills": {TASK: f"- {line}"}}, pool) - oracle.intended_accuracy(
        {}, pool
    )


def test_without_side_effects_no_insight_lowers_any_question() -> None:
    """The old world (share 0): an insight raises the questions that need it and leaves the rest."""
    model = SimModel(SimConfig(seed=5, world=NO_SIDE), QUESTIONS)
    oracle = Oracle(model.world)
    for rule in model.world.insights_for(TASK):
        for q in _class(model):
            assert model.world.truth(q).side == ()
            assert _effect(oracle, rule.canonical, [q]) >= 0


def test_side_effects_are_a_seeded_share_of_the_unneeded_pairs_within_the_size_range() -> None:
    cfg = WorldConfig(side_effect_share=0.3, side_effect_min=0.02, side_effect_max=0.10)
    model = SimModel(SimConfig(seed=5, world=cfg), QUESTIONS)
    again = SimModel(SimConfig(seed=5, world=cfg), QUESTIONS)
    oracle = Oracle(model.world)
    pairs = hits = 0
    for q in model.world.questions.values():
        truth = model.world.truth(q)
        assert truth.side == again.world.truth(q).side  # fixed by the world seed
        unneeded = [r for r in model.world.insights_for(q.task_type) if r.id not in truth.needed]
        pairs += len(unneeded)
        hits += len(truth.side)
        for rule_id, size in truth.side:
            assert rule_id not in truth.needed
            assert 0.02 <= size <= 0.10
            rule = model.world.insight(rule_id)
            assert _effect_on(oracle, rule.canonical, q) == pytest.approx(-size)
    assert 0.15 < hits / pairs < 0.45, (hits, pairs)
    # The side draws are their own: base, gain and needs are the old world's.
    plain = SimModel(SimConfig(seed=5, world=NO_SIDE), QUESTIONS)
    q = QUESTIONS[0]
    assert model.world.truth(q).needed == plain.world.truth(q).needed
    assert model.world.truth(q).base == plain.world.truth(q).base


def _effect_on(oracle: Oracle, line: str, q: Question) -> float:
    skill = {"skills": {q.task_type: f"- {line}"}}
    return oracle.intended_accuracy(skill, [q]) - oracle.intended_accuracy({}, [q])


def test_an_insight_accepted_on_four_val_questions_is_worse_on_test_with_side_effects() -> None:
    """Accept an insight when it helps a 4-question val pool of its class; read it on a disjoint
    4-question test pool. Without side effects an accepted insight never hurts test (it cannot lower
    a question); with them some accepts truly hurt test, and accepts fall further from val to test."""
    rng = random.Random(11)
    draws = []
    for _ in range(150):
        picked = rng.sample(range(24), 8)
        draws.append((picked[:4], picked[4:]))

    def accepted(world: WorldConfig) -> list[tuple[float, float]]:
        model = SimModel(SimConfig(seed=5, world=world), QUESTIONS)
        oracle, cls = Oracle(model.world), _class(model)
        out = []
        for rule in model.world.insights_for(TASK):
            for val, test in draws:
                on_val = _effect(oracle, rule.canonical, [cls[i] for i in val])
                if on_val > 0:  # an accept: the edit helps its val questions
                    out.append((on_val, _effect(oracle, rule.canonical, [cls[i] for i in test])))
        return out

    def drop(pairs: list[tuple[float, float]]) -> float:
        return sum(val - test for val, test in pairs) / len(pairs)

    side = accepted(WorldConfig(side_effect_share=0.3))
    none = accepted(NO_SIDE)
    assert side
    assert none
    assert all(test >= 0 for _, test in none)  # by construction: nothing to overfit
    hurt = sum(test < 0 for _, test in side) / len(side)
    assert hurt > 0.02, hurt  # the effect exists: accepted on val, harmful on test (0 without)
    # At the default level an accept hurts a 4-question test pool about one time in twenty (4.7 %
    # for this world); the mean val-to-test drop grows only a little (0.66 against 0.61 points).
    assert drop(side) > drop(none)


def test_the_best_bundle_leaves_out_an_insight_that_lowers_more_than_it_raises() -> None:
    """With heavy side effects a pool's best bundle may omit an insight; with none it holds every one."""
    heavy = WorldConfig(side_effect_share=1.0, side_effect_min=0.25, side_effect_max=0.25)
    model = SimModel(SimConfig(seed=5, world=heavy), QUESTIONS)
    oracle = Oracle(model.world)
    rules = model.world.insights_for(TASK)
    for size in (4, 24):
        pool = _class(model)[:size]
        best = oracle.best_bundle({}, pool)
        held = [r for r in rules if r.present_in(normalize_text(best.skills["counting_problem"]))]
        assert len(held) < len(rules)
        value = oracle.intended_accuracy(best, pool)
        for k in range(len(rules) + 1):  # no subset of insights does better on that pool
            for subset in combinations(rules, k):
                text = "\n".join(f"- {r.canonical}" for r in subset)
                assert oracle.intended_accuracy({"skills": {TASK: text}}, pool) <= value + 1e-12
    plain = Oracle(SimModel(SimConfig(seed=5, world=NO_SIDE), QUESTIONS).world)
    best_text = normalize_text(plain.best_bundle({}).skills["counting_problem"])
    assert all(r.present_in(best_text) for r in rules)


# --- decoys -------------------------------------------------------------------------------------


def test_decoys_exist_for_every_class_and_change_no_question() -> None:
    model = SimModel(SimConfig(seed=5), QUESTIONS)
    oracle = Oracle(model.world)
    assert set(DECOY_BANK) == set(INSIGHT_BANK)
    others = [
        *(w for bank in INSIGHT_BANK.values() for rule in bank for w in rule),
        *(w for rule in HARMFUL_RULES for w in rule),
        *USELESS_RULES,
    ]
    for task_type in {*INSIGHT_BANK, "Some Other Benchmark Class"}:
        decoys = model.world.decoys_for(task_type)
        assert decoys, task_type
        for decoy in decoys:  # no decoy holds a scored wording, and none is held by one
            for wording in decoy.normalized:
                assert not any(normalize_text(o) in wording or wording in normalize_text(o) for o in others)
    for task_type in {q.task_type for q in QUESTIONS}:
        qs = [q for q in QUESTIONS if q.task_type == task_type]
        for decoy in model.world.decoys_for(task_type):
            for wording in decoy.wordings:
                with_decoy = {"skills": {task_type: f"- {wording}"}}
                assert oracle.per_question(with_decoy, qs) == oracle.per_question({}, qs)


def test_the_evolve_role_proposes_decoys_for_the_useless_share() -> None:
    evolve = EvolveConfig(insight_rate=0.0, harmful_rate=0.0, decoy_rate=1.0, sample_alike=0.0)
    model = SimModel(SimConfig(seed=5, evolve=evolve), QUESTIONS)
    q = _class(model)[0]
    doc = f"# {TASK}\n\n- Look at the frames.\n{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n"
    text = _evolve_text(q, doc)
    decoys = model.world.decoys_for(TASK)
    for i in range(10):
        added = normalize_text(json.dumps(_ask(model, Role.EVOLVE, text, sample_idx=i)))
        assert any(d.present_in(added) for d in decoys)


# --- the rank role --------------------------------------------------------------------------------


def _evolve_text(q: Question, doc: str) -> str:
    return (
        f"Question: {q.question}\nOptions:\n"
        + "\n".join(q.options)
        + f"\n{DOCUMENT_OPEN}\n{doc}\n{DOCUMENT_CLOSE}"
    )


def _ask(model: SimModel, role: Role, text: str, sample_idx: int = 0, temperature: float = 0.7) -> dict:
    body = {
        "model": "sim-vl",
        "messages": [{"role": "user", "content": text}],
        "response_format": response_format(role),
        "sample_idx": sample_idx,
        "temperature": temperature,
    }
    return json.loads(model.respond(body, role).content)


def _rank_text(candidates: list[str], decline: bool = True) -> str:
    text = "\n".join(f"{RANK_CANDIDATE_HEADING.format(index=i)}\n- {c}" for i, c in enumerate(candidates))
    return text + (f"\n{RANK_DECLINE_OFFER}." if decline else "")


def test_rank_choice_at_zero_informativeness_ignores_what_the_candidates_show() -> None:
    rng = random.Random(3)
    for _ in range(200):
        noise: dict[int | None, float] = {c: rng.gauss(0, 1) for c in (0, 1, 2, None)}
        shown = {c: rng.choice([-2.0, 0.0, 1.0, 2.0]) for c in (0, 1, 2)}
        other = {c: rng.choice([-2.0, 0.0, 1.0, 2.0]) for c in (0, 1, 2)}
        assert rank_choice(shown, noise, 0.0) == rank_choice(other, noise, 0.0)
    # At 1 it is the best shown, declining on a tie with 0.
    assert rank_choice({0: 0.0, 1: 1.0}, {0: 5.0, 1: -5.0, None: 9.0}, 1.0) == 1
    assert rank_choice({0: 0.0, 1: -2.0}, {0: 5.0, 1: -5.0, None: -9.0}, 1.0) is None


def test_the_rank_role_at_zero_informativeness_is_independent_of_where_the_insight_is(monkeypatch) -> None:
    """At r = 0 the role never reads the candidates' worth, and the share of picks of each position is
    chance whichever candidate holds the insight; at r = 1 it always picks the insight."""
    model = SimModel(SimConfig(seed=5, evolve=EvolveConfig(rank_informativeness=0.0)), QUESTIONS)
    good = model.world.insights_for(TASK)[0].canonical
    monkeypatch.setattr(RoleBehaviours, "_shown_value", lambda *_: pytest.fail("the truth was read"))
    n = 400
    picks_of_insight = []
    for holder in (0, 2):
        candidates = ["Think step by step.", "Stay focused on the task.", "Double-check your work."]
        candidates[holder] = good
        text = _rank_text(candidates)
        choices = [_ask(model, Role.RANK, text, sample_idx=i)["choice"] for i in range(n)]
        for option in (0, 1, 2, RANK_NONE):  # four options, each about a quarter
            assert abs(choices.count(option) / n - 0.25) < 0.08, (holder, option)
        picks_of_insight.append(choices.count(holder) / n)
    assert abs(picks_of_insight[0] - picks_of_insight[1]) < 0.1
    monkeypatch.undo()
    sure = SimModel(SimConfig(seed=5, evolve=EvolveConfig(rank_informativeness=1.0)), QUESTIONS)
    text = _rank_text(["Think step by step.", good, "Stay focused on the task."])
    assert {_ask(sure, Role.RANK, text, sample_idx=i)["choice"] for i in range(40)} == {1}


def test_the_rank_role_cannot_tell_a_decoy_from_an_insight() -> None:
    """A decoy's text shows what an insight's does: at r = 1 the two tie (the first wins), and at the
    default the role picks the decoy about as often as the insight."""
    sure = SimModel(SimConfig(seed=5, evolve=EvolveConfig(rank_informativeness=1.0)), QUESTIONS)
    good = sure.world.insights_for(TASK)[0].canonical
    decoy = sure.world.decoys_for(TASK)[0].canonical
    assert _ask(sure, Role.RANK, _rank_text([decoy, good]))["choice"] == 0
    assert _ask(sure, Role.RANK, _rank_text([good, decoy]))["choice"] == 0
    assert _ask(sure, Role.RANK, _rank_text([decoy]))["choice"] == 0  # not declined: it looks real
    model = SimModel(SimConfig(seed=5), QUESTIONS)
    choices = [_ask(model, Role.RANK, _rank_text([decoy, good]), sample_idx=i)["choice"] for i in range(300)]
    assert abs(choices.count(0) - choices.count(1)) / 300 < 0.12


def test_the_default_rank_role_is_informative_but_not_sure() -> None:
    model = SimModel(SimConfig(seed=5), QUESTIONS)
    good = model.world.insights_for(TASK)[0].canonical
    text = _rank_text(["Think step by step.", good, "Stay focused on the task."])
    choices = [_ask(model, Role.RANK, text, sample_idx=i)["choice"] for i in range(300)]
    assert 0.4 < choices.count(1) / 300 < 0.9


# --- alike samples --------------------------------------------------------------------------------


@pytest.mark.parametrize("alike", [0.0, 0.9])
def test_sampled_evolve_replies_are_alike_as_often_as_the_setting_says(alike: float) -> None:
    model = SimModel(SimConfig(seed=5, evolve=EvolveConfig(sample_alike=alike)), QUESTIONS)
    q = _class(model)[0]
    doc = f"# {TASK}\n\n- Look at the frames.\n{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n"
    text = _evolve_text(q, doc)
    replies = [json.dumps(_ask(model, Role.EVOLVE, text, sample_idx=i), sort_keys=True) for i in range(60)]
    same = sum(a == b for a, b in combinations(replies, 2)) / (60 * 59 / 2)
    if alike == 0.0:
        assert same < 0.5
    else:  # about 0.81 from the shared draw alone
        assert same > 0.7
    greedy = {json.dumps(_ask(model, Role.EVOLVE, text, i, temperature=0.0)) for i in range(5)}
    assert len(greedy) == 1  # greedy decoding is one reply, as before
