"""Issue 37: the world's knobs that keep the simulator from flattering the loop.

Filler lines carry small seeded effects, insights can combine sub-additively, slow momentum's
restatements have a real effect, and the seed coupling is the one our llama.cpp run measured.
"""

from __future__ import annotations

import json
import statistics

import pytest
from sim_support import make_questions

from skillharness.data import Question
from skillharness.llm.roles import DOCUMENT_CLOSE, DOCUMENT_OPEN, Role, response_format
from skillharness.sim import Oracle, SimConfig, World
from skillharness.sim.config import EvolveConfig, WorldConfig
from skillharness.sim.insights import RESTATE_FORMS, USELESS_RULES
from skillharness.sim.model import SimModel
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER

QUESTIONS = make_questions(per_task=30)
TASK = "Counting Problem"
# Task types to draw filler effects for: each (wording, task type) is one draw.
TASK_TYPES = tuple(f"Task type {i}" for i in range(40))


def _class(task: str = TASK) -> list[Question]:
    return [q for q in QUESTIONS if q.task_type == task]


def _skill(lines: list[str]) -> dict[str, dict[str, str]]:
    return {"skills": {TASK: "# Counting\n" + "\n".join(lines)}}


def test_filler_lines_have_small_deterministic_effects_centred_on_zero() -> None:
    world = World(SimConfig(seed=5), QUESTIONS)
    sd = world.config.world.filler_effect_sd
    assert sd > 0
    effects = [world.filler_effect(w, t) for w in USELESS_RULES for t in TASK_TYPES]
    assert all(e != 0 for e in effects)
    n = len(effects)
    assert abs(statistics.fmean(effects)) < 4 * sd / n**0.5  # centred on 0
    assert 0.8 * sd < statistics.stdev(effects) < 1.2 * sd  # 320 draws: the sd within about 8 %
    assert max(abs(e) for e in effects) < 5 * sd
    # A function of the world seed, the wording and the task type alone.
    again = World(SimConfig(seed=5), QUESTIONS)
    assert [again.filler_effect(w, t) for w in USELESS_RULES for t in TASK_TYPES] == effects
    other = World(SimConfig(seed=6), QUESTIONS)
    assert [other.filler_effect(w, t) for w in USELESS_RULES for t in TASK_TYPES] != effects
    # Markup and case do not change the wording's identity.
    assert world.filler_effect("think STEP by step", TASK) == world.filler_effect("Think step by step.", TASK)


def test_a_filler_line_moves_only_its_own_class_by_its_effect_and_nothing_at_spread_zero() -> None:
    world = World(SimConfig(seed=5), QUESTIONS)
    oracle = Oracle(world)
    wording = USELESS_RULES[2]
    before, after = _skill(["- Look at the frames."]), _skill(["- Look at the frames.", f"- {wording}"])
    counting = _class()
    effect = oracle.edit_effect(before, after, counting).delta
    assert effect != 0
    # Base accuracies lie well inside floor..ceiling: no clip, so the class moves by the effect.
    assert effect == pytest.approx(world.filler_effect(wording, TASK) * world.letter_kept_share())
    assert oracle.edit_effect(before, after, _class("OCR Problems")).delta == 0
    # Twice the same wording is one line's identity: it counts once.
    twice = _skill(["- Look at the frames.", f"- {wording}", f"* {wording.upper()}"])
    assert oracle.edit_effect(before, twice, counting).delta == pytest.approx(effect)
    flat = Oracle(World(SimConfig(seed=5, world=WorldConfig(filler_effect_sd=0.0)), QUESTIONS))
    assert flat.edit_effect(before, after, counting).delta == 0


@pytest.mark.parametrize("overlap", [0.0, 0.5, 1.0])
def test_insight_overlap_makes_insights_tested_together_gain_less_than_their_sum(overlap: float) -> None:
    config = SimConfig(seed=5, world=WorldConfig(insight_overlap=overlap))
    oracle = Oracle(World(config, QUESTIONS))
    truths = {q.question_id: oracle.world.truth(q) for q in _class()}
    # Questions needing two insights, away from the ceiling so no clip hides the sum.
    questions = [q for q in _class() if len(truths[q.question_id].needed) == 2]
    questions = [q for q in questions if truths[q.question_id].base + truths[q.question_id].gain < 0.97]
    assert len(questions) >= 5
    kept = oracle.world.letter_kept_share()
    for q in questions:
        truth = truths[q.question_id]
        first, second = (oracle.world.insight(i).canonical for i in truth.needed)
        none, both = oracle.question_accuracy("", q), oracle.question_accuracy(f"{first}\n{second}", q)
        single = [oracle.question_accuracy(text, q) - none for text in (first, second)]
        # All needed insights still give the whole gain, whatever the overlap.
        assert both == pytest.approx((truth.base + truth.gain) * kept)
        # Each alone is worth gain/2 * (1 + overlap/2); at overlap 0 the two add up, as before.
        assert single == pytest.approx([truth.gain / 2 * (1 + overlap / 2) * kept] * 2)
        assert sum(single) - (both - none) == pytest.approx(overlap / 2 * truth.gain * kept)


