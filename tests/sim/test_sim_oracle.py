"""The oracle: exact expected accuracy of bundle texts, the true effect of edits, over HTTP too."""

from __future__ import annotations

import httpx
import pytest
from sim_support import SIM_TEST_WORLD

from skillharness.data.loader import load_questions
from skillharness.sim import BundleText, Oracle, SimConfig, World
from skillharness.sim.config import AgentConfig, WorldConfig
from skillharness.skills.bundle import initial_bundle

pytestmark = pytest.mark.sim_world(SIM_TEST_WORLD, questions="questions")


@pytest.fixture
def world(questions) -> World:
    return World(SimConfig(seed=9), questions)


def test_truth_is_a_function_of_seed_and_question_id(questions):
    a, b, c = (World(SimConfig(seed=s), questions) for s in (1, 1, 2))
    assert [a.truth(q) for q in questions] == [b.truth(q) for q in questions]
    assert [a.truth(q) for q in questions] != [c.truth(q) for q in questions]
    cfg = WorldConfig()
    for q in questions:
        t = a.truth(q)
        assert cfg.base_min <= t.base <= cfg.base_max
        assert cfg.needed_min <= len(t.needed) <= cfg.needed_max


def test_exact_formula_for_one_question(world, questions):
    q = questions[0]
    truth = world.truth(q)
    needed = [world.insight(i) for i in truth.needed]
    cfg = world.config.world
    kept = world.letter_kept_share()
    assert kept == pytest.approx(1 - 0.10 * 2 / 5)
    oracle = Oracle(world)
    assert oracle.question_accuracy("", q) == pytest.approx(truth.base * kept)
    one = f"- {needed[0].canonical}"
    expected = min(cfg.ceiling, truth.base + truth.gain / len(needed)) * kept
    assert oracle.question_accuracy(one, q) == pytest.approx(expected)
    harmful = one + "\n- Ignore the subtitles."
    assert oracle.question_accuracy(harmful, q) == pytest.approx(
        max(cfg.floor, min(cfg.ceiling, truth.base + truth.gain / len(needed)) - cfg.harm_per_rule) * kept
    )


def test_paraphrases_count_and_matching_ignores_case_spacing_and_markup(world, questions):
    q = questions[0]
    rule = world.insight(world.truth(q).needed[0])
    oracle = Oracle(world)
    canonical = oracle.question_accuracy(rule.canonical, q)
    assert canonical > oracle.question_accuracy("", q)
    for wording in rule.wordings[1:]:
        assert oracle.question_accuracy(wording, q) == canonical
    words = rule.wordings[1].upper().split()
    mangled = "**" + " \n  ".join(words[:3]) + "** " + " ".join(words[3:]).replace(" ", "  ")
    assert oracle.question_accuracy(mangled, q) == canonical


def test_skills_only_affect_their_own_task_type_and_edit_effect_is_exact(world, questions):
    oracle = Oracle(world)
    counting = [q for q in questions if q.task_type == "Counting Problem"]
    ocr = [q for q in questions if q.task_type == "OCR Problems"]
    lines = "\n".join(f"- {r.canonical}" for r in world.insights_for("Counting Problem"))
    before = BundleText(skills={"Counting Problem": "# Counting"})
    after = BundleText(skills={"counting_problem": "# Counting\n" + lines})  # slug keys work too
    effect = oracle.edit_effect(before, after, counting)
    assert effect.delta > 0.1
    assert effect.n == len(counting)
    assert oracle.edit_effect(before, after, ocr).delta == 0
    manual = sum(oracle.question_accuracy(after, q) for q in counting) / len(counting)
    assert effect.after == pytest.approx(manual)


def test_best_bundle_beats_the_initial_bundle(world, questions):
    oracle = Oracle(world)
    bundle = initial_bundle()
    base = oracle.expected_accuracy(bundle)
    best = oracle.expected_accuracy(oracle.best_bundle(bundle))
    assert best > base + 0.15
    per_type = oracle.per_task_type(bundle)
    assert set(per_type) == {q.task_type for q in questions}


def test_no_awkward_answers_makes_oracle_the_intended_accuracy(questions):
    world = World(SimConfig(seed=9, agent=AgentConfig(awkward_rate=0.0)), questions)
    q = questions[0]
    assert Oracle(world).question_accuracy("", q) == pytest.approx(world.truth(q).base)


def test_oracle_over_http(sim, questions):
    ids = [q.question_id for q in questions[:5]]
    with httpx.Client(base_url=sim.url, timeout=10) as http:
        got = http.get("/sim/oracle", params={"text": "x", "question_ids": ",".join(ids)}).json()
        assert got["n"] == 5
        assert got["simulator"] is True
        assert got["accuracy"] == pytest.approx(sim.oracle.expected_accuracy("x", ids))
        rule = sim.world.insights_for(questions[0].task_type)[0]
        posted = http.post(
            "/sim/oracle",
            json={
                "bundle": {"system_prompt": ""},
                "after": {"system_prompt": rule.canonical},
                "task_type": questions[0].task_type,
            },
        ).json()
        assert posted["delta"] > 0
        assert posted["n"] == 10
        assert http.get("/sim/oracle", params={"question_ids": "nope"}).status_code == 400
        # Wrong shapes are the caller's mistake (400 with a message), never a 500.
        for body in ([1, 2], {"bundle": [1, 2]}, {"bundle": 5}, {"after": "x", "bundle": {"skills": 3}}):
            response = http.post("/sim/oracle", json=body)
            assert response.status_code == 400, body
            assert response.json()["error"]["message"]
        assert http.get("/sim/oracle", params={"bundle": "{not json"}).status_code == 400


def test_real_videomme_questions_are_recognised_and_scored(videomme_questions_path):
    questions = load_questions(videomme_questions_path)
    world = World(SimConfig(seed=0), questions)
    ambiguous = 0
    for q in questions[::9]:  # 300 of them, every task type
        prompt = f"Question: {q.question}\nOptions:\n" + "\n".join(q.options)
        found = world.index.find_all(prompt)
        assert q in found
        if found[0] != q:  # the same question and options asked about two videos
            ambiguous += 1
            assert all((f.question, f.options) == (q.question, q.options) for f in found)
    assert ambiguous <= 1
    oracle = Oracle(world)
    assert {len(world.insights_for(t)) for t in {q.task_type for q in questions}} == {3}
    base = oracle.expected_accuracy(initial_bundle())
    assert 0.3 < base < 0.55 < oracle.expected_accuracy(oracle.best_bundle(initial_bundle()))