def _momentum_doc(world: World) -> str:
    lines = "".join(f"- {r.canonical}\n" for r in world.insights_for(TASK))
    return f"# Counting\n\n{lines}{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n"


def _momentum(model: SimModel, document: str, sample_idx: int) -> str:
    body = {
        "model": "sim-vl",
        "messages": [{"role": "user", "content": f"{DOCUMENT_OPEN}\n{document}\n{DOCUMENT_CLOSE}"}],
        "response_format": response_format(Role.MOMENTUM),
        "temperature": 0.7,
        "sample_idx": sample_idx,
    }
    return json.loads(model.respond(body, Role.MOMENTUM).content)["guidance"]


def test_slow_momentum_has_a_real_effect_mostly_small_and_positive() -> None:
    model = SimModel(SimConfig(seed=5), QUESTIONS)
    oracle = Oracle(model.world)
    document = _momentum_doc(model.world)
    counting = _class()
    before = oracle.expected_accuracy({"skills": {TASK: document}}, counting)
    effects, forms = [], {form: 0 for form in RESTATE_FORMS}
    for sample_idx in range(200):
        guidance = _momentum(model, document, sample_idx)
        for form, template in RESTATE_FORMS.items():
            forms[form] += guidance.count(template.split("{", 1)[0])
        after = oracle.expected_accuracy({"skills": {TASK: document + guidance}}, counting)
        effects.append(after - before)
    # Each restated insight takes a form with the configured odds (600 restatements).
    cfg = model.config.evolve
    total = sum(forms.values())
    assert total == 600
    assert abs(forms["clear"] / total - cfg.momentum_clear_rate) < 0.07
    assert abs(forms["muddled"] / total - cfg.momentum_muddled_rate) < 0.07
    # The oracle sees it: positive on average, sometimes zero or negative, never large.
    assert statistics.fmean(effects) > 0.005
    assert min(effects) < 0 < max(effects)
    assert effects.count(0.0) >= 1  # every restatement plain: nothing changes
    assert max(abs(e) for e in effects) < 0.15


def test_momentum_restating_in_the_clear_form_is_worth_its_share_of_the_insight() -> None:
    world = World(SimConfig(seed=5), QUESTIONS)
    oracle = Oracle(world)
    share = world.config.world.restate_gain
    kept = world.letter_kept_share()
    # Questions whose every needed insight, one restated clearly, stays under the ceiling.
    questions = [q for q in _class() if world.truth(q).base + world.truth(q).gain * (1 + share) < 0.97]
    assert len(questions) >= 10
    for q in questions:
        truth = world.truth(q)
        rule = world.insight(truth.needed[0])
        base = "\n".join(world.insight(i).canonical for i in truth.needed)
        plain = oracle.question_accuracy(base, q)
        assert plain == pytest.approx((truth.base + truth.gain) * kept)
        for form, sign in (("clear", 1), ("muddled", -1), ("plain", 0)):
            line = RESTATE_FORMS[form].format(wording=rule.wordings[1])
            p = oracle.question_accuracy(f"{base}\n- {line}", q)
            worth = share * truth.gain / len(truth.needed) * kept
            assert p == pytest.approx(plain + sign * worth), form
    off = Oracle(World(SimConfig(seed=5, world=WorldConfig(restate_gain=0.0)), QUESTIONS))
    q = _class()[0]
    rule = off.world.insight(off.world.truth(q).needed[0])
    clear = RESTATE_FORMS["clear"].format(wording=rule.canonical)
    assert off.question_accuracy(clear, q) == off.question_accuracy(rule.canonical, q)


def test_the_new_settings_are_strict_and_validated() -> None:
    assert WorldConfig().seed_coupling == 0.31  # our llama.cpp measurement (docs/benchmarks.md)
    with pytest.raises(ValueError, match="momentum_clear_rate"):
        EvolveConfig(momentum_clear_rate=0.7, momentum_muddled_rate=0.4)
    with pytest.raises(ValueError, match="proposer_complience"):
        SimConfig.model_validate({"evolve": {"proposer_complience": 0.5}})
    with pytest.raises(ValueError, match="insight_overlap"):
        WorldConfig(insight_overlap=1.5)
